"""What is said of a run as a whole: that nothing ran, that it drew nothing, how it
ended (the canvas's message, the status bar, the console's last line)."""

from __future__ import annotations

from autograd_viz.core.trace import Trace

NO_GRAPH_MESSAGE = "This run left no tensor that requires grad: nothing to draw."
_COMPILE_ERRORS = ("SyntaxError", "IndentationError", "TabError")


def nothing_ran(trace: Trace) -> str | None:
    """The canvas's sentence for a run whose code did not compile, else None."""
    error = trace.error or (trace.errors[0] if trace.errors else None)
    if error is None or error.get("type") not in _COMPILE_ERRORS:
        return None
    if any(e.get("kind") == "run_end" for e in trace.events):
        return None  # the script ran: exec() or compile() inside it raised the SyntaxError
    where = f" on line {error['line']}" if error.get("line") else ""
    return f"Nothing ran: {error['type']}{where}. Fix it and run again (Ctrl+Enter)."


def finished_line(trace: Trace, seconds: float) -> str:
    """The console's line when a run's answer is in: the run's console otherwise ends
    with "▶ Running …", which reads as still running when the script printed nothing."""
    error = trace.error or (trace.errors[0] if trace.errors else None)
    if error is not None:
        where = f" on line {error['line']}" if error.get("line") else ""
        return f"■ Stopped by {error['type']}{where} after {seconds:.2f} s"
    ops, passes = trace.index.count("op"), trace.index.count("backward")
    backward = f"{passes} backward pass{'es' if passes != 1 else ''}"
    return f"✓ Finished in {seconds:.2f} s: {ops:,} ops, {backward}"


def no_graph(trace: Trace) -> str:
    """What the canvas says when a run that ran drew nothing."""
    if not trace.errors:
        return NO_GRAPH_MESSAGE
    error = trace.errors[0]
    where = f" on line {error['line']}" if error.get("line") else ""
    return (
        f"Nothing to draw: the run stopped with {error['type']}{where} before any tensor "
        "that requires grad existed (the console shows why)."
    )
