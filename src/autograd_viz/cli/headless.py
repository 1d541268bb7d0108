"""`autograd-viz descent` and `autograd-viz landscape`: descent paths and a model's loss
landscape, headless. A user's file runs in a child process (cli._watched) with `--timeout`
and the kernel's memory cap, as under `trace`; the built-in functions run here."""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path
from typing import IO

from autograd_viz.cli._common import ExitCode, hidden_torch, runnable_source
from autograd_viz.cli._outputs import (
    absolute_output,
    json_output_problem,
    real_stdout,
    write_text_atomic,
)
from autograd_viz.cli._values import OneLineParser, count, number, point
from autograd_viz.cli._watched import STARTED, child_finish, child_phase, run_watched

__all__ = ["MAX_RESOLUTION", "descent_main", "landscape_main"]

MAX_RESOLUTION = 201  # 201² losses: a 2000-point side took 2.3 GB and wrote 82 MB of JSON
MAX_STEPS = 100_000
_LIMITS_HELP = (
    "stop the file's code after S seconds (default: no limit; starting Python and "
    "importing torch are not counted). The file runs in a child process with the kernel's "
    "memory cap (AUTOGRAD_VIZ_KERNEL_MEMORY_MB, in MB or 'off'), as under `trace`"
)
_EXITS = (
    "Exit code 0; 1: the file raised; 2: bad arguments, or a file whose loss cannot be "
    "used; 3: its code ran past --timeout; 4: it crashed Python; 5: it ran out of memory."
)


def _common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=number(0), default=None, metavar="S", help=_LIMITS_HELP)
    parser.add_argument(
        "--json",
        dest="json_out",
        metavar="OUT.json",
        help="write the result here, atomically (default: standard output)",
    )
    parser.add_argument("--child-status", default=None, help=argparse.SUPPRESS)


def _descent_parser() -> argparse.ArgumentParser:
    from autograd_viz.core.descent.paths import FUNCTIONS, OPTIMIZERS

    parser = OneLineParser(
        prog="autograd-viz descent",
        description="Gradient descent on a two-parameter loss with a real torch.optim "
        "optimizer; writes the path, a caption of what it does and the steps to reach "
        "the minimum (within 0.001). A built-in function runs nothing of yours; "
        "--function FILE.py runs FILE.py (in a child process) and descends its loss(w, b). "
        + _EXITS,
    )
    parser.add_argument(
        "--function",
        default="bowl",
        metavar="NAME|FILE.py",
        help=f"one of {', '.join(FUNCTIONS)}, or a file defining "
        "loss(w, b), which is run (default: bowl, the lesson's (w−3)²+(b+2)²)",
    )
    parser.add_argument("--optimizer", default="sgd", choices=list(OPTIMIZERS))
    parser.add_argument("--lr", type=number(0), default=0.1, help="learning rate > 0 (0.1)")
    parser.add_argument(
        "--steps", type=count(0, MAX_STEPS), default=50, help="number of steps (default 50)"
    )
    parser.add_argument(
        "--start",
        type=point,
        default=None,
        metavar="W,B",
        help="starting point (default: the function's, 0.5,1.0 for bowl)",
    )
    parser.add_argument(
        "--device", default="cpu", metavar="DEVICE", help="auto, cpu, cuda or cuda:N (default cpu)"
    )
    _common_options(parser)
    return parser


def _landscape_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="autograd-viz landscape",
        description="The loss landscape of a model (Li et al. 2018): runs FILE.py (in a "
        "child process), which defines `model` (an nn.Module) and `loss_fn()` (a "
        "zero-argument function returning its loss). Writes the loss on a grid along two "
        "random filter-normalized directions around the model's parameters and an SGD path "
        "from them projected onto that plane. " + _EXITS,
    )
    parser.add_argument("file", type=Path, help="the Python file to run: defines model, loss_fn()")
    parser.add_argument("--lr", type=number(0), default=0.1, help="SGD learning rate (0.1)")
    parser.add_argument("--steps", type=count(0, MAX_STEPS), default=20, help="SGD steps (20)")
    parser.add_argument(
        "--resolution",
        type=count(2, MAX_RESOLUTION),
        default=41,
        help=f"grid points a side, 2 to {MAX_RESOLUTION} (41)",
    )
    parser.add_argument(
        "--span", type=number(0), default=1.0, help="the grid covers α, β in [−S, S] (default 1)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the directions (0)")
    _common_options(parser)
    return parser


def _write_result(result: dict, json_out: str | None, prog: str, stdout: IO[str]) -> int:
    """The result as JSON to `json_out` (its caption said on stderr) or to `stdout`."""
    from autograd_viz.core.trace import json_safe

    text = json.dumps(json_safe(result), indent=1) + "\n"
    if json_out is None:
        stdout.write(text)
        stdout.flush()
        return ExitCode.OK
    try:
        write_text_atomic(json_out, text)
    except OSError as exc:
        print(f"{prog}: cannot write {json_out}: {exc.strerror or exc}", file=sys.stderr)
        return ExitCode.USAGE
    print(f"autograd-viz: {result['caption']['text']} -> {json_out}", file=sys.stderr)
    return ExitCode.OK


def _in_file(message: str, file: Path) -> str:
    # The core speaks of the GUI's kernel ("Run your code first: … in the kernel"); here the
    # code is FILE's.
    return message.replace("Run your code first: ", "").replace("in the kernel", f"in {file}")


def _run_file(code: str, file: Path, namespace: dict, prog: str) -> int | None:
    """Run the user's file; None when it ran, else the exit code (its traceback printed)."""
    try:
        exec(compile(code, str(file), "exec"), namespace)
    except SystemExit as exc:
        print(f"{prog}: {file} called sys.exit({exc.code!r}) while loading", file=sys.stderr)
        return ExitCode.USAGE
    except MemoryError:
        return _out_of_memory(file, prog)
    except Exception as exc:  # the user's file: say what it raised, as Python would
        traceback.print_exception(exc)
        return ExitCode.USER_ERROR
    return None


def _out_of_memory(file: Path, prog: str) -> int:
    from autograd_viz.core.kernel.limits import memory_limit_words

    print(f"{prog}: {file} ran out of memory; {memory_limit_words('it')}.", file=sys.stderr)
    return ExitCode.OUT_OF_MEMORY


def _limits(prog: str) -> int | None:
    """The kernel's memory cap on this child; None, or USAGE for a malformed setting."""
    from autograd_viz.core.kernel.limits import apply_process_limits

    try:
        apply_process_limits()
    except ValueError as exc:  # a malformed AUTOGRAD_VIZ_KERNEL_MEMORY_MB
        print(f"{prog}: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    return None


def _prepare(args: argparse.Namespace, file: Path | None, prog: str) -> str | None:
    """Checks the parent makes before any code runs; a one-line reason, or None."""
    if why := json_output_problem(args.json_out, [] if file is None else [file]):
        return f"{prog}: {why}"
    args.json_out = absolute_output(args.json_out)  # before the file can os.chdir
    return None


def descent_main(argv: list[str]) -> int:
    """`autograd-viz descent`: one descent path, headless."""
    prog = "autograd-viz descent"
    if hidden_torch(prog, safe_path=False):  # this process imports torch for the built-ins
        return ExitCode.USAGE
    from autograd_viz.core.descent.paths import FUNCTIONS

    args = _descent_parser().parse_args(argv)
    file = None if args.function in FUNCTIONS else Path(args.function)
    if file is not None and file.suffix != ".py":
        print(
            f"{prog}: unknown function {args.function!r}: use one of "
            f"{', '.join(FUNCTIONS)} or a .py file",
            file=sys.stderr,
        )
        return ExitCode.USAGE
    if (reason := _prepare(args, file, prog)) is not None:
        print(reason, file=sys.stderr)
        return ExitCode.USAGE
    if file is not None:
        if (code := runnable_source(file, prog, safe_path=False)) is None:
            return ExitCode.USAGE
        if args.child_status is None:
            return run_watched("descent", argv, file, args.timeout)
        return child_finish(args.child_status, _descent_child(args, file, code, prog))
    return _descent(args, FUNCTIONS[args.function], None, prog, sys.stdout)


def _descent_child(args: argparse.Namespace, file: Path, code: str, prog: str) -> int:
    from autograd_viz.core.descent.paths import user_function

    if (failed := _limits(prog)) is not None:
        return failed
    child_phase(args.child_status, STARTED)
    with real_stdout() as stdout:
        try:
            function = user_function(code, str(file))
        except SystemExit as exc:
            print(f"{prog}: {file} called sys.exit({exc.code!r}) while loading", file=sys.stderr)
            return ExitCode.USAGE
        except (ValueError, SyntaxError) as exc:
            print(f"{prog}: {exc}", file=sys.stderr)
            return ExitCode.USAGE
        except MemoryError:
            return _out_of_memory(file, prog)
        return _descent(args, function, (0.5, 1.0), prog, stdout)


def _descent(args: argparse.Namespace, function, start, prog: str, stdout: IO[str]) -> int:
    from autograd_viz.core.descent.paths import run_descent
    from autograd_viz.core.kernel.runner import resolve_device

    start = args.start or start or function.start
    try:
        device = resolve_device(args.device)
        result = run_descent(function, start, args.lr, args.steps, args.optimizer, device)
    except SystemExit as exc:
        print(f"{prog}: loss(w, b) called sys.exit({exc.code!r})", file=sys.stderr)
        return ExitCode.USAGE
    except MemoryError:
        return _out_of_memory(Path(args.function), prog)
    except (ValueError, RuntimeError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    return _write_result(result, args.json_out, prog, stdout)


def landscape_main(argv: list[str]) -> int:
    """`autograd-viz landscape`: a model's loss landscape and projected SGD path, headless."""
    prog = "autograd-viz landscape"
    args = _landscape_parser().parse_args(argv)
    if (reason := _prepare(args, args.file, prog)) is not None:
        print(reason, file=sys.stderr)
        return ExitCode.USAGE
    if (code := runnable_source(args.file, prog)) is None:
        return ExitCode.USAGE
    if args.child_status is None:
        return run_watched("landscape", argv, args.file, args.timeout)
    return child_finish(args.child_status, _landscape_child(args, code, prog))


def _landscape_child(args: argparse.Namespace, code: str, prog: str) -> int:
    from autograd_viz.core.descent.landscape import NoParameters, landscape_in_namespace
    from autograd_viz.core.kernel.runner import set_torch_threads

    set_torch_threads()
    if (failed := _limits(prog)) is not None:
        return failed
    child_phase(args.child_status, STARTED)
    namespace = {"__name__": "__main__", "__file__": str(args.file.resolve())}
    with real_stdout() as stdout:
        if (failed := _run_file(code, args.file, namespace, prog)) is not None:
            return failed
        try:
            result = landscape_in_namespace(
                namespace,
                learning_rate=args.lr,
                steps=args.steps,
                resolution=args.resolution,
                span=args.span,
                seed=args.seed,
            )
        except NoParameters:
            print(f"{prog}: model in {args.file} has no parameters to train", file=sys.stderr)
            return ExitCode.USAGE
        except LookupError as exc:
            print(f"{prog}: {_in_file(str(exc), args.file)}", file=sys.stderr)
            return ExitCode.USAGE
        except SystemExit as exc:
            print(f"{prog}: loss_fn() called sys.exit({exc.code!r})", file=sys.stderr)
            return ExitCode.USAGE
        except MemoryError:
            return _out_of_memory(args.file, prog)
        except Exception as exc:  # the user's loss_fn raised: its traceback, as Python's
            traceback.print_exception(exc)
            return ExitCode.USER_ERROR
        return _write_result(result, args.json_out, prog, stdout)
