"""Child processes of the app (the trace child, the exercise checker) start the app itself,
which works from an install and from a frozen bundle alike."""

from __future__ import annotations

import sys

from autograd_viz.core.platform import self_command as sc


def test_from_an_install_it_is_python_dash_m(monkeypatch) -> None:
    monkeypatch.delattr(sys, "frozen", raising=False)
    safe_path = ["-P"] if sys.version_info >= (3, 11) else []  # the cwd stays off sys.path
    assert sc.self_command("trace", "x.py") == [
        sys.executable,
        *safe_path,
        "-m",
        "autograd_viz",
        "trace",
        "x.py",
    ]


def test_from_a_bundle_it_is_the_bundle_itself(monkeypatch) -> None:
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", "/opt/autograd-viz/autograd-viz")
    assert sc.self_command("--exercise-child") == [
        "/opt/autograd-viz/autograd-viz",
        "--exercise-child",
    ]
