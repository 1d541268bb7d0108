"""Reading a trace file someone else wrote (`autograd-viz trace --json`): untrusted input.

Its size is capped before anything is parsed, its JSON parsed in one call, and every key
a view reads is checked for the type docs/trace.md gives it before a `Trace` is built. A
file that fails any check raises `TraceFileError` with one line a person can act on
("run.json: nodes[3].next must be a list of node ids"), never a traceback. Events are
checked for a kind only: the index reads each kind's keys defensively and shows an event
it cannot read as such (core/trace/index.py), as it does for a live run's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from autograd_viz.core.trace._model import TRACE_VERSION, Trace

MAX_FILE_BYTES = 512 * 2**20  # 23 MB for the 8k-node RNN; 2 million events fit
MAX_ITEMS = 5_000_000  # events, tensors or nodes


class TraceFileError(ValueError):
    """A trace file that cannot be opened, with the one-line reason."""


def read_trace(path: str | Path) -> Trace:
    """The trace in the JSON file at `path` (TraceFileError, one line, when it is not one)."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise TraceFileError(f"{path.name}: {exc.strerror or exc}") from None
    if size > MAX_FILE_BYTES:
        raise TraceFileError(
            f"{path.name} is {size / 2**20:.0f} MB; traces over {MAX_FILE_BYTES // 2**20} MB"
            " are not opened"
        )
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise TraceFileError(f"{path.name}: {exc.strerror or exc}") from None
    return trace_from_bytes(raw, path.name)


def trace_from_bytes(raw: bytes, name: str = "the trace") -> Trace:
    """The trace these JSON bytes hold (TraceFileError when they hold none)."""
    if len(raw) > MAX_FILE_BYTES:
        raise TraceFileError(f"{name} is over {MAX_FILE_BYTES // 2**20} MB")
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise TraceFileError(f"{name} is not JSON: {exc.msg} (line {exc.lineno}, column"
                             f" {exc.colno})") from None  # fmt: skip
    _check(data, name)
    try:
        return Trace.from_dict(data)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:  # what checks missed
        raise TraceFileError(f"{name} is not a trace this version can read: {exc}") from None


def _fail(name: str, where: str, what: str) -> TraceFileError:
    return TraceFileError(f"{name}: {where} must be {what}")


def _check(data: Any, name: str) -> None:
    if not isinstance(data, dict) or not isinstance(data.get("events"), list):
        raise TraceFileError(
            f"{name} is JSON but not a trace (written by `autograd-viz trace --json`?)"
        )
    version = data.get("version", TRACE_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _fail(name, "version", "a whole number from 1")
    if version > TRACE_VERSION:
        raise TraceFileError(
            f"{name} was written by a newer autograd-viz (trace version {version}; this one"
            f" reads up to {TRACE_VERSION}): update autograd-viz to open it"
        )
    for key, kind in (
        ("source", str), ("torch", str), ("device", str), ("script", (str, type(None))),
        ("recorded_at", (str, type(None))),
        ("error", (dict, type(None))), ("modules", dict), ("truncated", bool),
    ):  # fmt: skip
        if key in data and not isinstance(data[key], kind):
            raise _fail(name, key, _words(kind))
    for key in ("tensors", "nodes", "notes", "loops", "steps"):
        if key in data and not isinstance(data[key], list):
            raise _fail(name, key, "a list")
    for key in ("events", "tensors", "nodes"):
        if len(data.get(key) or ()) > MAX_ITEMS:
            raise TraceFileError(f"{name} has over {MAX_ITEMS:,} {key}; it is not opened")
    if not all(isinstance(n, str) for n in data.get("notes") or ()):
        raise _fail(name, "notes", "a list of strings")
    for i, e in enumerate(data["events"]):
        if not isinstance(e, dict) or not isinstance(e.get("kind"), str):
            raise _fail(name, f"events[{i}]", "an object with a kind")
    for i, t in enumerate(data.get("tensors") or ()):
        _check_tensor(t, name, f"tensors[{i}]")
    ids = set()
    for i, n in enumerate(data.get("nodes") or ()):
        _check_node(n, name, f"nodes[{i}]")
        ids.add(n["id"])
    for i, n in enumerate(data.get("nodes") or ()):
        if any(m not in ids for m in n.get("next") or ()):
            raise _fail(name, f"nodes[{i}].next", "ids of nodes in the trace")
    for i, m in enumerate(data.get("modules", {}).values()):
        if not isinstance(m, dict):
            raise _fail(name, f"modules (entry {i + 1})", "objects")
    for key in ("loops", "steps"):
        for i, item in enumerate(data.get(key) or ()):
            if not isinstance(item, dict):
                raise _fail(name, f"{key}[{i}]", "an object")


_OPTIONAL_ID = (str, type(None))


def _check_tensor(t: Any, name: str, where: str) -> None:
    if not isinstance(t, dict) or not isinstance(t.get("id"), str):
        raise _fail(name, where, "an object with an id")
    shape = t.get("shape", [])
    if not isinstance(shape, list) or not all(_count(n) for n in shape):
        raise _fail(name, f"{where}.shape", "a list of sizes")
    for key, kind in (
        ("name", _OPTIONAL_ID), ("dtype", str), ("device", str), ("grad_fn", _OPTIONAL_ID),
        ("requires_grad", bool), ("is_leaf", bool), ("retains_grad", bool),
        ("value", (dict, type(None))), ("grad", (dict, type(None))), ("aliases", list),
    ):  # fmt: skip
        if key in t and not isinstance(t[key], kind):
            raise _fail(name, f"{where}.{key}", _words(kind))
    for key in ("value", "grad"):
        value = t.get(key)
        if isinstance(value, dict):
            values_shape = value.get("shape", [])
            if not isinstance(values_shape, list) or not all(_count(n) for n in values_shape):
                raise _fail(name, f"{where}.{key}.shape", "a list of sizes")


def _check_node(n: Any, name: str, where: str) -> None:
    if not isinstance(n, dict) or not isinstance(n.get("id"), str):
        raise _fail(name, where, "an object with an id")
    if not isinstance(n.get("name", ""), str):
        raise _fail(name, f"{where}.name", "a string")
    for key in ("tensor", "variable"):
        if not isinstance(n.get(key), _OPTIONAL_ID):
            raise _fail(name, f"{where}.{key}", "a tensor id or null")
    nexts = n.get("next", [])
    if not isinstance(nexts, list) or not all(isinstance(m, str) for m in nexts):
        raise _fail(name, f"{where}.next", "a list of node ids")
    for key in ("next_nr", "next_input"):
        numbers = n.get(key, [])
        if not isinstance(numbers, list) or not all(_count(m) for m in numbers):
            raise _fail(name, f"{where}.{key}", "a list of whole numbers")
    saved = n.get("saved")
    if saved is not None and (
        not isinstance(saved, list) or not all(isinstance(s, str) for s in saved)
    ):
        raise _fail(name, f"{where}.saved", "a list of names")
    entries = n.get("saved_tensors", [])
    if not isinstance(entries, list) or not all(_saved_entry(e) for e in entries):
        raise _fail(name, f"{where}.saved_tensors", "a list of saved tensors")
    for key in ("made_at", "released_at"):
        if key in n and n[key] is not None and not _count(n[key]):
            raise _fail(name, f"{where}.{key}", "an event index")


def _saved_entry(e: Any) -> bool:
    return (
        isinstance(e, dict)
        and isinstance(e.get("name"), str)
        and isinstance(e.get("shape"), list)
        and _count(e.get("bytes"))
        and isinstance(e.get("storage"), _OPTIONAL_ID)
        and isinstance(e.get("tensor"), _OPTIONAL_ID)
    )


def _count(n: Any) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n >= 0


def _words(kind: Any) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {str: "a string", bool: "true or false", dict: "an object", list: "a list"}
    return " or ".join("null" if k is type(None) else names.get(k, k.__name__) for k in kinds)
