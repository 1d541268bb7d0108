"""Command line: the GUI launcher and the headless `trace` command.

    autograd-viz [FILE.py] [--run] [--mode forward|backward|all] [--step N]
                 [--screenshot OUT.png] [--export-graph OUT.png|OUT.svg]
                 [--export-animation OUT.gif] [--export-page OUT.html]
                 [--size WxH] [--timeout S]
                 [--existing CONNECTION.json] [--device auto|cpu|cuda:N]
    autograd-viz --view descent [--lr LR] [--screenshot OUT.png]
    autograd-viz FILE.py --view landscape [--lr LR] [--screenshot OUT.png]
    autograd-viz descent [--function NAME|FILE.py] [--optimizer NAME] [--lr LR] [--steps N]
                         [--start W,B] [--device DEVICE] [--timeout S] [--json OUT.json]
    autograd-viz landscape FILE.py [--lr LR] [--steps N] [--resolution N] [--span S]
                           [--seed N] [--timeout S] [--json OUT.json]
    autograd-viz trace FILE.py [--json OUT.json] [--device auto|cpu|cuda[:N]]
                       [--max-nodes N] [--max-events N] [--timeout S] [-- SCRIPT_ARGS…]
    autograd-viz open TRACE.json [--size WxH] [--screenshot OUT.png] [--timeout S]
                             [--export-page OUT.html]
    autograd-viz check EXERCISE FILE.py [--timeout S] [--json OUT.json] | check --list
    autograd-viz gradcheck FILE.py [--function NAME] --at X [--at Y]   (see cli_exercises)
    autograd-viz --version

This module imports no Qt, so `trace` works on machines without a display.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from autograd_viz import __version__
from autograd_viz.cli._common import ExitCode, read_source
from autograd_viz.cli._gui_checks import existing_kernel_problem, output_problem, window_size


def _gui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="autograd-viz",
        description="Watch PyTorch's autograd: write code, press Ctrl+Enter, see the graph. "
        "Opening FILE runs nothing; --run, --screenshot (with the graph view), "
        "--export-graph, --export-animation, --export-page and --view landscape run it in "
        "the app's kernel. "
        "Headless commands: trace, check, gradcheck, descent, landscape "
        "(`autograd-viz trace --help`). `autograd-viz open TRACE.json` replays a recorded "
        "trace in the app.",
    )
    parser.add_argument(
        "file",
        nargs="?",
        type=Path,
        help="a Python file to open in the editor; opening it alone does not run it",
    )
    parser.add_argument(
        "--run", action="store_true", help="run FILE in the kernel once the kernel is up"
    )
    parser.add_argument(
        "--screenshot",
        metavar="OUT.png",
        type=Path,
        help="run FILE (with the graph view; with --view descent it runs nothing, with "
        "landscape it runs FILE), save a PNG of the window once drawn, then exit",
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
        help="run FILE, save the graph canvas as PNG or SVG, then exit",
    )
    parser.add_argument(
        "--export-animation",
        metavar="OUT.gif",
        type=Path,
        help="run FILE, save its forward and backward replay as an animated GIF, then exit",
    )
    parser.add_argument(
        "--export-page",
        metavar="OUT.html",
        type=Path,
        help="run FILE, save its replay as one self-contained HTML page (the picture, the "
        "forward and backward steps and a small player, nothing fetched), then exit",
    )
    parser.add_argument(
        "--size",
        default="1400x860",
        metavar="WxH",
        help="window size, each side 200 to 7680 (default 1400x860)",
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
        "one: FILE and the editor's code run there (its environment needs torch and "
        "autograd-viz installed)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="with --screenshot or an export: give up after S seconds (default 120)",
    )
    parser.add_argument("--version", action="version", version=f"autograd-viz {__version__}")
    return parser


def kernel_main(argv: list[str]) -> int:
    """Run an ipykernel (`--kernel -f CONNECTION_FILE`): how a frozen bundle, which has no
    separate Python to launch `-m ipykernel_launcher` with, starts its kernel."""
    from ipykernel.kernelapp import IPKernelApp

    app = IPKernelApp.instance()
    app.initialize(argv)
    app.start()
    return ExitCode.OK


MAX_TIMEOUT_S = 2**31 // 1000  # Qt's timers count milliseconds in a 32-bit int


def _bad_gui_value(args: argparse.Namespace) -> str | None:
    """Why a GUI flag's value cannot be used (None: all can): said before any window opens,
    since a NaN or a zero learning rate would otherwise crash the app once it is up."""
    if args.lr is not None and not (math.isfinite(args.lr) and args.lr > 0):
        return f"--lr must be a finite number > 0, not {args.lr:g}"
    if not (math.isfinite(args.timeout) and 0 < args.timeout <= MAX_TIMEOUT_S):
        return f"--timeout must be seconds in (0, {MAX_TIMEOUT_S}], not {args.timeout:g}"
    if args.step is not None and args.step < 1:
        return f"--step counts from 1 (the first step), not {args.step}"
    return None


def _gui_problem(args: argparse.Namespace) -> str | None:
    """The first bad launcher flag, as one line, or None."""
    size = window_size(args.size)
    if isinstance(size, str):
        return size
    if why := _bad_gui_value(args):
        return why
    outputs = {
        "--screenshot": args.screenshot,
        "--export-graph": args.export_graph,
        "--export-animation": args.export_animation,
        "--export-page": args.export_page,
    }
    if why := output_problem(outputs, args.file):
        return why
    if args.existing is not None and (why := existing_kernel_problem(args.existing)):
        return why
    return None


def main(argv: list[str] | None = None) -> int:
    """Entry point of `autograd-viz` and `python -m autograd_viz`."""
    from autograd_viz.cli._values import UsageError

    try:
        return _dispatch(list(sys.argv[1:] if argv is None else argv))
    except UsageError:  # said in one line already
        return ExitCode.USAGE


def _open_main(argv: list[str]) -> int:
    """`autograd-viz open TRACE.json`: replay a recorded trace in the app; nothing runs."""
    parser = argparse.ArgumentParser(
        prog="autograd-viz open",
        description="Replay a trace written by `autograd-viz trace --json` in the app, as if "
        "it had just run: graph, player, inspector, its script read-only. Nothing is run.",
    )
    parser.add_argument("trace", type=Path, help="the trace file (JSON)")
    parser.add_argument("--size", default="1400x860", metavar="WxH", help="window size")
    parser.add_argument(
        "--screenshot", metavar="OUT.png", type=Path, help="save a PNG once shown, then exit"
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, metavar="S",
        help="with --screenshot: give up after S seconds (default 120)",
    )  # fmt: skip
    parser.add_argument(
        "--export-page",
        metavar="OUT.html",
        type=Path,
        help="write the trace's replay as one self-contained HTML page and exit, with no "
        "window (with --screenshot, the window opens as well)",
    )
    args = parser.parse_args(argv)
    size = window_size(args.size)
    if isinstance(size, str):
        print(f"autograd-viz: {size}", file=sys.stderr)
        return ExitCode.USAGE
    if why := output_problem({"--export-page": args.export_page}, args.trace):
        print(f"autograd-viz: {why}", file=sys.stderr)
        return ExitCode.USAGE
    from autograd_viz.core.trace.trace_file import TraceFileError, read_trace

    try:  # a bad file is said here, in one line, before any window opens
        trace = read_trace(args.trace)
    except TraceFileError as exc:
        print(f"autograd-viz: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    if args.export_page is not None:
        _write_page(trace, args.export_page, args.trace.stem)
        if args.screenshot is None:
            return ExitCode.OK
    from autograd_viz.ui.app import launch

    return launch(
        trace=args.trace,
        recorded=trace,  # read once: the window shows what was checked here
        screenshot=args.screenshot,
        size=size,
        timeout=args.timeout,
    )


def _write_page(trace, out: Path, title: str) -> None:
    """Write a trace's replay page (no window, no Qt) and say where."""
    from autograd_viz.core.platform.atomic_files import write_text_atomic
    from autograd_viz.core.share import page_html

    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, page_html(trace, title=f"{title} · autograd-viz replay"))
    print(f"autograd-viz: saved {out}", file=sys.stderr)


def _dispatch(argv: list[str]) -> int:
    if argv and argv[0] == "--kernel":  # a bundled app starts its kernel as itself
        return kernel_main(argv[1:])
    if argv and argv[0] == "--exercise-child":  # the exercise checker's child process
        from autograd_viz.core.learning.exercise_child import main as exercise_child_main

        return exercise_child_main()
    if argv and argv[0] == "trace":
        from autograd_viz.cli.trace import trace_main

        return trace_main(argv[1:])
    if argv and argv[0] in ("descent", "landscape"):
        from autograd_viz.cli.headless import descent_main, landscape_main

        return (descent_main if argv[0] == "descent" else landscape_main)(argv[1:])
    if argv and argv[0] == "open":
        return _open_main(argv[1:])
    if argv and argv[0] in ("check", "gradcheck"):
        from autograd_viz.cli.exercises import check_main, gradcheck_main

        return (check_main if argv[0] == "check" else gradcheck_main)(argv[1:])
    args = _gui_parser().parse_args(argv)
    if (why := _gui_problem(args)) is not None:
        print(f"autograd-viz: {why}", file=sys.stderr)
        return ExitCode.USAGE
    width, height = window_size(args.size)
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
            and (
                args.run
                or any(
                    (args.screenshot, args.export_graph, args.export_animation, args.export_page)
                )
            )
        ),
        screenshot=args.screenshot,
        size=(width, height),
        timeout=args.timeout,
        mode=args.mode,
        step=args.step,
        export_graph=args.export_graph,
        export_animation=args.export_animation,
        export_page=args.export_page,
        view=args.view,
        learning_rate=args.lr,
        existing=args.existing,
        device=args.device,
    )
