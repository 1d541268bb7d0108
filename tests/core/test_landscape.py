"""A model's loss landscape (Li et al. 2018), with torch as the oracle."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from autograd_viz.core.descent.landscape import (
    evaluate_plane,
    filter_normalized,
    landscape_in_namespace,
    loss_of_parameters,
    model_landscape,
    parameters_of,
    project,
    random_directions,
    train_path,
)
from autograd_viz.resources import EXAMPLES


class Quadratic(nn.Module):
    """A model whose loss is a known quadratic in its parameters."""

    def __init__(self) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(1)
        self.weight = nn.Parameter(torch.randn(3, 4, generator=g, dtype=torch.float64))
        self.bias = nn.Parameter(torch.randn(3, generator=g, dtype=torch.float64))
        self.target = torch.randn(3, 4, generator=g, dtype=torch.float64)
        self.scale = torch.rand(3, 4, generator=g, dtype=torch.float64) + 0.5

    def forward(self) -> torch.Tensor:
        return (self.scale * (self.weight - self.target) ** 2).sum() + (self.bias**2).sum()


def _regression(dtype=torch.float64):
    torch.manual_seed(0)
    x = torch.randn(32, 3, dtype=dtype)
    y = torch.randn(32, 1, dtype=dtype)
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1)).to(dtype)
    return model, x, y


def test_surface_equals_the_quadratic_and_direct_evaluation() -> None:
    model = Quadratic()
    loss = loss_of_parameters(model, model)  # the model is its own zero-argument loss
    centre = parameters_of(model)
    d1, d2, zeroed = random_directions(centre, seed=3)
    assert zeroed == ["bias"] and not d1["bias"].any()
    axis = torch.linspace(-1, 1, 41, dtype=torch.float64)
    grid = evaluate_plane(loss, centre, d1, d2, axis, axis)
    assert grid.shape == (41, 41)
    for i, j in [(0, 0), (20, 20), (5, 33), (40, 7)]:
        a, b = axis[j], axis[i]
        w = centre["weight"] + a * d1["weight"] + b * d2["weight"]
        closed_form = (model.scale * (w - model.target) ** 2).sum() + (centre["bias"] ** 2).sum()
        assert grid[i, j].item() == pytest.approx(closed_form.item(), abs=1e-6)
        direct = copy.deepcopy(model)
        with torch.no_grad():
            direct.weight.copy_(w)
        assert grid[i, j].item() == pytest.approx(direct().item(), abs=1e-6)


def test_mlp_surface_matches_direct_evaluation() -> None:
    model, x, y = _regression()
    land = model_landscape(model, lambda: nn.functional.mse_loss(model(x), y), steps=0)
    centre = parameters_of(model)
    d1, d2, _ = random_directions(centre, seed=0)
    for i, j in [(0, 40), (20, 20), (13, 29)]:
        a, b = land.alphas[j], land.betas[i]
        moved = copy.deepcopy(model)
        with torch.no_grad():
            for name, p in moved.named_parameters():
                p.copy_(centre[name] + a * d1[name] + b * d2[name])
        expected = nn.functional.mse_loss(moved(x), y).item()
        assert land.grid[i, j].item() == pytest.approx(expected, abs=1e-6)
    assert land.grid[20, 20].item() == pytest.approx(land.centre_loss, abs=1e-12)


def test_filter_normalization_matches_each_filters_norm() -> None:
    conv = nn.Conv2d(2, 4, 3)
    params = parameters_of(nn.Sequential(conv, nn.Flatten(), nn.Linear(4 * 6 * 6, 3)))
    raw = {k: torch.randn_like(v) * 7 for k, v in params.items()}
    d, zeroed = filter_normalized(raw, params)
    for name, p in params.items():
        if p.dim() <= 1:
            assert name in zeroed and not d[name].any()
            continue
        norms_d = d[name].reshape(p.shape[0], -1).norm(dim=1)
        norms_w = p.reshape(p.shape[0], -1).norm(dim=1)
        assert torch.allclose(norms_d, norms_w, rtol=1e-5)
    per_element, zeroed = filter_normalized(raw, params, bias_mode="filter")
    assert not zeroed
    assert torch.allclose(per_element["0.bias"].abs(), params["0.bias"].abs())


def test_directions_are_seeded() -> None:
    centre = parameters_of(_regression()[0])
    first, again, other = (random_directions(centre, seed=s)[0] for s in (5, 5, 6))
    assert all(torch.equal(first[k], again[k]) for k in centre)
    assert not torch.equal(first["0.weight"], other["0.weight"])


def test_projection_recovers_points_in_the_plane() -> None:
    centre = parameters_of(_regression()[0])
    d1, d2, _ = random_directions(centre, seed=1, bias_mode="filter")
    coords = [(0.0, 0.0), (0.3, -0.7), (-1.25, 2.0)]
    snapshots = [{k: centre[k] + a * d1[k] + b * d2[k] for k in centre} for a, b in coords]
    found, share = project(snapshots, centre, d1, d2)
    assert torch.allclose(found, torch.tensor(coords, dtype=torch.float64), atol=1e-9)
    assert torch.allclose(share, torch.ones(3, dtype=torch.float64))


def test_training_path_is_torchs_sgd_and_leaves_the_model_alone() -> None:
    model, x, y = _regression()
    before = parameters_of(model)
    loss = loss_of_parameters(model, lambda: nn.functional.mse_loss(model(x), y))
    snapshots, losses, _ = train_path(loss, before, 0.1, 5)
    reference = copy.deepcopy(model)
    opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    for step in range(5):
        opt.zero_grad()
        value = nn.functional.mse_loss(reference(x), y)
        assert losses[step] == pytest.approx(value.item(), abs=1e-12)
        value.backward()
        opt.step()
    for name, p in reference.named_parameters():
        assert torch.allclose(snapshots[-1][name], p.detach())
    assert all(torch.equal(before[k], v) for k, v in parameters_of(model).items())


def test_namespace_form_and_what_is_missing() -> None:
    model, x, y = _regression(torch.float32)
    namespace = {"model": model, "loss_fn": lambda: nn.functional.mse_loss(model(x), y)}
    result = landscape_in_namespace(namespace, learning_rate=0.2, steps=4, resolution=9)
    json.dumps(result)
    assert len(result["grid"]) == 9 and len(result["path"]) == 5
    assert result["path"][0][:2] == [0.0, 0.0]
    assert result["path"][0][2] == pytest.approx(namespace["loss_fn"]().item())
    assert result["directions"]["zeroed"] == ["0.bias", "2.bias"]
    assert result["thresholds"]["eigenvalues"][0] > 0 and result["caption"]["kind"] == "converges"
    with pytest.raises(LookupError, match="Run your code first: model"):
        landscape_in_namespace({}, steps=1)
    with pytest.raises(LookupError, match=r"no function loss_fn\(\)"):
        landscape_in_namespace({"model": model}, steps=1)


def test_landscape_cli_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "land.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograd_viz",
            "landscape",
            str(EXAMPLES / "loss_landscape.py"),
            "--steps",
            "5",
            "--resolution",
            "11",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert len(data["alphas"]) == 11 and len(data["path"]) == 6
    assert "the loss fell from" in data["caption"]["text"]
