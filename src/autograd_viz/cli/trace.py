"""`autograd-viz trace` runs the script in a child Python process, watched by this one.

The parent (the command the user typed) imports no torch: it starts
`python -P -m autograd_viz trace FILE … --child-status STATUS -- ARGS…`, lets the child's
stdout and stderr through untouched, and waits. The child runs the script as `python FILE
ARGS…` would (script_context): its argv, its folder first on sys.path, its own `__main__`
module, the recursion limit's headroom, `sys.exit(N)` as its exit code. The child writes
two lines to the STATUS file: one when the user's code is about to run (the timeout counts
from there, so importing torch is not the script's time) and one with its exit code when
the trace is written. A child that ends without that second line died in the user's code
(`os._exit`, a segfault, the system's OOM killer): the parent says so in one line.
The script can find and write the STATUS file too, so every line the child writes carries
a random token made for this run, which the child reads from an inherited pipe (its number
in AUTOGRAD_VIZ_STATUS_FD) and closes before the script runs: a line without it is ignored,
and a script that forges "exit 0" and ends itself is reported as having ended Python.
Once the trace is written and flushed the child ends itself with `os._exit`, so a thread
the script left running or an `atexit` handler that blocks cannot keep it alive; and the
timeout keeps counting to the child's very end. Whatever happens (SIGTERM and SIGHUP to the
parent included), the parent then ends every process the script started: its process
group, anything carrying the run's mark in its environment (a double-forked `setsid`
daemon too) and, as the child subreaper on Linux, any orphan re-parented to it
(core.platform.process_tree); and it removes the status file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NoReturn

from autograd_viz.cli._common import (
    ExitCode,
    runnable_source,
    shadowing_file,
    split_script_args,
)
from autograd_viz.cli._outputs import (
    absolute_output,
    json_output_problem,
    real_stdout,
    write_text_atomic,
)
from autograd_viz.cli._values import OneLineParser, count, number
from autograd_viz.cli._watched import kill_group, watched_child

STARTUP_LIMIT_S = 120.0  # starting Python and importing torch, before the script's own time
WRITE_LIMIT_S = 120.0  # writing the trace once the script returned (ours, not the script's)
EXIT_GRACE_S = 5.0  # a child that wrote its final status and still runs is ended after this
POLL_S = 0.05
_STARTED, _RAN = "started", "ran"  # the phases the child writes before its final status
_TOKEN_FD = "AUTOGRAD_VIZ_STATUS_FD"  # the inherited pipe holding this run's token


def _say(message: str) -> None:
    print(f"autograd-viz trace: {message}", file=sys.stderr, flush=True)


def _signal_words(code: int) -> str:
    try:
        name = signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"
    return {
        "SIGSEGV": "a segmentation fault (a crash in native code)",
        "SIGBUS": "a bus error (a crash in native code)",
        "SIGABRT": "SIGABRT (native code aborted)",
        "SIGFPE": "SIGFPE (a crash in native code)",
    }.get(name, name)


def _read_status(path: str, token: str) -> tuple[list[str], dict | None]:
    """(the phases the child reached, its final status or None) as it wrote them: only the
    lines that carry this run's token (the script may have written others)."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return [], None
    phases = [line.split(" ", 1)[0] for line in lines if line.endswith(f" {token}")]
    for line in lines:
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                status = json.loads(line)
                if isinstance(status, dict) and status.pop("token", None) == token:
                    return phases, status
    return phases, None


def _token_pipe() -> tuple[str, int]:
    """(a new token, the read end of a pipe that holds it) for the child to inherit."""
    token = secrets.token_hex(16)
    read, write = os.pipe()
    os.write(write, token.encode())  # 32 bytes: far below a pipe's buffer
    os.close(write)
    return token, read


def _take_token() -> str:
    """The child: read this run's token and close its pipe, before the script runs."""
    fd = int(os.environ.pop(_TOKEN_FD, "-1"))
    if fd < 0:
        return ""
    try:
        return os.read(fd, 64).decode("ascii", "replace")
    finally:
        os.close(fd)


def run_in_child(argv: list[str], script_args: list[str], file: Path, timeout: float | None) -> int:
    """Run `trace argv -- script_args` in a child process (cli._watched: everything it
    started is ended, its status file removed); the exit code, and a one-line message on
    failure."""
    token, token_fd = _token_pipe()
    env = dict(os.environ, PYTHONIOENCODING=os.environ.get("PYTHONIOENCODING", "utf-8"))
    env[_TOKEN_FD] = str(token_fd)

    open_fds = [token_fd]

    def watch(process: subprocess.Popen, status_path: str) -> int:
        os.close(open_fds.pop())  # the child has its copy: ours would only keep the pipe open
        return _watch(process, status_path, token, file, timeout)

    try:
        return watched_child(
            "trace", argv, file, watch, after=("--", *script_args), env=env, pass_fds=(token_fd,)
        )
    finally:
        for fd in open_fds:  # the child never started
            os.close(fd)


def _watch(
    process: subprocess.Popen, status_path: str, token: str, file: Path, timeout: float | None
) -> int:
    # Python's start and torch's import get STARTUP_LIMIT_S; the script gets `timeout` from
    # the moment it starts to the child's end (its threads and atexit handlers included),
    # and writing the trace after it returned gets at least WRITE_LIMIT_S more.
    deadline: float | None = time.monotonic() + STARTUP_LIMIT_S
    counting = written = False
    finished_at: float | None = None
    while (code := process.poll()) is None:
        phases, status = _read_status(status_path, token)
        now = time.monotonic()
        if _STARTED in phases and not counting:
            counting = True
            deadline = None if timeout is None else now + timeout
        if _RAN in phases and not written:
            written = True
            deadline = max(deadline or now, now + WRITE_LIMIT_S)
        if status is not None:
            # The child wrote its last word and ends itself with os._exit; one that does
            # not (it cannot, or forged the line and went on) is ended here.
            finished_at = finished_at or now
            if now - finished_at > EXIT_GRACE_S:
                kill_group(process)
                code = process.wait()
                break
        if deadline is not None and now > deadline:
            kill_group(process)
            process.wait()
            if counting:
                _say(f"{file} ran longer than the {timeout:g} s timeout and was stopped")
            else:
                _say(f"Python could not start the script within {STARTUP_LIMIT_S:g} s")
            return ExitCode.TIMEOUT
        time.sleep(POLL_S)
    _, status = _read_status(status_path, token)
    if status is not None:
        if status.get("message"):
            _say(status["message"])
        return int(status.get("code", ExitCode.USER_ERROR))
    if code < 0 and -code == getattr(signal, "SIGKILL", 9):
        _say(f"{file} was killed (SIGKILL), most likely because the machine ran out of memory")
        return ExitCode.OUT_OF_MEMORY
    if code < 0:
        _say(f"{file} crashed Python with {_signal_words(code)}; no trace was written")
    else:
        _say(
            f"{file} ended Python itself (exit code {code}: os._exit() or a fatal error) "
            "before the trace was written"
        )
    return ExitCode.CRASHED


def trace_here(args: argparse.Namespace, code: str) -> int:
    """The child: run the script in this process, write its trace and the final status."""
    status = Path(args.child_status)
    token = _take_token()  # before any of the script's code can read the pipe

    def finish(exit_code: int, message: str = "") -> int:
        with status.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"code": exit_code, "message": message, "token": token}) + "\n")
        return exit_code

    try:
        from autograd_viz.core.capture import DEFAULT_MAX_EVENTS
    except Exception as exc:  # torch cannot be imported: say why in one line
        hidden = shadowing_file("torch")
        print(
            f"autograd-viz trace: {hidden or f'PyTorch cannot be imported: {exc}'}", file=sys.stderr
        )
        return finish(ExitCode.USAGE)
    from autograd_viz.core.capture.graph_capture import DEFAULT_MAX_NODES
    from autograd_viz.core.kernel.limits import (
        apply_process_limits,
        is_out_of_memory,
        memory_limit_words,
    )
    from autograd_viz.core.kernel.runner import resolve_device, run_source, set_torch_threads
    from autograd_viz.core.kernel.script_context import as_python_script, main_module, script_folder
    from autograd_viz.core.platform.self_command import is_frozen

    try:
        device = resolve_device(args.device)
    except (RuntimeError, ValueError) as exc:
        print(f"autograd-viz: --device {args.device}: {exc}", file=sys.stderr)
        return finish(ExitCode.USAGE)

    set_torch_threads()
    try:
        apply_process_limits()
    except ValueError as exc:  # a malformed AUTOGRAD_VIZ_KERNEL_MEMORY_MB
        print(f"autograd-viz: {exc}", file=sys.stderr)
        return finish(ExitCode.USAGE)
    main = main_module(args.file_as_typed)
    script = as_python_script(
        [args.file_as_typed, *args.script_args],
        main,
        script_folder(args.file),
        # Without -P (Python 3.10) `python -m` put the working directory first: replace it.
        replace_first_path=not getattr(sys.flags, "safe_path", False) and not is_frozen(),
    )
    # Trace JSON on stdout: fd 1 is stderr while the script runs (even os.write(1, …) and
    # its subprocesses cannot corrupt the JSON); the JSON goes to the real stdout after.
    redirect = real_stdout() if args.json_out is None else contextlib.nullcontext(sys.stdout)

    def phase(name: str) -> None:
        with status.open("a", encoding="utf-8") as out:
            out.write(f"{name} {token}\n")

    phase(_STARTED)
    with redirect as stdout, script:
        trace = run_source(
            code,
            str(args.file),
            main.__dict__,
            max_nodes=args.max_nodes or DEFAULT_MAX_NODES,
            max_events=args.max_events or DEFAULT_MAX_EVENTS,
            device=device,
        )
    phase(_RAN)
    if args.json_out is None:
        stdout.write(trace.to_json(indent=1) + "\n")
    else:
        try:
            write_text_atomic(args.json_out, trace.to_json(indent=1))
        except OSError as exc:
            print(f"autograd-viz: cannot write {args.json_out}: {exc.strerror}", file=sys.stderr)
            return finish(ExitCode.USAGE)
        print(
            f"autograd-viz: {len(trace.tensors)} tensors, {len(trace.nodes)} nodes, "
            f"{len(trace.errors)} errors -> {args.json_out}",
            file=sys.stderr,
        )
    with contextlib.suppress(OSError, ValueError):  # the script may have closed stdout
        stdout.flush()
    if is_out_of_memory(trace.error):
        line = trace.error.get("line")
        where = f"{args.file}" + (f", line {line}," if line else "")
        limit = memory_limit_words("the script")
        return finish(ExitCode.OUT_OF_MEMORY, f"{where} ran out of memory; {limit}.")
    if not trace.errors:
        return finish(ExitCode.OK)
    # As under python: N for sys.exit(N), 1 (ExitCode.USER_ERROR) for an exception; a syntax
    # error ran nothing and has no run_end.
    run_end = next((e for e in reversed(trace.events) if e["kind"] == "run_end"), {})
    return finish(run_end.get("exit_code") or ExitCode.USER_ERROR)


def _trace_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="autograd-viz trace",
        description="Run a PyTorch script headless and write the autograd trace as JSON. "
        "The script runs in a child process. Exit code 0: ran cleanly; 1: the script "
        "raised (the trace records the error); 2: bad arguments or unreadable file; "
        "3: it ran past --timeout; 4: it crashed Python (os._exit, a segfault); "
        "5: it ran out of memory (see AUTOGRAD_VIZ_KERNEL_MEMORY_MB); a script that calls "
        "sys.exit(N) exits N, as under python.",
        epilog="The script runs as `python FILE.py` would run it: sys.argv is [FILE.py], its "
        "folder is sys.path[0], it is the __main__ module. Arguments after -- are the "
        "script's own: `autograd-viz trace train.py --json out.json -- --epochs 3` gives "
        "it sys.argv == ['train.py', '--epochs', '3']. One difference: torch uses "
        "AUTOGRAD_VIZ_THREADS intra-op threads (default half the cores, as in the app's "
        "kernel), so a sum split across threads (a BatchNorm's statistics) may differ "
        "from `python FILE.py` in its last bits; set it to torch.get_num_threads() of "
        "a plain run to get the very same numbers.",
    )
    parser.add_argument("file", help="the Python script to run")
    parser.add_argument(
        "--timeout",
        type=number(0),
        default=None,
        metavar="S",
        help="stop the script after S seconds of running (default: no limit; starting "
        "Python and importing torch are not counted). The script runs with the kernel's "
        "memory cap (AUTOGRAD_VIZ_KERNEL_MEMORY_MB, in MB or 'off')",
    )
    parser.add_argument("--child-status", default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--json",
        dest="json_out",
        metavar="OUT.json",
        help="where to write the trace, atomically, never over FILE (default: standard "
        "output, with everything the script writes to its stdout sent to standard error)",
    )
    parser.add_argument(
        "--device",
        default=None,
        metavar="DEVICE",
        help="torch's default device while the script runs: auto (cuda when available), "
        "cpu, cuda or cuda:N (default: leave torch's default, the cpu)",
    )
    parser.add_argument(
        "--max-events",
        type=count(1),
        default=None,
        metavar="N",
        help="stop recording events after N, letting the script run on (default 50000)",
    )
    parser.add_argument(
        "--max-nodes",
        type=count(1),
        default=None,
        metavar="N",
        help="give ids to at most N autograd nodes (default 20000)",
    )
    return parser


def trace_main(argv: list[str]) -> int:
    """`autograd-viz trace`: run a script in a child process and write its trace."""
    ours, script_args = split_script_args(argv)
    parser = _trace_parser()
    args, unknown = parser.parse_known_args(ours)
    if unknown:
        parser.error(
            f"unrecognized arguments: {' '.join(unknown)} (the script's own arguments go "
            f"after --: autograd-viz trace {args.file} -- {' '.join(unknown)})"
        )
    args.file_as_typed, args.file = args.file, Path(args.file)  # sys.argv[0] is as typed
    args.script_args = script_args
    if (code := runnable_source(args.file, "autograd-viz trace")) is None:
        return ExitCode.USAGE
    if why := json_output_problem(args.json_out, [args.file]):
        print(f"autograd-viz trace: {why}", file=sys.stderr)
        return ExitCode.USAGE
    args.json_out = absolute_output(args.json_out)  # before the script can os.chdir

    if args.child_status is None:
        return run_in_child(ours, script_args, args.file, args.timeout)
    _exit_now(trace_here(args, code))


def _exit_now(code: int) -> NoReturn:
    """End the child at once, its output flushed: a thread the script left running, or an
    atexit handler of its own, must not keep it alive once the trace is written."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(int(code) & 0xFF)
