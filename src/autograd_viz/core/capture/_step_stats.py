"""Gradient health per optimizer step: what the Training view charts, kept apart from the
events so that a long loop still has it once the event cap stopped the detailed record.

For each `optimizer.step()` and each parameter it moved: the norm of its `.grad`, of the
update the step made, and of the parameter after it; for a weight with rows (a Linear's
`[out, in]`), how many rows got a gradient that is exactly zero (a unit no sample reached:
a dead ReLU). Each is one torch reduction on the real tensors, taken with torch functions
off (the step runs unrecorded); the update needs the parameter as it was, copied before
the step and let go of after it.
"""

from __future__ import annotations

from typing import Any

import torch

from autograd_viz.core.trace import json_number

MAX_STEPS = 20_000  # steps kept (a note says when more ran)
MAX_PARAMETERS = 512  # parameters per step kept


class StepStats:
    """Per step: line, optimizer, where its events start, the loss of the backward before
    it, and each parameter's norms (docs/trace.md, `steps`)."""

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self.capped = False
        self.last_loss: float | None = None  # the latest single-number backward root

    def backward_ran(self, roots: list[torch.Tensor]) -> None:
        """A backward started from `roots`: a single number among them is the loss."""
        if len(roots) != 1 or roots[0].numel() != 1:
            return
        try:
            self.last_loss = json_number(float(roots[0].detach().real.reshape(())))
        except Exception:  # a tensor that will not become a number: no loss to chart
            self.last_loss = None

    def before(self, parameters: list[torch.Tensor]) -> list[torch.Tensor | None]:
        """Copies of the parameters the step may move (None past the cap)."""
        if len(self.steps) >= MAX_STEPS:
            self.capped = True
            return [None] * len(parameters)
        return [
            p.detach().clone() if i < MAX_PARAMETERS else None for i, p in enumerate(parameters)
        ]

    def after(
        self,
        line: int | None,
        optimizer: str,
        event: int | None,
        parameters: list[tuple[str, torch.Tensor, torch.Tensor | None]],
    ) -> None:
        """The step has run: (id, parameter, its copy from before) for each it moved."""
        if len(self.steps) >= MAX_STEPS:
            self.capped = True
            return
        norms = [_norms(tid, p, was) for tid, p, was in parameters if was is not None]
        self.steps.append(
            {
                "line": line,
                "optimizer": optimizer,
                "event": event,
                "loss": self.last_loss,
                "parameters": norms,
            }
        )


def _norm(t: torch.Tensor) -> Any:
    t = t.detach()
    # In float64: a float16 model's norms overflow its own range long before they matter.
    norm = (
        torch.linalg.vector_norm(t)
        if t.is_complex()
        else torch.linalg.vector_norm(t, dtype=torch.float64)
    )
    return json_number(float(norm))


def _norms(tid: str, p: torch.Tensor, was: torch.Tensor) -> dict[str, Any]:
    out: dict[str, Any] = {"tensor": tid, "norm": _norm(p), "update_norm": _norm(p.detach() - was)}
    grad = p.grad
    if grad is None or grad.layout != torch.strided:
        out["grad_norm"] = None
        return out
    out["grad_norm"] = _norm(grad)
    if grad.dim() >= 2:
        rows = grad.reshape(grad.shape[0], -1)
        out["rows"] = int(rows.shape[0])
        out["zero_rows"] = int((rows == 0).all(dim=1).sum())
    return out
