"""Where the Training and Compare tabs and the inspector's answers lead: the graph tab at
a step with a tensor inspected, or a one-line fix made in the editor."""

from __future__ import annotations

from typing import Any

from autograd_viz.core.playback.why_grad import Edit


class RunLinks:
    """The window's moves that one pane asks for and another pane shows."""

    def __init__(self, window: Any) -> None:  # the MainWindow (which imports this module)
        self.window = window

    def pin_run(self) -> None:
        """Keep the shown run for the Compare tab."""
        self.window.compare.pin()
        self.window.statusBar().showMessage(
            "Run pinned: edit the code and run it again; the Compare tab shows what changed.",
            5000,
        )

    def show_tensor(self, tensor: str) -> None:
        """A tensor of the shown run, in the graph and the inspector."""
        window = self.window
        window.tabs.setCurrentWidget(window.graph_area)
        window.run_view.select([tensor])
        window.run_view.inspect(tensor)

    def show_training_step(self, event: int, tensor: str) -> None:
        """A Training view cell: the graph at that optimizer step, the parameter inspected."""
        self.window.tabs.setCurrentWidget(self.window.graph_area)
        if event >= 0:
            self.window.run_view.go_to_event(event)
        self.show_tensor(tensor)

    def apply_fix(self, edit: Edit, script: str) -> None:
        """Make the one-line fix an answer offered, in the editor (one undo step)."""
        window = self.window
        if window.editor.text() != script:
            window.statusBar().showMessage(
                "The code changed since this run: make the fix by hand, or run again.", 6000
            )
            return
        window.editor.apply_line_edit(edit.line, edit.action, edit.text)
        window.statusBar().showMessage(
            f"Changed line {edit.line}: run again (Ctrl+Enter) to see the gradient.", 6000
        )
