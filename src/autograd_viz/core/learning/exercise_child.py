"""The child process that runs a learner's code.

`exercise_runner` starts it as `python -P -m autograd_viz --exercise-child` (a frozen
bundle: its own executable with `--exercise-child`; see `core.platform.self_command`), and the
app's entry point (`autograd_viz.cli.main`) hands over to `main` here.

Once torch is imported it says "ready", reads one JSON request from stdin and writes JSON
lines to a private copy of the original stdout; the learner's prints (fd 1 included) are
sent to stderr instead. A "reference" request computes torch's expected values and never
loads a solution; a "check" request loads the solution and sends back what each case's call
returned, encoded (exercise_values), and no verdict: the learner's code can write to that
pipe too, so the parent trusts nothing from it but well-formed values. See
`exercise_runner` for the parent's side.
"""

from __future__ import annotations

import builtins
import contextlib
import faulthandler
import inspect
import json
import linecache
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autograd_viz.core.kernel.limits import apply_process_limits
from autograd_viz.core.learning.exercise_values import encode
from autograd_viz.core.learning.exercises import Case, get_exercise

_OURS = str(Path(__file__).resolve().parents[1])  # core/: its frames are not the learner's
ERROR_LIMIT = 6_000
MESSAGE_LIMIT = 160  # characters of an exception's text in a one-line message

Send = Callable[[dict[str, Any]], None]


def describe_error(exc: BaseException, filename: str) -> dict[str, Any]:
    """message (one line, with the learner's line), error (their traceback) and line."""
    if isinstance(exc, SyntaxError):
        line = exc.lineno if exc.filename == filename else None
        text = "".join(traceback.format_exception_only(type(exc), exc))
    else:
        report = traceback.TracebackException.from_exception(exc)
        report.stack = traceback.StackSummary.from_list(
            [f for f in report.stack if not f.filename.startswith(_OURS)]
        )
        lines = [f.lineno for f in report.stack if f.filename == filename]
        line = lines[-1] if lines else None
        text = "".join(report.format())
    text_of = exc.msg if isinstance(exc, SyntaxError) else str(exc)  # str() repeats the line
    first = (str(text_of).strip().splitlines() or [""])[0]
    if len(first) > MESSAGE_LIMIT:
        first = first[: MESSAGE_LIMIT - 1] + "…"  # the whole text is in the traceback
    message = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    if line is not None:
        message += f" (line {line})"
    return {"message": message, "error": text[-ERROR_LIMIT:], "line": line}


def _load(request: dict[str, Any], send: Send) -> dict[str, Any] | None:
    """Run the learner's source as a module; None (and a load_error sent) if it failed."""
    source, filename = request["source"], request["filename"]
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict[str, Any] = {
        "__name__": "solution",  # a `if __name__ == "__main__":` demo block does not run
        "__file__": filename,
        "__builtins__": builtins,
    }
    try:
        exec(compile(source, filename, "exec"), namespace)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt are the learner's too
        send({"kind": "load_error", **describe_error(exc, filename)})
        return None
    send({"kind": "loaded"})
    return namespace


def _run_case(case: Case, function: Callable, filename: str) -> dict[str, Any]:
    """Call the learner's function on fresh arguments; what it returned, encoded, or how
    it failed. Nothing here decides whether that is right: the parent does."""
    import torch

    torch.manual_seed(0)
    started = time.perf_counter()
    try:
        result = function(*case.arguments())
    except BaseException as exc:
        return {"outcome": "raised", **describe_error(exc, filename)}
    seconds = round(time.perf_counter() - started, 6)
    got = result
    if case.pick is not None and result is not None:
        try:
            got = case.pick(result)
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"[:MESSAGE_LIMIT]
            return {"outcome": "unpicked", "value": encode(result), "message": message,
                    "seconds": seconds}  # fmt: skip
    return {"outcome": "returned", "value": encode(got), "seconds": seconds}


def _reference(request: dict[str, Any], send: Send) -> None:
    """torch's answer for every case, encoded (this process never sees a solution)."""
    import torch

    exercise = get_exercise(request["exercise"])
    values: list[dict[str, Any] | None] = []
    for case in exercise.cases:
        torch.manual_seed(0)
        try:
            values.append(encode(case.reference(*case.arguments())))
        except Exception:
            traceback.print_exc()
            values.append(None)
    send({"kind": "expected", "values": values})


def _check(request: dict[str, Any], send: Send) -> None:
    exercise = get_exercise(request["exercise"])
    namespace = _load(request, send)
    if namespace is None:
        return
    for index, case in enumerate(exercise.cases):
        name = case.function or exercise.function
        function = namespace.get(name)
        if callable(function):
            result = _run_case(case, function, request["filename"])
        else:
            result = {"outcome": "missing", "function": name}
        send({"kind": "case", "index": index, **result})


def _gradcheck(request: dict[str, Any], send: Send) -> None:
    import torch

    from autograd_viz.core.learning.gradcheck import gradient_check

    namespace = _load(request, send)
    if namespace is None:
        return
    name, filename = request["function"], request["filename"]
    function = namespace.get(name)
    if not callable(function):
        send({"kind": "error", "message": f"your code defines no function {name}()"})
        return
    try:
        names = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        names = []
    try:
        inputs = [torch.tensor(value, dtype=torch.float64) for value in request["at"]]
        result = gradient_check(function, inputs, names, **request.get("tolerances", {}))
    except BaseException as exc:
        send({"kind": "error", **describe_error(exc, filename)})
        return
    send({"kind": "gradcheck", "result": result.to_dict()})


def main() -> int:
    """Serve one request; the learner's code may end this process any way it likes."""
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # from here on, anything written to stdout lands in stderr
    faulthandler.enable()  # a segfault prints the learner's line before the process dies
    # The kernel's and `trace`'s memory cap (the parent checked the setting parses).
    with contextlib.suppress(ValueError):
        apply_process_limits()

    def send(message: dict[str, Any]) -> None:
        protocol.write(json.dumps(message, default=str) + "\n")
        protocol.flush()

    import torch

    torch.set_num_threads(1)  # as core.runner.set_torch_threads(1), without loading the tracer
    send({"kind": "ready"})  # torch is loaded: the time limits count from the request on
    request = json.loads(sys.stdin.read())
    handlers = {"reference": _reference, "check": _check, "gradcheck": _gradcheck}
    handler = handlers[request["kind"]]
    handler(request, send)
    send({"kind": "done"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
