"""Finite differences against autograd, element by element, for any function of tensors.

The same test `torch.autograd.gradcheck` makes (central differences in float64, an entry
passes when |autograd − numerical| ≤ atol + rtol·|numerical|, with gradcheck's defaults),
but instead of a yes or no it keeps every entry of the Jacobian so the two columns can be
read side by side.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch

EPS = 1e-6  # torch.autograd.gradcheck's defaults
ATOL = 1e-5
RTOL = 1e-3
MAX_ENTRIES = 10_000  # output elements × input elements: beyond this a table is no use


@dataclass
class GradientEntry:
    """∂output[output_index] / ∂input[index]: the finite difference and autograd's value."""

    input: str
    index: list[int]
    output_index: list[int]
    numerical: float
    analytical: float
    abs_error: float
    rel_error: float | None  # None where the finite difference is exactly 0
    ok: bool

    @property
    def label(self) -> str:
        """`∂f/∂x[0]`, or `∂f[1]/∂x[0]` for a non-scalar output."""
        out = f"f{self.output_index}" if self.output_index else "f"
        return f"∂{out}/∂{self.input}{self.index if self.index else ''}"


@dataclass
class GradientCheck:
    """Every entry of the Jacobian, computed twice, and whether the two agree."""

    entries: list[GradientEntry]
    output_shape: list[int]
    eps: float = EPS
    atol: float = ATOL
    rtol: float = RTOL
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """All entries agree within atol + rtol·|numerical|."""
        return all(e.ok for e in self.entries)

    @property
    def max_abs_error(self) -> float:
        """The largest |autograd − numerical|."""
        return max((e.abs_error for e in self.entries), default=0.0)

    @property
    def max_rel_error(self) -> float:
        """The largest |autograd − numerical| / |numerical| (where numerical ≠ 0)."""
        return max((e.rel_error for e in self.entries if e.rel_error is not None), default=0.0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, with the summary numbers."""
        data = asdict(self)
        data.update(
            passed=self.passed, max_abs_error=self.max_abs_error, max_rel_error=self.max_rel_error
        )
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GradientCheck:
        """The inverse of `to_dict`."""
        return cls(
            [GradientEntry(**e) for e in data["entries"]],
            list(data["output_shape"]),
            data["eps"],
            data["atol"],
            data["rtol"],
            list(data.get("notes", [])),
        )

    def summary(self) -> str:
        """One line: PASS or FAIL and the largest errors."""
        return (
            f"{'PASS' if self.passed else 'FAIL'}: max abs error {self.max_abs_error:.3g}, "
            f"max rel error {self.max_rel_error:.3g} (an entry passes when |autograd − finite "
            f"difference| ≤ {self.atol:g} + {self.rtol:g}·|finite difference|)"
        )

    def table(self) -> str:
        """The entries as aligned text, one per line, then the summary."""
        width = max([len(e.label) for e in self.entries] + [5])
        lines = [
            f"{'entry':<{width}}  {'finite diff.':>14}  {'autograd':>14}  "
            f"{'abs error':>9}  {'rel error':>9}"
        ]
        for e in self.entries:
            rel = "—" if e.rel_error is None else f"{e.rel_error:.2g}"
            lines.append(
                f"{e.label:<{width}}  {e.numerical:>14.8g}  {e.analytical:>14.8g}  "
                f"{e.abs_error:>9.2g}  {rel:>9}  {'ok' if e.ok else 'MISMATCH'}"
            )
        return "\n".join([*lines, *self.notes, self.summary()])


def parse_value(text: str) -> float | list:
    """One argument's value: `3` → 3.0, `1, 2` → [1.0, 2.0], `[[1, 2], [3, 4]]` as JSON."""
    text = text.strip()
    if text.startswith("["):
        value = json.loads(text)
        as_array = np.asarray(value, dtype=np.float64)  # ValueError unless numbers
        return as_array.tolist()
    values = [float(v) for v in text.split(",") if v.strip()]
    if not values:
        raise ValueError(f"no number in {text!r}")
    return values[0] if len(values) == 1 and "," not in text else values


def parse_point(text: str) -> list:
    """All arguments, separated by `;`: `1, 2; 3` → [[1.0, 2.0], 3.0]."""
    return [parse_value(part) for part in text.split(";") if part.strip()]


def _flat_output(value: Any) -> torch.Tensor:
    import torch

    if not isinstance(value, torch.Tensor):
        raise TypeError(f"the function must return a tensor, not {type(value).__name__}")
    if not (value.is_floating_point() or value.is_complex()):
        raise TypeError(f"the function returned a {value.dtype} tensor: no gradient to check")
    if value.is_complex():
        raise TypeError("complex outputs are not supported here")
    return value.reshape(-1)


def gradient_check(
    fn: Callable[..., torch.Tensor],
    inputs: Sequence[Any],
    names: Sequence[str] | None = None,
    eps: float = EPS,
    atol: float = ATOL,
    rtol: float = RTOL,
) -> GradientCheck:
    """Compare autograd's Jacobian of `fn` at `inputs` with central finite differences.

    Inputs are numbers or tensors; they are copied to float64 leaves that require grad.
    """
    import torch

    leaves = [torch.as_tensor(x, dtype=torch.float64).detach().clone() for x in inputs]
    names = list(names or [])
    names += [f"arg{i}" for i in range(len(names), len(leaves))]
    for leaf in leaves:
        leaf.requires_grad_(True)
    output = fn(*leaves)
    flat = _flat_output(output)
    count = flat.numel() * sum(x.numel() for x in leaves)
    if count > MAX_ENTRIES:
        raise ValueError(f"{count:,} Jacobian entries: too many to list (at most {MAX_ENTRIES:,})")
    notes = []
    analytical = [torch.zeros(flat.numel(), x.numel(), dtype=torch.float64) for x in leaves]
    if flat.requires_grad:
        for j in range(flat.numel()):
            grads = torch.autograd.grad(flat[j], leaves, retain_graph=True, allow_unused=True)
            for k, grad in enumerate(grads):
                if grad is not None:
                    analytical[k][j] = grad.reshape(-1)
    else:
        notes.append(
            "The output has no grad_fn: autograd sees no path from the inputs to it "
            "(.item(), .detach(), .numpy() or torch.no_grad() cut it), so its gradients are 0."
        )
    probes = [x.detach().clone() for x in leaves]
    entries = []
    with torch.no_grad():
        for k, probe in enumerate(probes):
            for i in range(probe.numel()):
                column = _central_difference(fn, probes, k, i, eps)
                for j, n in enumerate(column):
                    a = analytical[k][j, i].item()
                    error = abs(a - n)
                    entries.append(
                        GradientEntry(
                            names[k],
                            _index(i, probe.shape),
                            _index(j, output.shape),
                            n,
                            a,
                            error,
                            error / abs(n) if n != 0 else (0.0 if error == 0 else None),
                            bool(error <= atol + rtol * abs(n)),
                        )
                    )
    return GradientCheck(entries, list(output.shape), eps, atol, rtol, notes)


def _index(flat: int, shape: torch.Size) -> list[int]:
    return [int(v) for v in np.unravel_index(flat, tuple(shape))] if len(shape) else []


def _central_difference(
    fn: Callable[..., torch.Tensor], probes: list[torch.Tensor], k: int, i: int, eps: float
) -> list[float]:
    """(f(x + eps·e_i) − f(x − eps·e_i)) / 2eps for element i of input k, every output."""
    import torch

    values = probes[k].view(-1)
    original = values[i].item()
    values[i] = original + eps
    plus = _flat_output(fn(*probes)).to(torch.float64).clone()
    values[i] = original - eps
    minus = _flat_output(fn(*probes)).to(torch.float64).clone()
    values[i] = original
    return ((plus - minus) / (2 * eps)).tolist()
