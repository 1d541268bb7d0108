"""A learner's code in a child Python process, seen from the parent.

`run_check` and `run_gradient_check` start the app again as a child process,
`python -P -m autograd_viz --exercise-child` (a frozen bundle runs its own executable with
`--exercise-child`; see `core.platform.self_command`), with this package first on its PYTHONPATH.
Each child says "ready" once torch is imported; the parent then writes one JSON request to
its stdin and reads JSON lines back, each within a time limit.

A check uses two children that never meet. The reference child computes torch's expected
values (it is given no solution) and is gone before the solution's child receives the
learner's code; that child only calls the learner's functions and sends back what they
returned, as typed plain data (exercise_values). This process validates every line (a
strict schema, a length cap) and makes every comparison itself, so nothing the solution
does in its own process (patching numpy or our comparisons, reading our frames, writing
forged lines to the pipe) can turn a wrong answer into a pass. Whatever the learner's code
prints goes to the child's stderr, which the parent keeps as the run's output.

A solution that loops forever is killed when its step runs out of time; one that calls
`os._exit` or segfaults ends the child. Either way the parent reports that case as failed
with the reason, marks the rest as not run, and returns normally. When the check ends, every
process the solution started is ended too, a double-forked `setsid` daemon included (it
carries the run's mark: core.platform.process_tree), and an ended child is noticed by its
exit, not by its pipes closing (a daemon may hold them open).
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from autograd_viz.core.learning.exercise_values import MAX_MESSAGE_BYTES
from autograd_viz.core.learning.exercise_verdicts import (
    ProtocolError,
    expected_values,
    judge,
    load_reply,
    shown,
    verified_gradient_check,
)
from autograd_viz.core.learning.exercises import (
    DEFAULT_TIMEOUT,
    CaseResult,
    CheckResult,
    Exercise,
    get_exercise,
)
from autograd_viz.core.learning.gradcheck import GradientCheck
from autograd_viz.core.platform.process_tree import RUN_MARK, end_processes, new_run_mark
from autograd_viz.core.platform.self_command import self_command

PROTOCOL = 1
STARTUP_LIMIT = 90.0  # importing torch and computing the expected values (not the learner's time)
OUTPUT_LIMIT = 20_000  # characters of the solution's output kept
ERROR_LIMIT = 6_000  # characters of a traceback kept
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[3])  # src/, holding autograd_viz
_TIMEOUT, _ENDED, _MALFORMED = "timeout", "ended", "malformed"
POLL_S = 0.05  # how often a wait for a message also looks whether the child has ended
DRAIN_S = 0.5  # after the child ended, how long what it wrote last may take to come through


class SolutionError(Exception):
    """The learner's code could not be run as asked (it raised, hung or crashed)."""

    def __init__(self, message: str, error: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message, self.error, self.line = message, error, line


# ---- the parent's side ---------------------------------------------------------------
class _Child:
    """A running child: its protocol messages in a queue, its output collected."""

    def __init__(self) -> None:
        env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONFAULTHANDLER="1")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
        self.mark = env[RUN_MARK] = new_run_mark()  # whatever the solution starts inherits it
        self.process = subprocess.Popen(
            self_command("--exercise-child"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=os.name == "posix",  # so a kill reaches what the solution started
        )
        self.messages: queue.Queue[dict | None] = queue.Queue()
        self._output: list[str] = []
        self._size = 0
        self._readers = [
            threading.Thread(target=self._read_messages, daemon=True),
            threading.Thread(target=self._read_output, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def send(self, request: dict[str, Any]) -> None:
        """Write the one request (after the child said it is ready)."""
        try:
            self.process.stdin.write(json.dumps({"protocol": PROTOCOL, **request}).encode())
            self.process.stdin.close()
        except OSError:
            pass  # the child is already gone: receive() reports how it ended

    def _read_messages(self) -> None:
        # A line is a JSON object of at most MAX_MESSAGE_BYTES; anything else (a longer
        # line, bytes that are not JSON) ends the conversation as a malformed message.
        while raw := self.process.stdout.readline(MAX_MESSAGE_BYTES):
            try:
                message = json.loads(raw) if raw.endswith(b"\n") else None
            except ValueError:
                message = None
            self.messages.put(message if isinstance(message, dict) else {"kind": _MALFORMED})
            if message is None:
                break
        self.messages.put(None)

    def _read_output(self) -> None:
        while chunk := self.process.stderr.read1(65536):
            if self._size < OUTPUT_LIMIT:  # keep reading past the limit so the child never blocks
                text = chunk.decode("utf-8", "replace")
                self._output.append(text)
                self._size += len(text)

    @property
    def output(self) -> str:
        """What the child printed (the solution's prints, tracebacks, a crash report)."""
        text = "".join(self._output)
        return text if len(text) <= OUTPUT_LIMIT else text[:OUTPUT_LIMIT] + "\n… (cut)\n"

    def receive(self, limit: float) -> dict | str:
        """The next message, or _TIMEOUT after `limit` seconds, or _ENDED when the child died."""
        deadline = time.monotonic() + limit
        ended_at: float | None = None
        while True:
            now = time.monotonic()
            wait = min(POLL_S, max(0.0, deadline - now))
            try:
                message = self.messages.get(timeout=wait)
            except queue.Empty:
                # A daemon the solution left may hold the pipes open, so their end never
                # comes: the child's own exit says it is over, once its last lines are read.
                if self.process.poll() is not None:
                    ended_at = ended_at or now
                    if now - ended_at > DRAIN_S:
                        return _ENDED
                if now >= deadline:
                    return _TIMEOUT
                continue
            return _ENDED if message is None else message

    def stop(self) -> int | None:
        """Make sure the child and anything it started are gone; its exit code."""
        try:  # the group too when the child has ended: what it started may still be in it
            if os.name == "posix":
                os.killpg(self.process.pid, signal.SIGKILL)
            elif self.process.poll() is None:
                self.process.kill()
        except (ProcessLookupError, PermissionError):
            pass
        try:
            code = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        # Then those that left the group (setsid): once they are gone, the pipes they
        # inherited close and the readers end.
        end_processes(self.mark)
        for reader in self._readers:
            reader.join(timeout=2)
        for stream in (self.process.stdout, self.process.stderr):
            stream.close()
        return code

    def exit_code(self) -> int | None:
        """The exit code once the child has ended (waits briefly for it)."""
        try:
            return self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None


def _ended_message(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "a signal"
        return f"the solution crashed the Python process (exit code {code}, {name})"
    return (
        f"the solution ended the Python process (exit code {code}) before the case finished "
        "(os._exit, or a crash)"
    )


def _crash_report(output: str) -> str:
    """faulthandler's report of where the process died ('' when there is none)."""
    start = output.rfind("Fatal Python error")
    if start < 0:
        return ""
    return output[start:].split("\nExtension modules:")[0].strip()[-ERROR_LIMIT:]


def _crash_line(output: str, filename: str) -> int | None:
    """The learner's last line in a faulthandler dump ('File "x.py", line 5 in f')."""
    lines = re.findall(rf'File "{re.escape(filename)}", line (\d+)', output)
    return int(lines[0]) if lines else None  # faulthandler lists the innermost frame first


def run_check(exercise_id: str, source: str, filename: str, timeout: float) -> CheckResult:
    """Run an exercise's hidden cases against `source`; every case ends up with a verdict."""
    exercise = get_exercise(exercise_id)
    started = time.perf_counter()
    cases = [CaseResult(c.name, c.description, False, "") for c in exercise.cases]
    reference, solution = _Child(), _Child()  # both import torch at once: one import's wait
    output = ""
    try:
        expected = _reference_values(reference, exercise)
        reference.stop()  # gone before the learner's code exists anywhere
        if expected is None:
            output = reference.output
            _fail_from(cases, 0, "the checker itself could not start (see the output)")
        else:
            for case, (definition, value) in zip(cases, expected, strict=True):
                case.expected = "(unknown)" if value is None else shown(definition, value)
            if solution.receive(STARTUP_LIMIT) != {"kind": "ready"}:
                _fail_from(cases, 0, "the checker itself could not start (see the output)")
            else:
                request = {"kind": "check", "exercise": exercise_id, "source": source,
                           "filename": filename}  # fmt: skip
                solution.send(request)
                _collect(solution, exercise, cases, expected, filename, timeout)
    finally:
        reference.stop()
        solution.stop()
    output += solution.output
    return CheckResult(exercise_id, cases, output, time.perf_counter() - started)


def _reference_values(child: _Child, exercise: Exercise) -> list | None:
    """[(case, torch's encoded value or None)], or None when the reference did not come."""
    deadline = time.monotonic() + STARTUP_LIMIT
    if child.receive(STARTUP_LIMIT) != {"kind": "ready"}:
        return None
    child.send({"kind": "reference", "exercise": exercise.id})
    reply = child.receive(max(0.0, deadline - time.monotonic()))
    try:
        values = expected_values(reply, len(exercise.cases))
    except ProtocolError:
        return None
    return list(zip(exercise.cases, values, strict=True))


def _collect(
    child: _Child,
    exercise: Exercise,
    cases: list[CaseResult],
    expected: list,
    filename: str,
    timeout: float,
) -> None:
    """Fill in the cases from the child's messages, or from how and when it stopped."""
    reply = child.receive(timeout)
    if reply == _TIMEOUT:
        message = f"loading your code timed out after {timeout:g} s (a loop at the top level?)"
        _fail_all(cases, {"message": message})
        return
    if reply == _ENDED:
        crash = _crash_report(child.output)
        message = f"while loading your code, {_ended_message(child.exit_code())}"
        _fail_all(cases, {"message": message, "error": crash or None})
        return
    try:
        failed = load_reply(reply)
    except ProtocolError as exc:
        _fail_all(cases, {"message": _malformed(exc)})
        return
    if failed is not None:
        message = f"your code did not load: {failed['message']}"
        _fail_all(cases, {**failed, "message": message})
        return
    for index, (case, (definition, value)) in enumerate(zip(cases, expected, strict=True)):
        reply = child.receive(timeout)
        if reply == _TIMEOUT:
            _fail_from(cases, index, f"timed out after {timeout:g} s")
            return
        if reply == _ENDED:
            _fail_from(cases, index, _ended_message(child.exit_code()), child, filename)
            return
        try:
            verdict = judge(exercise, definition, value, index, reply)
        except ProtocolError as exc:
            _fail_from(cases, index, _malformed(exc))
            return
        for key, item in verdict.items():
            setattr(case, key, item)


def _malformed(exc: ProtocolError) -> str:
    return f"the solution's process sent something that is not a result ({exc})"


def _fail_all(cases: list[CaseResult], how: dict[str, Any]) -> None:
    """Every case failed the same way (the code never loaded)."""
    for case in cases:
        for key, value in how.items():
            setattr(case, key, value)


def _fail_from(
    cases: list[CaseResult],
    index: int,
    message: str,
    child: _Child | None = None,
    filename: str = "",
) -> None:
    """Case `index` failed for `message`; the ones after it never ran."""
    if index >= len(cases):
        return
    cases[index].message = message
    if child is not None:
        crash = _crash_report(child.output)
        cases[index].error = crash or None
        cases[index].line = _crash_line(crash, filename)
        if cases[index].line is not None:
            cases[index].message += f" at line {cases[index].line}"
    for case in cases[index + 1 :]:
        case.message = f"not run: the solution process stopped during '{cases[index].name}'"


def run_gradient_check(
    source: str,
    function: str,
    at: list[Any],
    filename: str = "<editor>",
    timeout: float = 10.0,
    **tolerances: float,
) -> GradientCheck:
    """Load `source` in a child and check `function`'s gradients at the point `at`.

    `at` holds one entry per argument: a number or a (nested) list of numbers;
    `tolerances` are gradient_check's eps, atol and rtol.
    Raises SolutionError when the code cannot be loaded, has no such function, raises,
    hangs or crashes.
    """
    request = {
        "kind": "gradcheck",
        "source": source,
        "filename": filename,
        "function": function,
        "at": at,
        "tolerances": tolerances,
    }
    child = _Child()
    try:
        reply = child.receive(STARTUP_LIMIT)
        if reply == {"kind": "ready"}:
            child.send(request)
            deadline = time.monotonic() + timeout  # loading and checking share the limit
            reply = child.receive(timeout)
            while isinstance(reply, dict) and reply.get("kind") == "loaded":
                reply = child.receive(max(0.0, deadline - time.monotonic()))
        elif reply == _TIMEOUT:
            raise SolutionError("the checker itself could not start (it took too long)")
        if reply == _TIMEOUT:
            raise SolutionError(f"timed out after {timeout:g} s")
        if reply == _ENDED:
            crash = _crash_report(child.output)
            line = _crash_line(crash, filename)
            where = f" at line {line}" if line is not None else ""
            raise SolutionError(_ended_message(child.exit_code()) + where, crash or None, line)
        if reply.get("kind") == "gradcheck":
            try:
                return verified_gradient_check(reply.get("result"), tolerances)
            except ProtocolError as exc:
                message = f"the solution's process sent a malformed result ({exc})"
                raise SolutionError(message) from None
        message = str(reply.get("message", "the check failed"))[:ERROR_LIMIT]
        if reply.get("kind") == "load_error":
            message = f"your code did not load: {message}"
        error, line = reply.get("error"), reply.get("line")
        error = str(error)[-ERROR_LIMIT:] if error is not None else None
        raise SolutionError(message, error, line if type(line) is int else None)
    finally:
        child.stop()


def check_solution(
    exercise_id: str,
    source: str,
    filename: str = "<editor>",
    timeout: float = DEFAULT_TIMEOUT,
) -> CheckResult:
    """Run every hidden case of an exercise against a solution, in a child process."""
    get_exercise(exercise_id)
    return run_check(exercise_id, source, filename, timeout)
