"""How a trace crosses from the kernel to the app: compact bytes in the message's buffers.

The trace's JSON form (docs/trace.md) is cut into parts: its head (source, torch, notes,
error…), then its tensors, nodes and events in chunks. Each part is MessagePack bytes and
travels as one binary buffer of the Jupyter message, not inside a giant JSON string. The
parts are one zstd stream, each flushed at a block's end: a part's bytes inflate as soon
as it arrives, and may point back at an earlier part's (an event's numbers are mostly a
tensor's, sent in the tensors' parts). The app inflates and parses one part at a time, on
its worker thread, so no single call (which holds the GIL) runs long enough to freeze the
GUI thread.

What arrives is the trace's JSON form exactly (the test over the fidelity suite checks
it): a part MessagePack would carry differently (a NaN or an infinity, which the JSON form
writes as a string; an int past 64 bits; something MessagePack cannot write) is sent as
strict JSON instead, and a part with a key that is not a string is read back through JSON.

Measured on the 8k-node RNN (2,000 steps, 16 wide; 18,000 events): the JSON string of the
first protocol was 10.9 MB, 600 bytes per event; orjson + zlib parts were 2.2 MB (120 per
event, 0.15 s to encode); these parts are about 1.1 MB (60 per event), encoded in 0.05 s.
One stream instead of a zstd frame per part took the lessons' traces from 86-227 bytes per
event to 81-192 (loss_landscape's events carry the same 64 numbers as its tensors).
"""

from __future__ import annotations

import json
import pickle
import re
from collections.abc import Iterator, Sequence
from typing import Any

import msgpack
import orjson
import zstandard

from autograd_viz.core.trace import Trace, json_safe

__all__ = [
    "WIRE_ENCODING",
    "TraceAssembly",
    "decode_trace",
    "dumps",
    "encode_parts",
    "encode_trace",
    "loads",
]

# Named in every payload: an app that does not know it says so instead of guessing.
WIRE_ENCODING = "msgpack+zstd/2"
# Parts small enough to parse in ~10-20 ms each (the GUI thread waits at most that long for
# the GIL); tensors carry up to 10,000 numbers each, so fewer go in a part.
EVENTS_PER_PART = 2_000
NODES_PER_PART = 2_000
TENSORS_PER_PART = 200
# zstd level 1: on the RNN's events 4x faster than zlib's level 1 and a third smaller.
_LEVEL = 1
# The lists the trace's parts carry after its head, in the order they are sent.
_KINDS = ("tensors", "nodes", "events")
# One letter per part in the payload's "formats": how that part's bytes are written.
_MSGPACK, _JSON = "m", "j"


def dumps(data: Any) -> bytes:
    """Strict JSON bytes of `data` (NaN and infinities as strings, as `Trace.to_json`)."""
    try:
        if not _may_hold_non_finite(data):
            return orjson.dumps(data)
    except (orjson.JSONEncodeError, TypeError):  # an int past 64 bits, a non-str key
        pass
    return json.dumps(json_safe(data), allow_nan=False, separators=(",", ":")).encode()


# A float in a pickle is `G` and its 8 bytes, big-endian: NaN and infinities are the ones
# whose 11 exponent bits are all set. Bytes of a string may match too, which only sends
# that part down the strict path.
_NON_FINITE_FLOAT = re.compile(rb"G[\x7f\xff][\xf0-\xff]")
# The same in MessagePack, where a float64 is the byte 0xcb and its 8 bytes, big-endian.
_NON_FINITE_PACKED = re.compile(rb"\xcb[\x7f\xff][\xf0-\xff]")


def _may_hold_non_finite(data: Any) -> bool:
    """False only when no float in `data` is NaN or infinite (orjson would write null).

    Pickling walks the structure in C and writes each float as raw bytes: for the 8k-node
    RNN's events 0.06-0.18 s, where parsing orjson's bytes back to compare took 0.6-1 s.
    """
    try:
        raw = pickle.dumps(data, protocol=5)
    except Exception:  # something pickle cannot write: the strict path says what
        return True
    return _NON_FINITE_FLOAT.search(raw) is not None


def loads(raw: bytes | memoryview) -> Any:
    """The data of one part's strict JSON bytes. Python's json, not orjson: such a part is
    rare, and orjson reads an int past 64 bits as a float and refuses a lone surrogate
    ("\\ud800", which json.dumps writes for one in a name or a message)."""
    return json.loads(bytes(raw))


def _packed(data: Any) -> tuple[str, bytes]:
    """One part's format letter and bytes: MessagePack when it carries `data` as the JSON
    form does, else strict JSON."""
    try:
        raw = msgpack.packb(data)
    except Exception:  # an int past 64 bits, a lone surrogate, a type it cannot write
        return _JSON, dumps(data)
    # The JSON form writes these as strings. (Two byte searches first: a regular expression
    # over the RNN's 6 MB of events takes 8 ms, these 1 ms.)
    if (b"\xcb\x7f" in raw or b"\xcb\xff" in raw) and _NON_FINITE_PACKED.search(raw):
        return _JSON, dumps(data)
    return _MSGPACK, raw


def _unpacked(fmt: str, raw: bytes) -> Any:
    """The JSON form of one part's data."""
    if fmt == _JSON:
        return loads(raw)
    try:
        return msgpack.unpackb(raw)
    except ValueError as exc:
        if "not allowed for map key" not in str(exc):
            raise
    # A key that is not a string: JSON writes it as one ("1", "null", "true").
    return loads(dumps(msgpack.unpackb(raw, strict_map_key=False)))


def _parts(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def encode_parts(trace: Trace) -> tuple[dict[str, int], Iterator[tuple[str, bytes]]]:
    """How many parts of each kind the trace makes, and the parts themselves, each one's
    format letter and bytes, encoded only as the iterator reaches it (so the kernel can send
    one while it encodes the next, and the app read it meanwhile)."""
    head = trace.to_dict()
    tensors, nodes, events = head.pop("tensors"), head.pop("nodes"), head.pop("events")
    groups = {  # in _KINDS' order
        "tensors": _parts(tensors, TENSORS_PER_PART),
        "nodes": _parts(nodes, NODES_PER_PART),
        "events": _parts(events, EVENTS_PER_PART),
    }

    def parts() -> Iterator[tuple[str, bytes]]:
        stream = zstandard.ZstdCompressor(level=_LEVEL).compressobj()
        items = [head, *(chunk for chunks in groups.values() for chunk in chunks)]
        last = len(items) - 1
        for i, data in enumerate(items):
            fmt, raw = _packed(data)
            # Each part ends a block, so all of it inflates on arrival; the last ends the frame.
            end = (
                zstandard.COMPRESSOBJ_FLUSH_FINISH
                if i == last
                else zstandard.COMPRESSOBJ_FLUSH_BLOCK
            )
            yield fmt, stream.compress(raw) + stream.flush(end)

    return {k: len(v) for k, v in groups.items()}, parts()


def encode_trace(trace: Trace) -> tuple[dict[str, Any], list[bytes]]:
    """The payload's description of the parts (how many of each, each one's format) and
    the parts' bytes."""
    counts, parts = encode_parts(trace)
    formats, buffers = [], []
    for fmt, raw in parts:
        formats.append(fmt)
        buffers.append(raw)
    return {"encoding": WIRE_ENCODING, "parts": counts, "formats": "".join(formats)}, buffers


class TraceAssembly:
    """A trace read a part at a time, as its parts arrive (`add`), then whole (`trace`).

    Reading a part (inflating it, parsing it, making its tensor or node records) happens
    in `add`, so an app reads each part while the kernel still encodes the next. `counts`
    is the payload's `parts`: how many parts of tensors, nodes and events follow the head.
    """

    def __init__(self, counts: dict[str, Any]) -> None:
        self._stream = zstandard.ZstdDecompressor().decompressobj()
        self._kinds = ["head"] + [k for k in _KINDS for _ in range(int(counts.get(k, 0)))]
        self._counts = dict(counts)
        self._trace: Trace | None = None
        self._formats: list[str] = []
        self._problem: str | None = None

    def add(self, fmt: str, buffer: bytes | memoryview) -> None:
        """Read the next part (its format letter and bytes); a part that cannot be read, or
        one more than `counts` said, is remembered and named by `trace`."""
        if self._problem is not None:
            return
        n = len(self._formats)
        self._formats.append(fmt)
        if n >= len(self._kinds):
            self._problem = f"{n + 1} trace parts arrived, {len(self._kinds)} were sent"
            return
        kind = self._kinds[n]
        try:
            data = _unpacked(fmt, self._stream.decompress(buffer))
            if kind == "head":
                self._trace = Trace.from_dict(data)
            elif self._trace is not None:
                # Tensors and nodes become their records (as Trace.from_dict builds them);
                # events stay the plain dicts the trace keeps.
                items = data if kind == "events" else getattr(Trace.from_dict({kind: data}), kind)
                getattr(self._trace, kind).extend(items)
        except (zstandard.ZstdError, ValueError, TypeError, KeyError, AttributeError) as exc:
            self._problem = f"a trace part could not be read: {exc}"  # json's: ValueErrors

    def trace(self, meta: dict[str, Any]) -> Trace:
        """The trace of the parts added, as `meta` (the payload) describes them
        (ValueError for parts it cannot read, or that are not the ones sent)."""
        if meta.get("encoding") != WIRE_ENCODING:
            raise ValueError(f"unknown trace encoding {meta.get('encoding')!r}")
        if self._problem is not None:
            raise ValueError(self._problem)
        counts = meta.get("parts") or {}
        wanted = 1 + sum(int(counts.get(k, 0)) for k in _KINDS)
        arrived = len(self._formats)
        if arrived != wanted or counts != self._counts or self._trace is None:
            raise ValueError(f"{arrived} trace parts arrived, {wanted} were sent")
        if "".join(self._formats) != str(meta.get("formats", "")):
            raise ValueError("the trace's parts are not the ones its payload describes")
        trace, self._trace = self._trace, None
        return trace


def decode_trace(meta: dict[str, Any], buffers: Sequence[bytes | memoryview]) -> Trace:
    """The trace that `encode_trace` sent (ValueError for a payload it cannot read)."""
    assembly = TraceAssembly(meta.get("parts") or {})
    if meta.get("encoding") == WIRE_ENCODING:  # else `trace` names it, no byte read
        formats = str(meta.get("formats", ""))
        for i, buffer in enumerate(buffers):
            assembly.add(formats[i : i + 1], buffer)
    return assembly.trace(meta)
