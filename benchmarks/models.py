"""The real-model shapes `bench_peers` compares on, built by hand with random weights.

Nothing is downloaded: torchvision's wheel does not match this torch build, and a bench
that needs the network does not run on the project's machines. Each builder returns a
`Workload`: the model, its input, and the script our capture runs (the same script is the
plain step, so both sides execute the same Python).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

# One training step without an optimizer: forward, a scalar loss, backward.
STEP = "loss = loss_of(model(X), Y)\nloss.backward()\n"

# The RNN's loop lives in the script itself (not in a module's forward) so the trace sees
# 2,000 iterations of one source line, as a user's loop would be. A batch of one keeps
# every product a matrix product (one MmBackward0 each; a vector @ matrix would add an
# unsqueeze and a squeeze node per product).
RNN_STEP = """
h = torch.zeros(X.shape[1], model.W.shape[1])
for t in range(X.shape[0]):
    h = torch.tanh(X[t] @ model.W + h @ model.U)
loss = h.sum()
loss.backward()
"""


@dataclass
class Workload:
    """One benchmark row: a model, its input, the loss the step uses, the step's source."""

    name: str
    model: nn.Module
    x: torch.Tensor
    y: torch.Tensor | None
    loss_of: Callable[[torch.Tensor, Any], torch.Tensor]
    script: str = STEP

    def namespace(self) -> dict[str, Any]:
        """A fresh namespace for one run of the script (the model and data shared)."""
        return {
            "torch": torch,
            "model": self.model,
            "X": self.x,
            "Y": self.y,
            "loss_of": self.loss_of,
            "__name__": "__main__",
        }


def param_count(model: nn.Module) -> int:
    """Distinct parameters (a tied weight counted once, as `transformers` counts GPT-2)."""
    return sum(p.numel() for p in model.parameters())


# --- ResNet-18 shape (He et al. 2015; torchvision's resnet18 layout, 11,689,512 params) ---


class BasicBlock(nn.Module):
    """Two 3×3 convolutions with a skip; a 1×1 projection when the shape changes."""

    def __init__(self, inp: int, out: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inp, out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out)
        self.conv2 = nn.Conv2d(out, out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out)
        self.downsample: nn.Module | None = None
        if stride != 1 or inp != out:
            self.downsample = nn.Sequential(
                nn.Conv2d(inp, out, 1, stride, bias=False), nn.BatchNorm2d(out)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """conv-bn-relu-conv-bn, plus the (projected) input, then relu."""
        skip = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + skip)


class ResNet18(nn.Module):
    """A stem, four stages of two BasicBlocks (64, 128, 256, 512 channels), a classifier."""

    def __init__(self, classes: int = 1000) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        stages, inp = [], 64
        for out, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            stages.append(nn.Sequential(BasicBlock(inp, out, stride), BasicBlock(out, out, 1)))
            inp = out
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.fc = nn.Linear(512, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Image batch (N, 3, H, W) to class logits (N, classes)."""
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def resnet18(batch: int = 2, side: int = 64) -> Workload:
    """ResNet-18 on a small random image batch, cross-entropy against random labels."""
    torch.manual_seed(0)
    return Workload(
        f"ResNet-18 ({batch}×3×{side}×{side})",
        ResNet18(),
        torch.randn(batch, 3, side, side),
        torch.randint(0, 1000, (batch,)),
        F.cross_entropy,
    )


# --- nn.TransformerEncoder, 6 layers ---


def _mean_square(out: torch.Tensor, _target: Any) -> torch.Tensor:
    return out.pow(2).mean()


def transformer_encoder(
    layers: int = 6, width: int = 256, batch: int = 2, seq: int = 32
) -> Workload:
    """torch's own encoder stack (8 heads, 4× feed-forward), loss = mean square output."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(width, 8, 4 * width, dropout=0.0, batch_first=True)
    model = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
    return Workload(
        f"TransformerEncoder ×{layers} ({batch}×{seq}×{width})",
        model,
        torch.randn(batch, seq, width),
        None,
        _mean_square,
    )


# --- GPT-2 small shape (Radford et al. 2019; 124,439,808 params with tied embeddings) ---


class CausalSelfAttention(nn.Module):
    """GPT-2's attention: one projection to q, k, v; causal scaled dot product; out proj."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(width, 3 * width)
        self.c_proj = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(N, T, C) to (N, T, C), each position attending to itself and earlier ones."""
        n, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        q, k, v = (z.view(n, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(out.transpose(1, 2).reshape(n, t, c))


class GPT2Block(nn.Module):
    """Pre-norm residual block: x + attn(ln(x)), then x + mlp(ln(x)) with a tanh GELU."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU("tanh"), nn.Linear(4 * width, width)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """One transformer block."""
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    """Token and position embeddings, `layers` blocks, a final norm, a tied LM head."""

    def __init__(
        self, layers: int = 12, width: int = 768, heads: int = 12, vocab: int = 50257
    ) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(1024, width)
        self.h = nn.Sequential(*(GPT2Block(width, heads) for _ in range(layers)))
        self.ln_f = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied, as in GPT-2
        for module in self.modules():  # GPT-2's init: N(0, 0.02), zero biases
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
        for block in self.h:  # and the residual projections scaled by depth
            nn.init.normal_(block.attn.c_proj.weight, std=0.02 / math.sqrt(2 * layers))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Token ids (N, T) to next-token logits (N, T, vocab)."""
        positions = torch.arange(ids.shape[1], device=ids.device)
        return self.lm_head(self.ln_f(self.h(self.wte(ids) + self.wpe(positions))))


def _next_token_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


def gpt2_small(layers: int = 12, batch: int = 1, seq: int = 32) -> Workload:
    """GPT-2 small's shape (12 layers, 768 wide, 12 heads) on random token ids."""
    torch.manual_seed(0)
    model = GPT2(layers)
    ids = torch.randint(0, 50257, (batch, seq + 1))
    name = f"GPT-2 small shape, {layers} layers ({batch}×{seq} tokens)"
    return Workload(name, model, ids[:, :-1], ids[:, 1:], _next_token_loss)


def gpt2_transformers(batch: int = 1, seq: int = 32) -> Workload | None:
    """`transformers`' own GPT2LMHeadModel(GPT2Config()), random init; None if absent."""
    try:
        from transformers import GPT2Config, GPT2LMHeadModel
    except ImportError:
        return None
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(attn_pdrop=0, embd_pdrop=0, resid_pdrop=0))
    ids = torch.randint(0, 50257, (batch, seq + 1))
    return Workload(
        f"transformers GPT2LMHeadModel ({batch}×{seq} tokens)",
        _Logits(model),
        ids[:, :-1],
        ids[:, 1:],
        _next_token_loss,
    )


class _Logits(nn.Module):
    """A Hugging Face model as tensor in, logits out, so every peer can call it."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Token ids to logits (no cache, no output dict)."""
        return self.model(ids, use_cache=False, return_dict=False)[0]


# --- the 8k-node RNN ---


class UnrolledRNN(nn.Module):
    """h = tanh(x[t] @ W + h @ U), unrolled over the sequence: 4 autograd nodes a step."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.W = nn.Parameter(torch.randn(width, width) * 0.3)
        self.U = nn.Parameter(torch.randn(width, width) * 0.3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (steps, batch, width) to the last hidden state: all the peers see (forward)."""
        h = torch.zeros(x.shape[1], self.W.shape[1])
        for t in range(x.shape[0]):
            h = torch.tanh(x[t] @ self.W + h @ self.U)
        return h


def _total(out: torch.Tensor, _target: Any) -> torch.Tensor:
    return out.sum()


def rnn(steps: int = 2000, width: int = 16) -> Workload:
    """The 8k-node RNN: 2,000 unrolled steps, 16 wide, loss = h.sum()."""
    torch.manual_seed(0)
    return Workload(
        f"RNN, {steps:,} steps × {width}",
        UnrolledRNN(width),
        torch.randn(steps, 1, width),
        None,
        _total,
        RNN_STEP,
    )


# The table's rows in order, by the key a peer's subprocess is told to rebuild.
BUILDERS: dict[str, Callable[[], Workload | None]] = {
    "resnet18": resnet18,
    "encoder": transformer_encoder,
    "gpt2": gpt2_small,
    "gpt2-transformers": gpt2_transformers,
    "rnn": rnn,
}


def workloads() -> Iterator[tuple[str, Workload]]:
    """Every row of the side-by-side table with its key, in the order it prints, built
    one at a time (two 124M-parameter models with their gradients need not be alive
    together); a row whose library is missing is left out."""
    for key, build in BUILDERS.items():
        workload = build()
        if workload is not None:
            yield key, workload
        del workload
