"""Turning torch tensors into JSON-safe numbers for the trace."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import torch

from autograd_viz.core.trace._json import json_number
from autograd_viz.core.trace._model import TensorValue

FULL_DATA_LIMIT = 10_000  # in the trace's tensor list, tensors up to this size travel whole
EVENT_DATA_LIMIT = 64  # in events (one per op, per node, …) only small tensors travel whole
STATS_LIMIT = 1_000_000  # above this many elements an event carries the shape alone
FIRST_VALUES = 8  # how many leading values a summary keeps


def _json_nested(x: Any) -> Any:
    if isinstance(x, list):
        return [_json_nested(v) for v in x]
    return json_number(x)


def _stats(flat: torch.Tensor) -> tuple[Any, Any, float, float]:
    """min, max, mean, norm of a flat, non-empty tensor (magnitudes for complex)."""
    rows = flat.reshape(1, -1)
    low, high, mean, norm = _row_stats(rows).reshape(-1).tolist()
    bounds = _exact_bounds(rows)
    if bounds is not None:
        low, high = bounds[0]
    return low, high, mean, norm


def _exact_bounds(rows: torch.Tensor) -> list[tuple[Any, Any]] | None:
    """Each row's min and max in the tensor's own kind, for integer and bool tensors
    (None for floating and complex ones, whose float64 bounds are exact): a mask's are
    False and True, not 0.0 and 1.0, and an int64 past 2**53 keeps its last digits."""
    if rows.dtype.is_floating_point or rows.is_complex():
        return None
    return [tuple(pair) for pair in torch.stack((rows.amin(dim=1), rows.amax(dim=1))).T.tolist()]


def _row_stats(rows: torch.Tensor) -> torch.Tensor:
    """A (4, rows) float64 tensor: min, max, mean, norm of each row (magnitudes if complex).

    amin/amax are exact in any dtype (torch.aminmax measured 40× slower than the two).
    float32 norms are taken in float32 (redone in float64 if they overflow); means and
    every other dtype in float64.
    """
    values = rows.abs() if rows.is_complex() else rows
    if values.dtype not in (torch.float32, torch.float64):
        values = values.to(torch.float64)
    f64 = torch.float64
    low, high = values.amin(dim=1), values.amax(dim=1)
    norm = torch.linalg.vector_norm(values, dim=1)
    if values.dtype == torch.float32 and bool(torch.isinf(norm).any()):
        norm = torch.linalg.vector_norm(values, dim=1, dtype=f64)
    # The mean accumulates in float64 (a sum of mixed signs cancels); the norm has no
    # cancellation, so float32's own accumulation is accurate to its precision.
    mean = values.mean(dim=1, dtype=f64)
    return torch.stack((low.to(f64), high.to(f64), mean, norm.to(f64)))


def _with_exact_bounds(rows: torch.Tensor, stats: list[list[Any]]) -> list[list[Any]]:
    """`_row_stats` rows (min, max, mean, norm) with an integer or bool tensor's own
    min and max (`_exact_bounds`)."""
    bounds = _exact_bounds(rows)
    if bounds is None:
        return stats
    return [[low, high, *rest] for (low, high), (_, _, *rest) in zip(bounds, stats, strict=True)]


def _data(d: torch.Tensor) -> Any:
    """The nested values (complex numbers as [re, im]); NaN and infinities stay floats
    here and become strings when the trace is serialised (see `json_safe`)."""
    return _json_nested(d.tolist()) if d.is_complex() else d.tolist()


def tensor_value(
    t: torch.Tensor, full_limit: int = FULL_DATA_LIMIT, stats_limit: int | None = None
) -> TensorValue | None:
    """Snapshot a tensor's numbers without touching its autograd history.

    Up to `full_limit` elements the nested values travel whole; beyond `stats_limit`
    (when given) only the shape does.
    """
    try:
        shape = list(t.shape)
        d = _readable(t)
        if d is None:
            return TensorValue(shape=shape, data=None)
        n = d.numel()
        if stats_limit is not None and n > stats_limit:
            return TensorValue(shape=shape, data=None)
        d = d.cpu()
        value = TensorValue(shape=shape, data=_data(d) if n <= full_limit else None)
        if n == 0:
            return value
        flat = d.reshape(-1)
        value.first = _data(flat[:FIRST_VALUES])
        value.min, value.max, value.mean, value.norm = _stats(flat)
        return value
    except Exception:  # an exotic tensor we cannot read must not break the trace
        return None


def _readable(t: torch.Tensor) -> torch.Tensor | None:
    """`t` detached, as a strided tensor whose numbers can be read: a sparse (or other
    non-strided) tensor as a dense copy when that is small enough to make. None for what
    has no numbers to read (meta tensors, layouts without `to_dense`)."""
    d = t.detach()  # reading a detached view records nothing in the graph
    if d.layout is not torch.strided:
        if d.numel() > STATS_LIMIT:
            return None
        try:
            d = d.to_dense()
        except Exception:  # a layout without to_dense (nested, quantized, …)
            return None
    return None if d.device.type == "meta" else d


def event_value(t: Any) -> dict[str, Any] | None:
    """A small snapshot of a tensor for an event (None for a non-tensor).

    Small tensors carry their values (`data`), bigger ones a summary instead, so that
    recording stays cheap next to the op itself.
    """
    if not isinstance(t, torch.Tensor):
        return None
    try:
        if _functorch.is_functorch_wrapped_tensor(t):
            return _unwrapped_value(t)
        if _functorch.is_legacy_batchedtensor(t):  # is_grads_batched: numbers not readable
            return {"shape": list(t.shape), "data": None, "batched": True}
        n = t.numel()
        d = _readable(t) if n <= STATS_LIMIT else None
        if d is None:
            return {"shape": list(t.shape), "data": None}
        d = d.cpu()
        if n <= EVENT_DATA_LIMIT:
            return {"shape": list(d.shape), "data": _data(d)}
        low, high, mean, norm = _stats(d.reshape(-1))
        return {
            "shape": list(d.shape),
            "data": None,
            "min": low,
            "max": high,
            "mean": mean,
            "norm": norm,
        }
    except Exception:
        return None


_functorch = torch._C._functorch


def _unwrapped_value(t: torch.Tensor) -> dict[str, Any] | None:
    """The snapshot of a tensor inside a torch.func transform (vmap, grad), which holds no
    memory of its own: that of the plain tensor behind it. vmap's batch dimensions are
    moved to the front and counted in `batch_dims`."""
    batch_dims = 0
    while _functorch.is_functorch_wrapped_tensor(t):
        bdim = _functorch.maybe_get_bdim(t) if _functorch.is_batchedtensor(t) else None
        t = _functorch.get_unwrapped(t)
        if bdim is not None and bdim >= 0:
            t = t.movedim(bdim, 0)
            batch_dims += 1
    value = event_value(t)
    if value is not None and batch_dims:
        value["batch_dims"] = batch_dims
    return value


SNAPSHOT_BUDGET_BYTES = 256 * 1024 * 1024  # copies held for later summaries, per run
# Rows summarised in one batch, counted as float64: small enough that the batch and
# its temporaries stay in cache and reuse the allocator's memory (at 32 MB every batch
# was a fresh mapping, and summarising took twice as long).
_BATCH_BYTES = 1024 * 1024


class Snapshots:
    """Event snapshots taken cheaply while user code runs, finished in batches afterwards.

    A small CPU tensor's values are read at once (cheaper than copying it). Anything else
    (a tensor bigger than EVENT_DATA_LIMIT, or one on a GPU) is copied as it is now, so
    later in-place changes cannot alter what the event shows: into the next free row of a
    slab of its dtype, device and shape. `finish()` then summarises each slab where it
    lies, one batched min/max/mean/norm instead of five small torch calls (and, on a GPU,
    a device sync) per event. Past `budget_bytes` of slabs, snapshots are summarised on
    the spot instead.

    `recall(t)` shares one snapshot between events that show the same tensor unchanged (a
    parameter after one step and before the next, a gradient leaving one node and entering
    the next). Unchanged means: the same tensor object, the same version counter, and no
    write since that the counter may have missed. The tracer reports those: `changed()`
    for a visible write that bypasses counters (through `.data`, an `out=` argument, any
    in-place op) or code it does not watch (inside `optimizer.step()`); `escaped()` once
    a tensor's memory left torch's sight (`numpy()`, `data_ptr()`, DLPack, storages),
    which turns sharing off for the rest of the run.
    """

    def __init__(self, budget_bytes: int = SNAPSHOT_BUDGET_BYTES) -> None:
        self.budget_bytes = budget_bytes
        self._held = 0
        self._slabs: dict[tuple[Any, ...], _Slab] = {}  # the slab each kind of copy goes to
        self._all: list[_Slab] = []  # every slab, in order
        self._known: dict[int, tuple[Any, int, int, dict[str, Any]]] = {}
        self._epoch = 0
        self._sharing = True

    def changed(self) -> None:
        """Something may have written a tensor without its version counter noticing."""
        self._epoch += 1

    @property
    def sharing(self) -> bool:
        """Whether unchanged tensors still share one snapshot (until something escapes)."""
        return self._sharing

    def escaped(self) -> None:
        """A tensor's memory can now be written from outside torch: share no more."""
        self._sharing = False
        self._known.clear()

    def recall(self, t: Any) -> dict[str, Any] | None:
        """Like `take`, but an unchanged tensor snapshotted before gets the same snapshot."""
        if t is None or not isinstance(t, torch.Tensor):
            return None
        key = id(t)
        known = self._known.get(key)
        try:
            version = t._version
        except Exception:  # an inference tensor keeps no version counter
            return self.take(t)
        if (
            known is not None
            and known[1] == version
            and known[2] == self._epoch
            and known[0]() is t
        ):
            return known[3]
        value = self.take(t)
        if value is not None and self._sharing:
            try:  # noqa: SIM105 (suppress() costs more: this runs for every gradient)
                self._known[key] = (weakref.ref(t), version, self._epoch, value)
            except TypeError:  # a tensor-like without weak references
                pass
        return value

    def take(self, t: Any) -> dict[str, Any] | None:
        """A snapshot of `t` for an event (None for a non-tensor); see the class notes."""
        if not isinstance(t, torch.Tensor):
            return None
        try:
            n = t.numel()
            strided = t.layout is torch.strided
            if n <= EVENT_DATA_LIMIT and strided and t.is_cpu and not t.is_complex():
                return {"shape": list(t.shape), "data": t.tolist()}
            if n > STATS_LIMIT or not strided or t.is_meta:
                return event_value(t)
            key = (t.dtype, t.device, t.shape)
            slab = self._slabs.get(key)
            if slab is None or slab.full():
                nbytes = n * t.element_size()
                rows = _SLAB_ROWS_FIRST if slab is None else slab.size * 4
                rows = max(1, min(rows, _BATCH_BYTES // (8 * n)))
                if self._held + rows * nbytes > self.budget_bytes:
                    return event_value(t)
                self._held += rows * nbytes
                slab = self._slabs[key] = _Slab(t, rows)
                self._all.append(slab)
            return slab.copy(t)
        except Exception:
            return event_value(t)

    def finish(self) -> None:
        """Fill in every pending snapshot: one batched summary per slab."""
        slabs, self._all, self._slabs, self._held = self._all, [], {}, 0
        self._known.clear()
        for slab in slabs:
            slab.finish()


_SLAB_ROWS_FIRST = 4  # a shape seen once costs a small slab; a busy one grows to 1 MB


class _Slab:
    """Rows of one dtype, device and shape that event snapshots are copied into.

    Copying into rows allocated together (instead of one clone per snapshot) saves an
    allocation per event and lets `finish` summarise the rows where they lie.
    """

    def __init__(self, like: torch.Tensor, size: int) -> None:
        self.size = size
        self.data = torch.empty((size, *like.shape), dtype=like.dtype, device=like.device)
        self._rows = self.data.unbind(0)
        self.values: list[dict[str, Any]] = []

    def full(self) -> bool:
        return len(self.values) == self.size

    def copy(self, t: torch.Tensor) -> dict[str, Any]:
        self._rows[len(self.values)].copy_(t.detach())
        value: dict[str, Any] = {"shape": list(t.shape), "data": None}
        self.values.append(value)
        return value

    def finish(self) -> None:
        used = len(self.values)
        rows = self.data[:used].reshape(used, -1)
        n = rows.shape[1]
        try:
            if n <= EVENT_DATA_LIMIT:  # small, but on a device: one transfer for them all
                for value, row in zip(self.values, rows.cpu(), strict=True):
                    value["data"] = _data(row.reshape(value["shape"]))
            elif n:
                stats = _with_exact_bounds(rows, _row_stats(rows).T.tolist())
                for value, (low, high, mean, norm) in zip(self.values, stats, strict=True):
                    value["min"], value["max"], value["mean"], value["norm"] = (
                        low, high, mean, norm,
                    )  # fmt: skip
        except Exception:  # one odd slab must not cost the others: fill its rows one by one
            for value, row in zip(self.values, self._rows, strict=False):
                value.update(event_value(row) or {})


def _in_batches(
    pending: list[tuple[Any, torch.Tensor]],
    finish_batch: Callable[[int, list[tuple[Any, torch.Tensor]]], None],
    fallback: Callable[[Any, torch.Tensor], None],
) -> None:
    """Group (value, tensor) pairs by device, dtype and shape and hand each group to
    `finish_batch` in batches of at most _BATCH_BYTES as float64; a batch that fails is
    filled one by one with `fallback`, so one odd group cannot cost the others."""
    groups: dict[tuple[Any, ...], list[tuple[Any, torch.Tensor]]] = {}
    for value, t in pending:
        groups.setdefault((t.device, t.dtype, t.shape), []).append((value, t))
    for (_, _, shape), items in groups.items():
        n = shape.numel()
        rows_per_batch = max(1, _BATCH_BYTES // (8 * max(n, 1)))
        for start in range(0, len(items), rows_per_batch):
            batch = items[start : start + rows_per_batch]
            try:
                finish_batch(n, batch)
            except Exception:
                for value, t in batch:
                    fallback(value, t)


def _rows(items: list[tuple[Any, torch.Tensor]]) -> torch.Tensor:
    """One row per tensor (all of one shape), in a single copy."""
    return torch.stack([t for _, t in items]).reshape(len(items), -1)


class _DeferredTensorValue(TensorValue):
    """A TensorValue whose nested `data` list is built from a private copy when first read
    (serialising the trace, or a view asking), not while the run is being recorded."""

    @property
    def data(self) -> Any:
        source = self.__dict__.pop("_source", None)
        if source is not None:
            self.__dict__["_data"] = _data(source)
        return self.__dict__.get("_data")

    @data.setter
    def data(self, value: Any) -> None:
        self.__dict__.pop("_source", None)
        self.__dict__["_data"] = value


class TensorValues:
    """End-of-run values (`TensorInfo.value` / `.grad`) for many tensors at once.

    `take` notes a tensor (a small CPU one is read at once); `finish` reads the rest, so
    call it before anything can change them. It summarises all tensors of one device,
    dtype and size together (min, max, mean, norm, first values: a handful of torch calls
    per group instead of per tensor, one host transfer per group on a GPU) and leaves each
    small tensor's nested values to be built when the trace is serialised or read.
    """

    def __init__(self, full_limit: int = FULL_DATA_LIMIT) -> None:
        self.full_limit = full_limit
        self._pending: list[tuple[TensorValue, torch.Tensor]] = []

    def take(self, t: torch.Tensor) -> TensorValue | None:
        """A value for `t`, complete once `finish()` has run (it reads `t` then)."""
        try:
            shape = list(t.shape)
            d = _readable(t)
            if d is None:
                return TensorValue(shape=shape, data=None)
            if d.numel() == 0:
                return TensorValue(shape=shape, data=_data(d.cpu()))
            value = _DeferredTensorValue(shape=shape, data=None)
            self._pending.append((value, d))
            return value
        except Exception:  # an exotic tensor we cannot read must not break the trace
            return None

    def grad(self, t: torch.Tensor) -> TensorValue | None:
        """`.grad` as PyTorch holds it: None where it keeps none (a non-leaf without
        retain_grad, read without the warning a direct read raises)."""
        try:
            if not (t.is_leaf or t.retains_grad):
                return None
            g = t.grad
        except RuntimeError:  # a view torch will not say more of (see capture.grad_fn_of)
            return None
        return None if g is None else self.take(g)

    def finish(self) -> None:
        """Fill in every value taken so far."""
        pending, self._pending = self._pending, []
        _in_batches(pending, self._finish_batch, self._fill_one)

    def _fill_one(self, value: TensorValue, d: torch.Tensor) -> None:
        whole = tensor_value(d, self.full_limit)
        if whole is not None:
            for name in ("data", "min", "max", "mean", "norm", "first"):
                setattr(value, name, getattr(whole, name))

    def _finish_batch(self, n: int, batch: list[tuple[TensorValue, torch.Tensor]]) -> None:
        rows = _rows(batch)  # the copy the values come from
        stats = _with_exact_bounds(rows, _row_stats(rows).T.tolist())
        keep = n <= self.full_limit
        host = (rows if keep else rows[:, :FIRST_VALUES]).cpu()
        firsts = host[:, :FIRST_VALUES]
        firsts = _json_nested(firsts.tolist()) if firsts.is_complex() else firsts.tolist()
        for i, (value, _) in enumerate(batch):
            value.min, value.max, value.mean, value.norm = stats[i]
            value.first = firsts[i]
            if keep:
                value.__dict__["_source"] = host[i].view(value.shape)
