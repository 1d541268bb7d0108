"""The wheel: built from this tree, installed into a fresh virtual environment, it gives
working `autograd-viz` and `python -m autograd_viz` commands with every resource inside,
and the installed app takes a screenshot of a seed example offscreen."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        timeout=300,
    )
    (found,) = out.glob("autograd_viz-*.whl")
    return found


def test_wheel_holds_the_resources(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "autograd_viz/resources/icons/autograd-viz.svg",
        "autograd_viz/resources/examples/first_graph.py",
        "autograd_viz/resources/lessons/",
    ):
        assert any(n.startswith(needed) for n in names), needed
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert (
        "autograd-viz = autograd_viz.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
    )


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed. Its dependencies (torch, PySide6, …) come from
    this test run's environment through a path file, so nothing is downloaded; the
    editable install of the source tree there is not activated (its .pth is not read)."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "_deps_from_test_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "--no-deps",
            "-q",
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    return env_dir


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


def test_installed_commands_come_from_the_wheel(installed: Path) -> None:
    bin_dir = installed / "bin"
    where = subprocess.run(
        [str(bin_dir / "python"), "-c", "import autograd_viz; print(autograd_viz.__file__)"],
        check=True,
        capture_output=True,
        text=True,
        env=_env(),
        cwd=installed,
    ).stdout
    assert str(installed) in where  # not the source tree
    for command in (
        [str(bin_dir / "autograd-viz"), "--version"],
        [str(bin_dir / "python"), "-m", "autograd_viz", "--version"],
    ):
        done = subprocess.run(
            command, capture_output=True, text=True, env=_env(), cwd=installed, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("autograd-viz 0.")
    helped = subprocess.run(
        [str(bin_dir / "autograd-viz"), "--help"],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=installed,
        timeout=60,
    )
    assert "--screenshot" in helped.stdout


def test_installed_app_screenshots_a_seed_example(installed: Path, tmp_path: Path) -> None:
    from PIL import Image

    example = installed / "example.py"
    example.write_text(
        "import torch\n"
        "w = torch.tensor(3.0, requires_grad=True)\n"
        "x = torch.tensor(2.0)\n"
        "b = torch.tensor(1.0, requires_grad=True)\n"
        "loss = (w * x + b - 5) ** 2\n"
        "loss.backward()\n"
    )
    shot = tmp_path / "shot.png"
    done = subprocess.run(
        [
            str(installed / "bin" / "autograd-viz"),
            str(example),
            "--run",
            "--screenshot",
            str(shot),
            "--timeout",
            "120",
        ],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=installed,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    assert image.size[0] > 800 and image.size[1] > 500
    assert len(image.getcolors(maxcolors=1 << 20)) > 50  # a real window, not a blank frame
