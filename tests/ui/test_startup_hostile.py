"""Issue 15, item 12, as the learner meets it: the window starts on a damaged data folder
and says what it set aside; bad GUI flags end with exit 2 and one line, before any window."""

from __future__ import annotations

import json

import pytest

from autograd_viz.cli.main import main
from autograd_viz.core.platform.user_data import data_dir, startup_notes
from autograd_viz.ui.app import show_startup_notes
from autograd_viz.ui.main_window import MainWindow

DEEP = "[" * 200_000 + "]" * 200_000


def test_the_window_starts_on_a_hostile_data_folder_and_says_so(qtbot) -> None:
    startup_notes()
    folder = data_dir()
    (folder / "autosave").mkdir()
    untitled = {"text": "kept = 1\n", "pid": "abc", "saved_at": "yesterday"}
    (folder / "autosave" / "untitled.json").write_text(json.dumps(untitled))
    (folder / "progress.json").write_text(DEEP)
    (folder / "settings.json").write_text(DEEP)
    (folder / "recent.json").write_text(json.dumps({"files": ["a\u0000b", "x" * 5000]}))
    window = MainWindow()
    qtbot.addWidget(window)
    window.set_document("", None)  # what `autograd-viz` with no file does
    window.show()
    notes = show_startup_notes(window)
    assert window.isVisible() and window.progress.done == {}
    assert len(notes) == 2 and all(".corrupt-" in note for note in notes)
    assert "progress.json" in window.statusBar().currentMessage()
    assert sorted(p.name.split(".corrupt-")[0] for p in folder.glob("*.corrupt-*")) == [
        "progress.json",
        "settings.json",
    ]
    # The autosave's odd pid and date do not hide its text: it is offered.
    bar = window.editor_pane.recovery_bar
    assert not bar.isHidden() and window.document.recovery.text == "kept = 1\n"
    window.close()


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--view", "descent", "--lr", "0"], "--lr must be a finite number > 0, not 0"),
        (["--view", "descent", "--lr", "-1"], "--lr must be a finite number > 0, not -1"),
        (["--view", "landscape", "--lr", "nan"], "--lr must be a finite number > 0, not nan"),
        (["--timeout", "nan", "--screenshot", "x.png"], "--timeout must be seconds in"),
        (["--timeout", "inf"], "not inf"),
        (["--timeout", "0"], "not 0"),
        (["--timeout", "1e12"], "not 1e+12"),
        (["--step", "0", "--run"], "--step counts from 1"),
        (["--size", "0x500"], "--size wants each side from 200 to 7680 pixels"),
    ],
)
def test_a_bad_gui_flag_exits_2_with_one_line(argv, said, capsys, monkeypatch) -> None:
    import autograd_viz.ui.app as app

    monkeypatch.setattr(app, "launch", lambda **_: pytest.fail("the window was opened"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("autograd-viz: ") and said in err
