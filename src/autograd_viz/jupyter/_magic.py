"""The `%%autograd_viz` cell magic and the `%autograd_viz` line magic (`%autograd_viz open`
starts the app attached to this kernel). Imported only when the extension loads."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import Any

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.display import display

from autograd_viz.core.kernel.notebook import run_cell
from autograd_viz.jupyter._display import display_bundle

USAGE = (
    "autograd-viz in a notebook:\n"
    "  %%autograd_viz        at the top of a cell: run it under the tracer, show its graph\n"
    "  %autograd_viz open    start the app attached to this kernel; it draws each traced cell"
)


def app_command(connection_file: str) -> list[str]:
    """The command that starts the app attached to the kernel of `connection_file`."""
    return [sys.executable, "-m", "autograd_viz", "--existing", connection_file]


def start_attached_app(connection_file: str) -> subprocess.Popen:
    """Start the app attached to this kernel, detached from it: interrupting or restarting
    the kernel leaves the window open. Its output goes to a log file in the temp folder."""
    log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - the app writes it for as long as it runs
        "w", prefix="autograd-viz-app-", suffix=".log", delete=False
    )
    try:
        return subprocess.Popen(
            app_command(connection_file),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=dict(os.environ),
        )
    finally:
        log.close()


@magics_class
class AutogradVizMagics(Magics):
    """The magics `%load_ext autograd_viz` registers."""

    @cell_magic("autograd_viz")
    def autograd_viz_cell(self, line: str, cell: str) -> None:
        """Run the cell under the tracer in the notebook's namespace and show its graph."""
        __tracebackhide__ = True  # IPython's traceback starts at the learner's own frames
        shell: Any = self.shell
        code = shell.transform_cell(cell)
        # IPython counts the cell before running it: this cell's number is the one before.
        number = max(int(getattr(shell, "execution_count", 1)) - 1, 0) or None
        # IPython's name for a cell's code: its tracebacks then say "Cell In[n], line k".
        filename = shell.compile.cache(code, number or 0, raw_code=cell)
        run = run_cell(code, shell.user_ns, filename, number, script=cell)
        display(display_bundle(run), raw=True)
        if run.error is not None:
            error, run.error = run.error, None  # the kept run does not hold its frames
            raise error

    @line_magic("autograd_viz")
    def autograd_viz_line(self, line: str) -> None:
        """`%autograd_viz open`: start the app attached to this kernel."""
        words = line.split()
        if words != ["open"]:
            print(USAGE)
            return
        try:
            from ipykernel import get_connection_file

            connection_file = get_connection_file()
        except Exception as exc:  # a terminal IPython: no kernel for an app to attach to
            print(f"autograd-viz: this is not a Jupyter kernel, so no app can attach ({exc}).")
            return
        app = start_attached_app(connection_file)
        print(
            f"autograd-viz started (pid {app.pid}), attached to this kernel: each "
            "%%autograd_viz cell you run appears in its window."
        )
