"""The models `bench_peers` times: each builds, steps, and has the shape it is named for."""

from __future__ import annotations

import pytest
import torch
from benchmarks import models, peer_steps
from torch import nn
from torch.nn import functional as F


def _autograd_nodes(root: torch.Tensor) -> int:
    """Distinct nodes reachable from `root.grad_fn`, walked the way the engine sees them."""
    seen: set[int] = set()
    stack = [root.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


def _step_fills_every_grad(w: models.Workload) -> torch.Tensor:
    loss = peer_steps.quick_check(w)
    assert loss.dim() == 0 and torch.isfinite(loss)
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in w.model.parameters())
    return loss


def test_resnet18_has_torchvision_resnet18s_shape() -> None:
    w = models.resnet18(batch=2, side=32)
    assert models.param_count(w.model) == 11_689_512  # torchvision's resnet18()
    convs = [m for m in w.model.modules() if isinstance(m, nn.Conv2d)]
    assert len(convs) == 20  # 1 stem + 16 in the blocks + 3 projections
    assert w.model(w.x).shape == (2, 1000)
    loss = _step_fills_every_grad(w)
    w.model.zero_grad()
    assert torch.equal(loss, F.cross_entropy(w.model(w.x), w.y))


def test_transformer_encoder_is_six_of_torchs_layers() -> None:
    w = models.transformer_encoder(batch=2, seq=8)
    layer = nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True)
    assert len(w.model.layers) == 6
    assert models.param_count(w.model) == 6 * models.param_count(layer)
    assert w.model(w.x).shape == w.x.shape
    _step_fills_every_grad(w)


def test_gpt2_small_shape_counts_124m_params_with_tied_embeddings() -> None:
    with torch.device("meta"):  # the full 12-layer model, shapes only, no 500 MB to fill
        full = models.GPT2(12)
    assert models.param_count(full) == 124_439_808
    assert full.lm_head.weight is full.wte.weight
    hf = pytest.importorskip("transformers")
    with torch.device("meta"):
        reference = hf.GPT2LMHeadModel(hf.GPT2Config())
    assert models.param_count(full) == models.param_count(reference)
    shapes = sorted(tuple(p.shape) for p in full.parameters())
    reference_shapes = sorted(
        # transformers' Conv1D stores a linear layer's weight transposed
        tuple(p.shape) if p.dim() != 2 or "c_" not in name else tuple(p.shape)[::-1]
        for name, p in reference.named_parameters()
    )
    assert shapes == reference_shapes


def test_gpt2_builder_steps_at_two_layers() -> None:
    w = models.gpt2_small(layers=2, seq=8)
    assert len(w.model.h) == 2
    logits = w.model(w.x)
    assert logits.shape == (1, 8, 50257)
    loss = _step_fills_every_grad(w)
    # the LM head's gradient lands in the embedding it shares: both are one tensor
    assert w.model.lm_head.weight.grad is w.model.wte.weight.grad
    # causal: the first position's logits do not depend on later tokens
    changed = w.x.clone()
    changed[0, -1] = (changed[0, -1] + 1) % 50257
    with torch.no_grad():
        assert torch.allclose(w.model(changed)[0, 0], logits[0, 0].detach(), atol=1e-5)
    assert loss.item() == pytest.approx(F.cross_entropy(logits[0], w.y[0]).item(), rel=1e-6)


def test_rnn_builds_four_autograd_nodes_a_step() -> None:
    w = models.rnn(steps=50)
    loss = _step_fills_every_grad(w)
    # 4 per step (two matrix products, add, tanh), the sum, W's and U's AccumulateGrad
    assert _autograd_nodes(loss) == 4 * 50 + 3
    assert torch.equal(loss, w.model(w.x).sum())  # the script's loop is the module's loop


def test_full_rnn_is_the_8k_node_graph() -> None:
    w = models.rnn()
    assert w.x.shape == (2000, 1, 16)
    assert _autograd_nodes(peer_steps.quick_check(w)) == 8003


def test_a_row_is_measured_and_missing_peers_say_not_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(peer_steps, "_installed", lambda peer: False)
    row = peer_steps._row("rnn", models.rnn(steps=10), 1, 1.0)
    assert row.count("not installed") == 2
    # params; ops: zeros, ten times (index, two matmuls, add, tanh), sum; nodes: 4 a step,
    # the sum, two AccumulateGrad
    assert row.split()[5:8] == ["512", "52", "43"]


def test_a_peer_past_its_limit_or_failing_reads_so_in_its_cell() -> None:
    assert peer_steps._cell(("cut", None), 0.1, 3.0) == ("> 3000 (cut)", "> 30×")
    assert peer_steps._cell(("failed", "RuntimeError"), 0.1, 3.0) == ("failed: RuntimeError", "")
    assert peer_steps._cell(("ok", [0.5, ""]), 0.1, 3.0) == ("500", "5×")
