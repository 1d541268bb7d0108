"""The loss landscape of a real model (Li et al. 2018, "Visualizing the Loss Landscape of
Neural Nets"): L(θ + α·d1 + β·d2) on a grid, for two random filter-normalized directions
d1, d2 around the current parameters θ, with a training path projected onto that plane.

Every value is the model's own loss, evaluated with `torch.func.functional_call` and
batched over grid points with `torch.func.vmap`.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.func import functional_call, vmap

from autograd_viz.core.descent.paths import (
    Caption,
    Thresholds,
    _rate,
    _steps,
    thresholds_from_eigenvalues,
)

Params = dict[str, torch.Tensor]
ParamsLoss = Callable[[Params], torch.Tensor]
BIAS_MODES = ("zero", "filter")  # the paper's "biasbn" (ignore) and per-element scaling
ELEMENTS_PER_CHUNK = 20_000_000  # grid points × parameters evaluated in one vmap call


class _LossOfModel(nn.Module):
    """Holds the user's model as a submodule, so that functional_call swaps the very
    parameters the user's zero-argument loss closure reads."""

    def __init__(self, model: nn.Module, loss_fn: Callable[[], torch.Tensor]) -> None:
        super().__init__()
        self.model = model
        # Not registered as a submodule, even when the closure is itself a Module.
        object.__setattr__(self, "_loss_fn", loss_fn)

    def forward(self) -> torch.Tensor:
        return self._loss_fn()


class NoParameters(ValueError):
    """The model has no parameters that require grad: there is no landscape to draw."""


def loss_of_parameters(model: nn.Module, loss_fn: Callable[[], torch.Tensor]) -> ParamsLoss:
    """`loss_fn()` as a function of the model's parameters (a name → tensor dict)."""
    holder = _LossOfModel(model, loss_fn)

    def loss(params: Params) -> torch.Tensor:
        return functional_call(holder, {f"model.{k}": v for k, v in params.items()}, ())

    return loss


def closure(
    model: nn.Module,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    criterion: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
) -> Callable[[], torch.Tensor]:
    """The zero-argument loss closure for inputs, targets and a loss function."""
    return lambda: criterion(model(inputs), targets)


def parameters_of(model: nn.Module) -> Params:
    """The model's current parameters, detached (the centre of the landscape)."""
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def filter_normalized(
    direction: Params, params: Params, bias_mode: str = "zero"
) -> tuple[Params, list[str]]:
    """Scale each filter of a direction to the norm of the same filter of the weights.

    A filter is one output row of a weight (dim 0: a Linear's output unit, a Conv's output
    channel). One-dimensional parameters (biases, batch-norm scales) are zeroed, as the
    paper does by default, or with bias_mode="filter" scaled element by element.
    Returns the direction and the names it zeroed.
    """
    if bias_mode not in BIAS_MODES:
        raise ValueError(f"bias_mode must be one of {BIAS_MODES}, not {bias_mode!r}")
    out: Params = {}
    zeroed: list[str] = []
    for name, d in direction.items():
        w = params[name]
        if w.dim() <= 1:
            if bias_mode == "zero":
                out[name] = torch.zeros_like(d)
                zeroed.append(name)
            else:
                out[name] = d / d.abs().clamp_min(1e-10) * w.abs()
            continue
        rows_d = d.reshape(d.shape[0], -1)
        rows_w = w.reshape(w.shape[0], -1)
        scale = rows_w.norm(dim=1) / (rows_d.norm(dim=1) + 1e-10)
        out[name] = (rows_d * scale[:, None]).reshape(d.shape)
    return out, zeroed


def random_directions(
    params: Params, seed: int = 0, bias_mode: str = "zero"
) -> tuple[Params, Params, list[str]]:
    """Two independent Gaussian directions, filter-normalized; the same seed gives the same
    directions on every device (they are drawn on the cpu)."""
    generator = torch.Generator().manual_seed(seed)

    def draw() -> Params:
        return {
            name: torch.randn(p.shape, generator=generator, dtype=torch.float64).to(p)
            for name, p in params.items()
        }

    d1, zeroed = filter_normalized(draw(), params, bias_mode)
    d2, _ = filter_normalized(draw(), params, bias_mode)
    return d1, d2, zeroed


def evaluate_plane(
    loss: ParamsLoss,
    centre: Params,
    d1: Params,
    d2: Params,
    alphas: torch.Tensor,
    betas: torch.Tensor,
) -> torch.Tensor:
    """The loss at θ + α·d1 + β·d2 for every (β, α) of the grid: a (len(betas), len(alphas))
    tensor, from one vmapped functional_call per chunk of grid points."""
    grid_b, grid_a = torch.meshgrid(betas, alphas, indexing="ij")
    a, b = grid_a.reshape(-1), grid_b.reshape(-1)

    def at(alpha: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
        return loss({k: centre[k] + alpha * d1[k] + beta * d2[k] for k in centre})

    size = max(1, sum(p.numel() for p in centre.values()))
    chunk = max(1, min(len(a), ELEMENTS_PER_CHUNK // size))
    with torch.no_grad():
        try:
            values = vmap(at, chunk_size=chunk)(a, b)
        except Exception:
            # vmap cannot batch everything user code may do (.item(), data-dependent ifs):
            # one call per point then, which raises the user's own error if there is one.
            values = torch.stack([at(ai, bi) for ai, bi in zip(a, b, strict=True)])
    return values.reshape(grid_a.shape)


def _flat(params: Params, names: Sequence[str]) -> torch.Tensor:
    return torch.cat([params[n].reshape(-1).to(torch.float64) for n in names])


def project(
    snapshots: Sequence[Params], centre: Params, d1: Params, d2: Params
) -> tuple[torch.Tensor, torch.Tensor]:
    """Least-squares (α, β) of each snapshot's θ − θ₀ on the plane of d1, d2, and the share
    of that displacement the plane holds (1 where it lies in the plane; 1 at θ₀ itself)."""
    names = list(centre)
    basis = torch.stack([_flat(d1, names), _flat(d2, names)], dim=1)  # (P, 2)
    moves = torch.stack([_flat(s, names) - _flat(centre, names) for s in snapshots], dim=1)
    coords = torch.linalg.lstsq(basis.cpu(), moves.cpu()).solution  # (2, n)
    in_plane = (basis.cpu() @ coords).norm(dim=0)
    total = moves.cpu().norm(dim=0)
    share = torch.where(total > 0, in_plane / total.clamp_min(1e-300), torch.ones_like(total))
    return coords.T, share


def train_path(
    loss: ParamsLoss, centre: Params, learning_rate: float, steps: int
) -> tuple[list[Params], list[float], list[float]]:
    """`steps` steps of the real torch.optim.SGD from θ₀ on copies of the parameters (the
    user's model is left as it is): the snapshots, the loss and ‖∇L‖ at each."""
    params = {k: v.detach().clone().requires_grad_(True) for k, v in centre.items()}
    optimizer = torch.optim.SGD(list(params.values()), lr=learning_rate)
    snapshots, losses, grad_norms = [], [], []
    for step in range(steps + 1):
        optimizer.zero_grad()
        value = loss(params)
        value.backward()
        snapshots.append({k: v.detach().clone() for k, v in params.items()})
        losses.append(float(value.detach()))
        grad_norms.append(
            math.sqrt(sum(float((p.grad**2).sum()) for p in params.values() if p.grad is not None))
        )
        if step == steps or not math.isfinite(losses[-1]):
            break
        optimizer.step()
    return snapshots, losses, grad_norms


def top_hessian_eigenvalue(
    loss: ParamsLoss, centre: Params, iterations: int = 40, seed: int = 0
) -> float:
    """The Hessian's eigenvalue of largest magnitude at θ₀, by power iteration on
    Hessian-vector products (double backward); the Hessian itself is never formed."""
    params = {k: v.detach().clone().requires_grad_(True) for k, v in centre.items()}
    grads = torch.autograd.grad(loss(params), list(params.values()), create_graph=True)
    generator = torch.Generator().manual_seed(seed)
    v = [torch.randn(p.shape, generator=generator, dtype=torch.float64).to(p) for p in grads]
    value = 0.0
    for _ in range(iterations):
        norm = math.sqrt(sum(float((x**2).sum()) for x in v))
        if norm == 0:
            return 0.0
        v = [x / norm for x in v]
        hv = torch.autograd.grad(grads, list(params.values()), grad_outputs=v, retain_graph=True)
        value = sum(float((x * h).sum()) for x, h in zip(v, hv, strict=True))
        v = [h.detach() for h in hv]
    return value


@contextlib.contextmanager
def evaluation_mode(model: nn.Module) -> Iterator[None]:
    """model.eval() for the duration (dropout off, batch-norm statistics frozen, as the paper
    evaluates), then every submodule's own mode back."""
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        yield
    finally:
        for m, training in modes:
            m.train(training)


def describe_training(losses: Sequence[float], learning_rate: float) -> Caption:
    """What the training path did to the model's real loss."""
    lr = f"lr = {_rate(learning_rate)}"
    steps = len(losses) - 1
    first, last = losses[0], losses[-1]
    if not all(math.isfinite(v) for v in losses):
        return Caption("diverges", f"{lr} — the loss blew up after {_steps(steps)}", None)
    if last > first:
        return Caption(
            "diverges",
            f"{lr} — too large: the loss rose from {first:.4g} to {last:.4g} in {_steps(steps)}",
            None,
        )
    return Caption(
        "converges", f"{lr} — the loss fell from {first:.4g} to {last:.4g} in {_steps(steps)}", None
    )


@dataclass(frozen=True)
class Landscape:
    """The surface around θ₀ and the training path on it."""

    alphas: torch.Tensor
    betas: torch.Tensor
    grid: torch.Tensor  # loss[β, α]
    centre_loss: float
    path: torch.Tensor  # (steps + 1, 3): α, β, the model's real loss
    in_plane: torch.Tensor  # share of each step's displacement the plane holds
    grad_norms: list[float]
    caption: Caption
    thresholds: Thresholds
    parameters: int
    zeroed: list[str]


def model_landscape(
    model: nn.Module,
    loss_fn: Callable[[], torch.Tensor],
    learning_rate: float = 0.1,
    steps: int = 20,
    resolution: int = 41,
    span: float = 1.0,
    seed: int = 0,
    bias_mode: str = "zero",
) -> Landscape:
    """The landscape around the model's current parameters and an SGD path from them.

    The grid covers α, β ∈ [−span, span], widened to hold the projected path."""
    with evaluation_mode(model):
        loss = loss_of_parameters(model, loss_fn)
        centre = parameters_of(model)
        if not centre:
            raise NoParameters("the model has no parameters")
        d1, d2, zeroed = random_directions(centre, seed, bias_mode)
        snapshots, losses, grad_norms = train_path(loss, centre, learning_rate, steps)
        coords, share = project(snapshots, centre, d1, d2)
        finite = coords[torch.isfinite(coords).all(dim=1)]
        reach = float(finite.abs().max()) * 1.15 if len(finite) else 0.0
        half = max(span, reach if reach < 100 * span else span)
        dtype = next(iter(centre.values())).dtype
        device = next(iter(centre.values())).device
        axis = torch.linspace(-half, half, resolution, dtype=dtype, device=device)
        grid = evaluate_plane(loss, centre, d1, d2, axis, axis)
        top = top_hessian_eigenvalue(loss, centre, seed=seed)
    path = torch.column_stack([coords, torch.tensor(losses, dtype=torch.float64)])
    thresholds = thresholds_from_eigenvalues(
        [top],
        (),
        "parameters",
        False,
        "at the model's current parameters (its largest eigenvalue, by power iteration)",
    )
    return Landscape(
        axis.cpu(),
        axis.cpu(),
        grid.cpu(),
        losses[0],
        path,
        share,
        grad_norms,
        describe_training(losses, learning_rate),
        thresholds,
        sum(p.numel() for p in centre.values()),
        zeroed,
    )


def _find(namespace: dict[str, Any], model: str, loss: str) -> tuple[nn.Module, Callable]:
    net = namespace.get(model)
    fn = namespace.get(loss)
    if not isinstance(net, nn.Module):
        what = "nothing" if net is None else f"a {type(net).__name__}"
        raise LookupError(
            f"Run your code first: {model} in the kernel is {what}, not an nn.Module "
            f"(define {model} = nn.Sequential(…) and def {loss}(): return …)"
        )
    if not callable(fn) or isinstance(fn, nn.Module):
        raise LookupError(
            f"Run your code first: no function {loss}() in the kernel (a zero-argument "
            f"closure returning the loss, e.g. def {loss}(): return F.mse_loss({model}(x), y))"
        )
    return net, fn


def landscape_in_namespace(
    namespace: dict[str, Any],
    model: str = "model",
    loss: str = "loss_fn",
    learning_rate: float = 0.1,
    steps: int = 20,
    resolution: int = 41,
    span: float = 1.0,
    seed: int = 0,
    bias_mode: str = "zero",
) -> dict[str, Any]:
    """Runs in the kernel (or the CLI): the landscape of `model` under `loss_fn()` as JSON."""
    net, fn = _find(namespace, model, loss)
    land = model_landscape(net, fn, learning_rate, steps, resolution, span, seed, bias_mode)
    device = next(iter(net.parameters())).device
    t = land.thresholds
    return {
        "kind": "model",
        "device": str(device),
        "parameters": land.parameters,
        "directions": {"seed": seed, "bias_mode": bias_mode, "zeroed": land.zeroed},
        "learning_rate": learning_rate,
        "alphas": land.alphas.tolist(),
        "betas": land.betas.tolist(),
        "grid": land.grid.tolist(),
        "centre_loss": land.centre_loss,
        "path": land.path.tolist(),
        "in_plane": land.in_plane.tolist(),
        "grad_norms": land.grad_norms,
        "caption": {"kind": land.caption.kind, "text": land.caption.text},
        "thresholds": {
            "eigenvalues": list(t.eigenvalues),
            "one_step": t.one_step,
            "bounce": t.bounce,
            "note": t.note,
        },
    }
