"""`autograd-viz check` and `autograd-viz gradcheck`: the exercises, headless.

    autograd-viz check EXERCISE FILE.py [--timeout S] [--json OUT.json] [--verbose]
    autograd-viz check --list
    autograd-viz gradcheck FILE.py [--function NAME] --at 1.0,2.0 [--at 3] [--eps E]
                           [--atol A] [--rtol R] [--timeout S] [--json OUT.json]

Both run the learner's file in a child process (see core.exercise_runner): a solution that
hangs or crashes fails, and this command still prints its report. No Qt is imported.
SIGTERM or SIGHUP ends the child and all it started before the command exits (128 + N);
as the child subreaper (Linux), the command also ends any orphan the solution left.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

from autograd_viz.cli._common import (
    ExitCode,
    Terminated,
    ended_by_signals,
    runnable_source,
)
from autograd_viz.cli._outputs import json_output_problem, write_text_atomic
from autograd_viz.cli._values import OneLineParser, number
from autograd_viz.core.learning.exercises import DEFAULT_TIMEOUT, EXERCISES


def _check_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="autograd-viz check",
        description="Run an exercise's hidden test cases on your solution file and print one "
        "line per case and the totals. Exit code 0: every case passed; 1: some failed; "
        "2: unknown exercise, unreadable file or bad arguments.",
    )
    parser.add_argument("exercise", nargs="?", help="the exercise (see --list)")
    parser.add_argument("file", nargs="?", type=Path, help="your solution, a Python file")
    parser.add_argument("--list", action="store_true", help="name the exercises and exit")
    parser.add_argument(
        "--timeout",
        type=number(0),
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"seconds for loading the file, and for each case (default {DEFAULT_TIMEOUT:g}); "
        "the file runs in a child process with the kernel's memory cap "
        "(AUTOGRAD_VIZ_KERNEL_MEMORY_MB, in MB or 'off')",
    )
    parser.add_argument(
        "--json", dest="json_out", metavar="OUT.json", help="also write the results (atomically)"
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="print the traceback under each error"
    )
    return parser


def list_exercises() -> str:
    """One line per exercise: its id, what to write, and the lesson it comes from."""
    width = max(len(e) for e in EXERCISES)
    return "\n".join(f"{e.id:<{width}}  {e.summary}  ({e.lesson})" for e in EXERCISES.values())


def _write_json(path: str, data: dict) -> bool:
    try:
        write_text_atomic(path, json.dumps(data, indent=1) + "\n")
    except OSError as exc:
        print(f"autograd-viz: cannot write {path}: {exc.strerror}", file=sys.stderr)
        return False
    print(f"autograd-viz: results -> {path}", file=sys.stderr)
    return True


@contextlib.contextmanager
def _children_of_ours(command: str) -> Iterator[None]:
    """Run the block as the subreaper of whatever it starts, with SIGTERM/SIGHUP unwinding it;
    on the way out every process it left below this one is ended."""
    from autograd_viz.core.platform.process_tree import reaping_orphans

    try:
        with reaping_orphans(), ended_by_signals():
            yield
    except Terminated as stop:
        name = signal.Signals(int(stop.code) - 128).name
        print(f"autograd-viz {command}: stopped by {name}", file=sys.stderr, flush=True)
        raise


def _output_problem(json_out: str | None, file: Path) -> str:
    """Why the run cannot go ahead: --json is the solution file, or its folder is missing
    or read-only, or the memory cap's setting is malformed; "" when it can."""
    from autograd_viz.core.kernel.limits import memory_limit

    try:
        memory_limit()
    except ValueError as exc:
        return str(exc)
    return json_output_problem(json_out, [file])


def check_main(argv: list[str]) -> int:
    """`autograd-viz check`: an exercise's hidden cases against a solution file."""
    parser = _check_parser()
    args = parser.parse_args(argv)
    if args.list:
        print(list_exercises())
        return ExitCode.OK
    if args.exercise is None or args.file is None:
        parser.error("give an exercise and a file (autograd-viz check --list names the exercises)")
    if args.exercise not in EXERCISES:
        print(
            f"autograd-viz check: no exercise {args.exercise!r} "
            f"(choose one of {', '.join(EXERCISES)})",
            file=sys.stderr,
        )
        return ExitCode.USAGE
    if why := _output_problem(args.json_out, args.file):
        print(f"autograd-viz check: {why}", file=sys.stderr)
        return ExitCode.USAGE
    if (source := runnable_source(args.file, "autograd-viz check")) is None:
        return ExitCode.USAGE

    from autograd_viz.core.learning.exercise_runner import check_solution

    with _children_of_ours("check"):
        result = check_solution(args.exercise, source, str(args.file), args.timeout)
    for case in result.cases:
        print(case.verdict())
        if args.verbose and case.error:
            print("    " + case.error.rstrip().replace("\n", "\n    "))
    print(f"{result.passed} passed, {result.failed} failed")
    if args.json_out and not _write_json(args.json_out, result.to_dict()):
        return ExitCode.USAGE
    return ExitCode.OK if result.all_passed else ExitCode.USER_ERROR


def _gradcheck_parser() -> argparse.ArgumentParser:
    from autograd_viz.core.learning.gradcheck import ATOL, EPS, RTOL

    parser = OneLineParser(
        prog="autograd-viz gradcheck",
        description="Check a function's gradients: central finite differences in float64 "
        "next to autograd, for every entry, as torch.autograd.gradcheck tests them. Exit "
        "code 0: they agree; 1: they do not, or the function raised; 2: bad arguments.",
    )
    parser.add_argument("file", type=Path, help="a Python file that defines the function")
    parser.add_argument(
        "--function", default="f", metavar="NAME", help="the function to check (default f)"
    )
    parser.add_argument(
        "--at",
        action="append",
        required=True,
        metavar="X",
        help="one argument's value: 3, or 1.0,2.0 for a vector, or a JSON nested list; "
        "repeat for each argument (write --at=-1,2 when it starts with a minus)",
    )
    parser.add_argument("--eps", type=number(0), default=EPS, help=f"step > 0 (default {EPS:g})")
    parser.add_argument(
        "--atol", type=number(0, strict=False), default=ATOL, help=f"≥ 0 (default {ATOL:g})"
    )
    parser.add_argument(
        "--rtol", type=number(0, strict=False), default=RTOL, help=f"≥ 0 (default {RTOL:g})"
    )
    parser.add_argument(
        "--timeout",
        type=number(0),
        default=30.0,
        metavar="S",
        help="seconds for loading the file and for the check (default 30); the file runs in "
        "a child process with the kernel's memory cap (AUTOGRAD_VIZ_KERNEL_MEMORY_MB)",
    )
    parser.add_argument(
        "--json", dest="json_out", metavar="OUT.json", help="also write the results (atomically)"
    )
    return parser


def gradcheck_main(argv: list[str]) -> int:
    """`autograd-viz gradcheck`: finite differences against autograd for a user's function."""
    from autograd_viz.core.learning.gradcheck import parse_value

    args = _gradcheck_parser().parse_args(argv)
    if why := _output_problem(args.json_out, args.file):
        print(f"autograd-viz gradcheck: {why}", file=sys.stderr)
        return ExitCode.USAGE
    try:
        at = [parse_value(value) for value in args.at]
    except ValueError:
        print(f"autograd-viz gradcheck: --at wants numbers, not {args.at!r}", file=sys.stderr)
        return ExitCode.USAGE
    if (source := runnable_source(args.file, "autograd-viz gradcheck")) is None:
        return ExitCode.USAGE

    from autograd_viz.core.learning.exercise_runner import SolutionError, run_gradient_check

    try:
        with _children_of_ours("gradcheck"):
            check = run_gradient_check(
                source,
                args.function,
                at,
                str(args.file),
                args.timeout,
                eps=args.eps,
                atol=args.atol,
                rtol=args.rtol,
            )
    except SolutionError as exc:
        print(f"autograd-viz gradcheck: {exc.message}", file=sys.stderr)
        if exc.error:
            print(exc.error.rstrip(), file=sys.stderr)
        return ExitCode.USER_ERROR
    print(check.table())
    if args.json_out and not _write_json(args.json_out, check.to_dict()):
        return ExitCode.USAGE
    return ExitCode.OK if check.passed else ExitCode.USER_ERROR
