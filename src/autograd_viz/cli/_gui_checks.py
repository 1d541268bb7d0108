"""What the GUI launcher checks before it opens a window: each bad flag is one line and
exit 2 instead of a window that fails later (an export over the input file, a .txt
"graph", a window too big to allocate, a kernel connection nobody listens on). Imports no
torch and no Qt."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

from autograd_viz.cli._outputs import output_over_input, unwritable

MAX_SIDE = 7680  # pixels: an 8K side; 30000x30000 asked Qt for 9.1 GB
MIN_SIDE = 200
# A kernel started a moment ago (its connection file is written first) binds its ports
# while it imports: wait this long for one before saying none listens.
KERNEL_WAIT_S = 15.0
_SUFFIXES = {
    "--screenshot": (".png",),
    "--export-graph": (".png", ".svg"),
    "--export-animation": (".gif",),
    "--export-page": (".html", ".htm"),
}

__all__ = ["KERNEL_WAIT_S", "MAX_SIDE", "existing_kernel_problem", "output_problem", "window_size"]


def window_size(text: str) -> tuple[int, int] | str:
    """`WxH` as (width, height), or a one-line reason."""
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        return f"--size wants WxH, e.g. 1400x860, not {text!r}"
    if not (MIN_SIDE <= width <= MAX_SIDE and MIN_SIDE <= height <= MAX_SIDE):
        return f"--size wants each side from {MIN_SIDE} to {MAX_SIDE} pixels, not {text}"
    return width, height


def output_problem(outputs: dict[str, Path | None], source: Path | None) -> str:
    """Why an export flag's path cannot be used (wrong kind of file, the input file, an
    unwritable folder), or ""."""
    if clash := output_over_input(dict(outputs), [source] if source is not None else []):
        return clash
    for flag, path in outputs.items():
        if path is None:
            continue
        if path.suffix.lower() not in _SUFFIXES[flag]:
            kinds = " or ".join(_SUFFIXES[flag])
            return f"{flag} writes {kinds}, not {path.suffix or 'a file without a suffix'}"
        if why := unwritable(path):
            return why
    return ""


def existing_kernel_problem(connection: Path) -> str:
    """Why `--existing CONNECTION.json` names no running kernel (the file missing or not a
    connection file, nothing listening on its shell port), or ""."""
    try:
        info = json.loads(connection.read_text(encoding="utf-8"))
        transport, ip, port = info.get("transport", "tcp"), info["ip"], int(info["shell_port"])
    except OSError as exc:
        return f"--existing {connection}: {exc.strerror or exc}"
    except (ValueError, KeyError, TypeError, AttributeError):
        return f"--existing {connection} is not a Jupyter kernel connection file"
    if transport == "ipc":
        socket_path = f"{ip}-{port}"
        if not os.path.exists(socket_path):
            return f"--existing {connection}: no kernel listens at {socket_path}"
        return ""
    deadline = time.monotonic() + KERNEL_WAIT_S
    while True:
        try:
            with socket.create_connection((ip, port), timeout=2.0):
                return ""
        except OSError:
            if time.monotonic() > deadline:
                return (
                    f"--existing {connection}: no kernel listens at {ip}:{port} "
                    f"(waited {KERNEL_WAIT_S:g} s; start one with `jupyter kernel`)"
                )
            time.sleep(0.2)
