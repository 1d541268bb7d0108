"""Limits a process that runs user code puts on itself (the kernel, the `trace` child).

A memory bomb then fails inside the process, as a clean `MemoryError` or torch's
"DefaultCPUAllocator: can't allocate memory", instead of dragging the whole machine into
swap or the kernel's OOM killer. A very deep autograd graph gets room to be freed.
"""

from __future__ import annotations

import os
import sys
from typing import Any

MEMORY_ENV = "AUTOGRAD_VIZ_KERNEL_MEMORY_MB"
DEFAULT_MEMORY_FRACTION = 0.75  # of physical memory, when MEMORY_ENV is not set
# Freeing a chain of ~50,000 autograd nodes whose grad_fn Python has touched recurses in
# C++ deeper than the usual 8 MB stack (PyTorch 2.x segfaults). The main thread's stack grows
# on demand up to the soft limit, so raising that limit lets such a graph be freed.
STACK_BYTES = 1 << 30

_OFF = {"0", "off", "none", "no", "unlimited"}
_applied: dict[str, Any] = {}


def physical_memory() -> int | None:
    """Bytes of physical memory, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def memory_limit(setting: str | None = None) -> int | None:
    """The memory limit in bytes that `setting` (default: $AUTOGRAD_VIZ_KERNEL_MEMORY_MB) asks
    for: a number of MB, "off"/"0" for none, unset or "" for 75% of physical memory."""
    text = (os.environ.get(MEMORY_ENV, "") if setting is None else setting).strip().lower()
    if text in _OFF:
        return None
    if not text:
        total = physical_memory()
        return int(total * DEFAULT_MEMORY_FRACTION) if total else None
    try:
        megabytes = float(text)
    except ValueError:
        raise ValueError(f"{MEMORY_ENV}={text!r}: give a number of MB, or 'off'") from None
    return int(megabytes * (1 << 20)) if megabytes > 0 else None


def _lower_soft_limit(kind: int, limit: int) -> int | None:
    import resource

    soft, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft != resource.RLIM_INFINITY and soft <= limit:
        return soft  # already as strict: never loosen what the user's shell set
    resource.setrlimit(kind, (limit, hard))
    return limit


def limit_memory(limit: int | None) -> int | None:
    """Cap this process's memory at `limit` bytes; the limit applied (None: none).

    Linux counts RLIMIT_DATA in the memory a process has asked to write to (heap, anonymous
    mappings), which is what a runaway allocation grows. RLIMIT_AS, the usual choice, also
    counts address space that is only reserved, which CUDA reserves by the hundreds of GB,
    so it would break GPU kernels. Elsewhere RLIMIT_AS is the best there is.
    """
    if limit is None:
        return None
    try:
        import resource
    except ImportError:  # Windows: no rlimits
        return None
    kind = resource.RLIMIT_DATA if sys.platform.startswith("linux") else resource.RLIMIT_AS
    try:
        return _lower_soft_limit(kind, limit)
    except (ValueError, OSError):
        return None


def raise_stack_limit(size: int = STACK_BYTES) -> int | None:
    """Let the main thread's stack grow to `size` bytes (or the hard limit); the soft limit."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
        if soft == resource.RLIM_INFINITY or soft >= size:
            return soft
        new = size if hard == resource.RLIM_INFINITY else min(size, hard)
        resource.setrlimit(resource.RLIMIT_STACK, (new, hard))
        return new
    except (ImportError, ValueError, OSError):
        return None


def apply_process_limits() -> dict[str, Any]:
    """Apply the memory cap and the deep stack; say what was applied (MB, None for none)."""
    applied = limit_memory(memory_limit())
    raise_stack_limit()
    _applied["memory_limit_mb"] = None if applied is None else applied >> 20
    return dict(_applied)


def applied_memory_limit_mb() -> int | None:
    """The memory cap apply_process_limits() set in this process, in MB (None: none)."""
    return _applied.get("memory_limit_mb")


_OUT_OF_MEMORY_TYPES = {"MemoryError", "OutOfMemoryError"}
_OUT_OF_MEMORY_TEXT = ("can't allocate memory", "out of memory", "cannot allocate memory")


def is_out_of_memory(error: dict[str, Any] | None) -> bool:
    """Whether a trace's error event is an allocation that failed (CPU or CUDA)."""
    if not error:
        return False
    if error.get("type") in _OUT_OF_MEMORY_TYPES:
        return True
    message = str(error.get("message", "")).lower()
    return error.get("type") == "RuntimeError" and any(t in message for t in _OUT_OF_MEMORY_TEXT)


def memory_limit_words(who: str = "this process") -> str:
    """What the memory cap is and how to change it, as a clause: "the kernel may use…"."""
    limit = applied_memory_limit_mb()
    if not limit:
        return f"{who} has no memory limit of ours ({MEMORY_ENV} sets one, in MB)"
    return f"{who} may use at most {limit:,} MB ({MEMORY_ENV} sets the limit, in MB or 'off')"
