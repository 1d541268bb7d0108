"""The window's toolbar and menus: File, Edit, Examples, Run, View, Learn."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QToolBar

from autograd_viz.core.platform.preferences import load_keep_variables
from autograd_viz.resources import examples
from autograd_viz.ui.graph.node_search import NodeSearch
from autograd_viz.ui.learning.lessons_pane import ask_reset_progress


def fill_menus(window: Any) -> None:  # the MainWindow (which imports this module)
    """Build the menu bar of `window` from its actions and panes."""
    file_menu = window.menuBar().addMenu("&File")
    window.document.fill_file_menu(file_menu)
    file_menu.addAction(
        window.make_action(
            "Open &trace…",
            lambda: window.traces.open_dialog(),
            "Ctrl+Shift+O",
            "Replay a trace written by `autograd-viz trace --json` (runs nothing)",
        )
    )
    file_menu.addSeparator()
    file_menu.addActions(window.kernel_connection.actions())
    file_menu.addSeparator()
    file_menu.addActions(window.exports.actions())
    file_menu.addSeparator()
    file_menu.addAction(window.make_action("&Quit", window.close, QKeySequence.StandardKey.Quit))
    window.editor_pane.fill_edit_menu(window.menuBar().addMenu("&Edit"))
    example_menu = window.menuBar().addMenu("&Examples")
    for path in examples():
        title = path.stem.replace("_", " ").capitalize()
        example_menu.addAction(
            window.make_action(title, lambda _=False, p=path: window.open_path(p))
        )
    run_menu = window.menuBar().addMenu("&Run")
    for action in (window.run_action, window.stop_action, window.restart_action):
        run_menu.addAction(action)
    run_menu.addSeparator()
    window.keep_variables_action = window.make_action(
        "Keep variables between runs",
        window.keep_variables_toggled,
        None,
        "Off: each run starts from a fresh namespace, as `python file.py` does. "
        "On: variables of one run are there in the next (the graph still shows only "
        "the tensors each run made or touched).",
    )
    window.keep_variables_action.setCheckable(True)
    window.keep_variables_action.setChecked(load_keep_variables())
    window.session.set_keep_variables(window.keep_variables_action.isChecked())
    run_menu.addAction(window.keep_variables_action)
    run_menu.addSeparator()
    run_menu.addAction(
        window.make_action(
            "Pin this run for comparison",
            lambda: window.links.pin_run(),
            "Ctrl+Shift+P",
            "Keep this run; the Compare tab shows what the next runs change",
        )
    )
    view_menu = window.menuBar().addMenu("&View")
    view_menu.addAction(window.fit_action)
    size_by_saved = window.make_action(
        "Size nodes by bytes saved for backward",
        window.canvas.set_size_by_saved,
        None,
        "The more an autograd node saved for its backward, the bigger it is drawn",
    )
    size_by_saved.setCheckable(True)
    view_menu.addAction(size_by_saved)
    view_menu.addMenu(window.theme.build_menu(window))
    window.editor_pane.fill_zoom_menu(view_menu)
    view_menu.addSeparator()
    view_menu.addAction(
        window.make_action(
            "Find node…",
            window.search.focus_all,
            "Ctrl+Shift+F",
            "Find a node by name (Ctrl+Shift+F)",
        )
    )
    learn_menu = window.menuBar().addMenu("&Learn")
    learn_menu.addAction(window.make_action("Lessons", lambda: window.show_tab("Lessons")))
    learn_menu.addAction(window.make_action("Quiz", lambda: window.show_tab("Quiz")))
    learn_menu.addSeparator()
    window.reset_progress_action = window.make_action(
        "Reset progress…",
        lambda: ask_reset_progress(window, window.progress),
        None,
        "Forget every task, exercise, quiz answer and lesson section marked as done",
    )
    learn_menu.addAction(window.reset_progress_action)


def build_toolbar(window: Any) -> None:  # the MainWindow (which imports this module)
    """The window's Run, Stop, Restart kernel and Fit graph actions, and the toolbar that
    holds them with the node search and the device picker."""
    window.run_action = window.make_action(
        "▶ Run", window.run_code, "Ctrl+Return", "Run the editor's code (Ctrl+Enter)"
    )
    window.run_action.setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
    window.stop_action = window.make_action(
        "■ Stop", window.session.interrupt, "Ctrl+.", "Interrupt the running code (Ctrl+.)"
    )
    window.restart_action = window.make_action(
        "Restart kernel",
        window.restart_kernel,
        None,
        "Start a fresh kernel (its variables are lost)",
    )
    window.fit_action = window.make_action(
        "Fit graph", window.canvas.fit, "Ctrl+0", "Zoom the graph to fit (Ctrl+0)"
    )
    window.stop_action.setEnabled(False)
    toolbar = QToolBar("Run")
    toolbar.setObjectName("runToolbar")
    toolbar.setMovable(False)
    for action in (window.run_action, window.stop_action, window.restart_action, window.fit_action):
        toolbar.addAction(action)
    window.search = NodeSearch(window.canvas)
    window.search.inspect.connect(window.run_view.inspect)
    window.search.message.connect(window.statusBar().showMessage)
    toolbar.addSeparator()
    toolbar.addWidget(window.search)
    toolbar.addSeparator()
    toolbar.addWidget(window.device_picker)
    window.addToolBar(toolbar)
