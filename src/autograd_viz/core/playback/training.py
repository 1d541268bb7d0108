"""Gradient health over a training loop, read off the trace's `steps` (no second run).

Per parameter and step: the norm of its `.grad`, the update the step made relative to the
parameter (‖Δp‖ / ‖p‖, where a healthy SGD step is around 1e-3), and the loss. Flags name
the first step a problem appears: vanishing gradients (‖grad‖ < 1e-7), exploding ones
(> 1e4, or not finite), and dead units (rows of a Linear or Conv weight whose gradient is
exactly zero: no sample reached them, as behind a ReLU that is off for every input).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autograd_viz.core.trace import Trace

VANISHING = 1e-7
EXPLODING = 1e4
# Modules whose weight rows are units: a row of zero gradient is a unit no sample reached.
# (An Embedding's rows are tokens: those not in the batch get zero gradient, rightly.)
_UNIT_MODULES = frozenset(
    {"Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
     "ConvTranspose2d", "ConvTranspose3d"}
)  # fmt: skip
VANISH, EXPLODE, DEAD = "vanishing", "exploding", "dead units"


@dataclass(frozen=True)
class Flag:
    """One problem, where it first appears."""

    kind: str  # VANISH, EXPLODE or DEAD
    tensor: str  # the parameter's id
    name: str
    step: int  # 0-based
    value: float  # the gradient's norm, or how many rows were dead
    text: str


@dataclass
class TrainingHealth:
    """Parameters × steps, as the Training view draws them."""

    parameters: list[str] = field(default_factory=list)  # ids, in the order first stepped
    names: list[str] = field(default_factory=list)
    grad_norm: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # NaN: no data
    ratio: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # ‖Δp‖ / ‖p‖
    zero_rows: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    loss: np.ndarray = field(default_factory=lambda: np.zeros(0))
    events: list[int | None] = field(default_factory=list)  # each step's first event
    lines: list[int | None] = field(default_factory=list)
    optimizers: list[str] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)

    @property
    def steps(self) -> int:
        return len(self.events)

    @property
    def detailed_steps(self) -> int:
        """Steps whose events were recorded (the event cap stops the rest's record; their
        norms are kept all the same)."""
        return sum(1 for e in self.events if e is not None)


def training_health(trace: Trace) -> TrainingHealth:
    """The health of every parameter the run's optimizer steps moved."""
    health = TrainingHealth()
    steps = trace.steps
    if not steps:
        return health
    order: dict[str, int] = {}
    for step in steps:
        for entry in step.get("parameters", ()):
            order.setdefault(entry["tensor"], len(order))
    shape = (len(order), len(steps))
    grad, ratio, dead = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
    rows: dict[str, int] = {}
    for s, step in enumerate(steps):
        for entry in step.get("parameters", ()):
            p = order[entry["tensor"]]
            grad[p, s] = _number(entry.get("grad_norm"))
            norm, update = _number(entry.get("norm")), _number(entry.get("update_norm"))
            ratio[p, s] = update / norm if norm and math.isfinite(norm) else np.nan
            if "zero_rows" in entry:
                dead[p, s] = entry["zero_rows"]
                rows[entry["tensor"]] = int(entry.get("rows") or 0)
    health.parameters = list(order)
    health.names = [trace.index.name_of(tid) for tid in order]
    health.grad_norm, health.ratio, health.zero_rows = grad, ratio, dead
    health.loss = np.array([_number(s.get("loss")) for s in steps], dtype=float)
    health.events = [s.get("event") for s in steps]
    health.lines = [s.get("line") for s in steps]
    health.optimizers = [str(s.get("optimizer", "")) for s in steps]
    health.flags = _flags(trace, health, rows)
    return health


def _number(value: Any) -> float:
    """A norm as the trace holds it (null, a float, or "nan"/"inf" strings) as a float."""
    if value is None:
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _flags(trace: Trace, health: TrainingHealth, rows: dict[str, int]) -> list[Flag]:
    flags: list[Flag] = []
    for p, (tid, name) in enumerate(zip(health.parameters, health.names, strict=True)):
        norms = health.grad_norm[p]
        known = ~np.isnan(norms)
        for kind, hits, side, bound, what in (
            (VANISH, known & (norms < VANISHING), "below", VANISHING,
             "the gradient vanished before reaching it"),
            (EXPLODE, known & ((norms > EXPLODING) | ~np.isfinite(norms)), "above",
             EXPLODING, "the gradient exploded"),
        ):  # fmt: skip
            first = np.flatnonzero(hits)
            if first.size:
                s = int(first[0])
                if kind == VANISH and _before_batch_norm(trace, tid):
                    what = (
                        "a BatchNorm right after it subtracts each channel's mean over the"
                        " batch, so this bias cannot change the loss: its gradient is zero"
                        " but for rounding (bias=False saves it)"
                    )
                text = f"{name}: ‖grad‖ = {norms[s]:.2g} at step {s + 1}, {side} {bound:g}: {what}"
                flags.append(Flag(kind, tid, name, s, float(norms[s]), text))
        if _unit_weight(trace, name) and tid in rows:
            zero = health.zero_rows[p]
            hit = np.flatnonzero(~np.isnan(zero) & (zero > 0))
            if hit.size:
                s = int(hit[0])
                n = int(zero[s])
                flags.append(
                    Flag(DEAD, tid, name, s, float(n),
                         f"{name}: {n} of {rows[tid]} units got zero gradient for every"
                         f" sample at step {s + 1} (dead: no input reaches them, as behind"
                         " a ReLU that is off for the whole batch)")
                )  # fmt: skip
    place = {tid: i for i, tid in enumerate(health.parameters)}
    return sorted(flags, key=lambda f: (f.step, f.kind, place[f.tensor]))


def _before_batch_norm(trace: Trace, tid: str) -> bool:
    """Whether leaf `tid` is a bias whose op's result goes straight into a batch norm
    (a Conv2d's bias before a BatchNorm2d): the norm cancels it."""
    if not trace.index.name_of(tid).endswith("bias"):
        return False
    nodes = trace.nodes
    accumulate = {n.id for n in nodes if n.variable == tid}
    ops = {n.id for n in nodes if accumulate.intersection(n.next)}  # Convolution, Addmm
    users: dict[str, list[str]] = {}
    for n in nodes:
        for nxt in ops.intersection(n.next):
            users.setdefault(nxt, []).append(n.name)
    return bool(ops) and all(any("BatchNorm" in name for name in users.get(op, ())) for op in ops)


def _unit_weight(trace: Trace, name: str) -> bool:
    """Whether `name` is the weight of a module whose rows are units (a Linear, a Conv)."""
    path, _, leaf = name.rpartition(".")
    info = trace.modules.get(path)
    return leaf == "weight" and info is not None and info.get("class") in _UNIT_MODULES
