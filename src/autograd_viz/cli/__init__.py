"""The `autograd-viz` command: the GUI launcher and the headless commands (`trace`,
`descent`, `landscape`, `check`, `gradcheck`). Importing it loads no Qt and no torch."""

from autograd_viz.cli._common import ExitCode
from autograd_viz.cli.main import main

__all__ = ["ExitCode", "main"]
