"""Command line: the GUI launcher and the headless `trace` command.

    autograd-viz [FILE.py] [--run] [--mode forward|backward|all] [--step N]
                 [--screenshot OUT.png] [--export-graph OUT.png|OUT.svg]
                 [--export-animation OUT.gif] [--size WxH] [--timeout S]
                 [--existing CONNECTION.json] [--device auto|cpu|cuda:N]
    autograd-viz --view descent [--lr LR] [--screenshot OUT.png]
    autograd-viz FILE.py --view landscape [--lr LR] [--screenshot OUT.png]
    autograd-viz descent [--function NAME|FILE.py] [--optimizer NAME] [--lr LR] [--steps N]
                         [--start W,B] [--device DEVICE] [--json OUT.json]
    autograd-viz landscape FILE.py [--lr LR] [--steps N] [--resolution N] [--span S]
                           [--seed N] [--json OUT.json]
    autograd-viz trace FILE.py [--json OUT.json] [--device auto|cpu|cuda[:N]]
                       [--max-nodes N] [--max-events N] [--timeout S] [-- SCRIPT_ARGS…]
    autograd-viz check EXERCISE FILE.py [--timeout S] [--json OUT.json] | check --list
    autograd-viz gradcheck FILE.py [--function NAME] --at X [--at Y]   (see cli_exercises)
    autograd-viz --version

This module imports no Qt, so `trace` works on machines without a display.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from pathlib import Path

from autograd_viz import __version__
from autograd_viz.cli._common import ExitCode, read_source


def _gui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="autograd-viz",
        description="Watch PyTorch's autograd: write code, press Ctrl+Enter, see the graph. "
        "Headless tracing: `autograd-viz trace FILE.py --json OUT.json`.",
    )
    parser.add_argument("file", nargs="?", type=Path, help="a Python file to open (not run)")
    parser.add_argument("--run", action="store_true", help="run the file once the kernel is up")
    parser.add_argument(
        "--screenshot",
        metavar="OUT.png",
        type=Path,
        help="save a PNG of the window once the graph is drawn, then exit",
    )
    parser.add_argument(
        "--mode",
        choices=("forward", "backward", "all"),
        default=None,
        help="with --run: show the player in this view (default: the end state)",
    )
    parser.add_argument(
        "--step",
        type=int,
        default=None,
        metavar="N",
        help="with --run: go to step N of the player's view (1 = first; default: the last)",
    )
    parser.add_argument(
        "--view",
        choices=("graph", "descent", "landscape"),
        default="graph",
        help="the pane to show (descent: the loss surface and learning-rate slider; "
        "landscape: the descent pane on the loss landscape of FILE's model and loss_fn(), "
        "after running FILE)",
    )
    parser.add_argument(
        "--lr",
        type=float,
        default=None,
        help="with --view descent or landscape: the learning rate to show (default 0.1)",
    )
    parser.add_argument(
        "--export-graph",
        metavar="OUT.png|OUT.svg",
        type=Path,
        help="run the file, save the graph canvas as PNG or SVG, then exit",
    )
    parser.add_argument(
        "--export-animation",
        metavar="OUT.gif",
        type=Path,
        help="run the file, save its forward and backward replay as an animated GIF, then exit",
    )
    parser.add_argument(
        "--size", default="1400x860", metavar="WxH", help="window size (default 1400x860)"
    )
    parser.add_argument(
        "--device",
        default="auto",
        metavar="DEVICE",
        help="where the editor's code runs: auto (default: the first GPU if any), cpu, cuda:N",
    )
    parser.add_argument(
        "--existing",
        metavar="CONNECTION.json",
        type=Path,
        help="attach to a running Jupyter kernel by its connection file instead of starting "
        "one (its environment needs torch and autograd-viz installed)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="with --screenshot: give up after S seconds (default 120)",
    )
    parser.add_argument("--version", action="version", version=f"autograd-viz {__version__}")
    return parser


def _descent_parser() -> argparse.ArgumentParser:
    from autograd_viz.core.descent.paths import FUNCTIONS, OPTIMIZERS

    parser = argparse.ArgumentParser(
        prog="autograd-viz descent",
        description="Gradient descent on a two-parameter loss with a real torch.optim "
        "optimizer; writes the path, a caption of what it does and the steps to reach "
        "the minimum (within 0.001). Exit code 0, or 2 for bad arguments.",
    )
    parser.add_argument(
        "--function",
        default="bowl",
        metavar="NAME|FILE.py",
        help=f"one of {', '.join(FUNCTIONS)}, or a file defining "
        "loss(w, b) (default: bowl, the lesson's (w−3)²+(b+2)²)",
    )
    parser.add_argument("--optimizer", default="sgd", choices=list(OPTIMIZERS))
    parser.add_argument("--lr", type=float, default=0.1, help="learning rate (default 0.1)")
    parser.add_argument("--steps", type=int, default=50, help="number of steps (default 50)")
    parser.add_argument(
        "--start",
        default=None,
        metavar="W,B",
        help="starting point (default: the function's, 0.5,1.0 for bowl)",
    )
    parser.add_argument(
        "--device", default="cpu", metavar="DEVICE", help="auto, cpu, cuda or cuda:N (default cpu)"
    )
    _json_option(parser)
    return parser


def _json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        dest="json_out",
        metavar="OUT.json",
        help="write the result here (default: standard output)",
    )


def _write_result(result: dict, json_out: str | None, indent: int | None = None) -> None:
    """The result as JSON to `json_out` (its caption said on stderr) or to stdout."""
    import json

    from autograd_viz.core.trace import json_safe

    text = json.dumps(json_safe(result), indent=indent)
    if json_out:
        Path(json_out).write_text(text + "\n", encoding="utf-8")
        print(f"autograd-viz: {result['caption']['text']} -> {json_out}", file=sys.stderr)
    else:
        print(text)


def descent_main(argv: list[str]) -> int:
    """`autograd-viz descent`: one descent path, headless."""

    from autograd_viz.core.descent.paths import FUNCTIONS, run_descent, user_function
    from autograd_viz.core.kernel.runner import resolve_device

    args = _descent_parser().parse_args(argv)
    try:
        if args.function in FUNCTIONS:
            function = FUNCTIONS[args.function]
            start = function.start
        else:
            path = Path(args.function)
            if path.suffix != ".py":
                raise ValueError(
                    f"unknown function {args.function!r}: use one of "
                    f"{', '.join(FUNCTIONS)} or a .py file"
                )
            function = user_function(read_source(path), str(path))
            start = (0.5, 1.0)
        if args.start:
            w, b = (float(v) for v in args.start.split(","))
            start = (w, b)
        if args.steps < 0 or not args.lr > 0:
            raise ValueError("--steps must be ≥ 0 and --lr > 0")
        device = resolve_device(args.device)
        result = run_descent(function, start, args.lr, args.steps, args.optimizer, device)
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return ExitCode.USAGE
    except (ValueError, RuntimeError, SyntaxError) as exc:
        print(f"autograd-viz descent: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    _write_result(result, args.json_out, indent=1)
    return ExitCode.OK


def _landscape_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="autograd-viz landscape",
        description="The loss landscape of a model (Li et al. 2018): FILE.py defines `model` "
        "(an nn.Module) and `loss_fn()` (a zero-argument function returning its loss). Writes "
        "the loss on a grid along two random filter-normalized directions around the model's "
        "parameters and an SGD path from them projected onto that plane. Exit code 0; 1 when "
        "the file raises; 2 for bad arguments.",
    )
    parser.add_argument("file", type=Path, help="a Python file defining model and loss_fn()")
    parser.add_argument("--lr", type=float, default=0.1, help="SGD learning rate (default 0.1)")
    parser.add_argument("--steps", type=int, default=20, help="SGD steps (default 20)")
    parser.add_argument("--resolution", type=int, default=41, help="grid points a side (41)")
    parser.add_argument(
        "--span", type=float, default=1.0, help="the grid covers α, β in [−S, S] (default 1)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the directions (0)")
    _json_option(parser)
    return parser


def landscape_main(argv: list[str]) -> int:
    """`autograd-viz landscape`: a model's loss landscape and projected SGD path, headless."""
    import traceback

    from autograd_viz.core.descent.landscape import landscape_in_namespace
    from autograd_viz.core.kernel.runner import set_torch_threads

    args = _landscape_parser().parse_args(argv)
    try:
        code = read_source(args.file)
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return ExitCode.USAGE
    if args.steps < 0 or not args.lr > 0 or args.resolution < 2 or not args.span > 0:
        print(
            "autograd-viz landscape: --steps ≥ 0, --lr > 0, --resolution ≥ 2, --span > 0",
            file=sys.stderr,
        )
        return ExitCode.USAGE
    set_torch_threads()
    namespace = {"__name__": "__main__", "__file__": str(args.file)}
    try:
        with contextlib.redirect_stdout(sys.stderr):
            exec(compile(code, str(args.file), "exec"), namespace)
            result = landscape_in_namespace(
                namespace,
                learning_rate=args.lr,
                steps=args.steps,
                resolution=args.resolution,
                span=args.span,
                seed=args.seed,
            )
    except Exception as exc:  # the user's file: say what it raised, as Python would
        traceback.print_exception(exc)
        return ExitCode.USER_ERROR
    _write_result(result, args.json_out)
    return ExitCode.OK


def kernel_main(argv: list[str]) -> int:
    """Run an ipykernel (`--kernel -f CONNECTION_FILE`): how a frozen bundle, which has no
    separate Python to launch `-m ipykernel_launcher` with, starts its kernel."""
    from ipykernel.kernelapp import IPKernelApp

    app = IPKernelApp.instance()
    app.initialize(argv)
    app.start()
    return ExitCode.OK


MAX_TIMEOUT_S = 2**31 // 1000  # Qt's timers count milliseconds in a 32-bit int
MAX_WINDOW_SIDE = 16384


def _bad_gui_value(args: argparse.Namespace, width: int, height: int) -> str | None:
    """Why a GUI flag's value cannot be used (None: all can): said before any window opens,
    since a NaN or a zero learning rate would otherwise crash the app once it is up."""
    if args.lr is not None and not (math.isfinite(args.lr) and args.lr > 0):
        return f"--lr must be a finite number > 0, not {args.lr:g}"
    if not (math.isfinite(args.timeout) and 0 < args.timeout <= MAX_TIMEOUT_S):
        return f"--timeout must be seconds in (0, {MAX_TIMEOUT_S}], not {args.timeout:g}"
    if args.step is not None and args.step < 1:
        return f"--step counts from 1 (the first step), not {args.step}"
    if not (0 < width <= MAX_WINDOW_SIDE and 0 < height <= MAX_WINDOW_SIDE):
        return f"--size wants sides between 1 and {MAX_WINDOW_SIDE}, not {width}x{height}"
    return None


def main(argv: list[str] | None = None) -> int:
    """Entry point of `autograd-viz` and `python -m autograd_viz`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--kernel":  # a bundled app starts its kernel as itself
        return kernel_main(argv[1:])
    if argv and argv[0] == "--exercise-child":  # the exercise checker's child process
        from autograd_viz.core.learning.exercise_child import main as exercise_child_main

        return exercise_child_main()
    if argv and argv[0] == "trace":
        from autograd_viz.cli.trace import trace_main

        return trace_main(argv[1:])
    if argv and argv[0] == "descent":
        return descent_main(argv[1:])
    if argv and argv[0] in ("check", "gradcheck"):
        from autograd_viz.cli.exercises import check_main, gradcheck_main

        return (check_main if argv[0] == "check" else gradcheck_main)(argv[1:])
    if argv and argv[0] == "landscape":
        return landscape_main(argv[1:])
    args = _gui_parser().parse_args(argv)
    try:
        width, height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        print(f"autograd-viz: --size wants WxH, e.g. 1400x860, not {args.size!r}", file=sys.stderr)
        return ExitCode.USAGE
    problem = _bad_gui_value(args, width, height)
    if problem:
        print(f"autograd-viz: {problem}", file=sys.stderr)
        return ExitCode.USAGE
    text = None
    if args.file is not None:
        try:
            text = read_source(args.file)
        except SystemExit as exc:
            print(exc, file=sys.stderr)
            return ExitCode.USAGE
    from autograd_viz.ui.app import launch

    return launch(
        path=args.file,
        text=text,
        run=(args.view == "landscape" and args.file is not None)
        or (
            args.view == "graph"
            and (args.run or any((args.screenshot, args.export_graph, args.export_animation)))
        ),
        screenshot=args.screenshot,
        size=(width, height),
        timeout=args.timeout,
        mode=args.mode,
        step=args.step,
        export_graph=args.export_graph,
        export_animation=args.export_animation,
        view=args.view,
        learning_rate=args.lr,
        existing=args.existing,
        device=args.device,
    )
