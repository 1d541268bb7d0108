"""The wheel: built from this tree, installed into a fresh virtual environment, it gives
working `autograd-viz` and `python -m autograd_viz` commands with every file of the
top-level resources/ folder inside, which the installed app finds, reads and runs; the
installed app takes a screenshot of a seed example offscreen. An editable install reads
the resources where they are, in the source tree."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESOURCES = ROOT / "resources"
# What the installed app says of its resources (run by the installed Python).
WHERE_ARE_THE_RESOURCES = """
import json
import autograd_viz.resources as r
from autograd_viz.core.learning.lessons import load_lessons
print(json.dumps({
    "face": r.__file__,
    "folder": str(r.RESOURCES),
    "icon": r.ICON.is_file(),
    "examples": [p.name for p in r.examples()],
    "first_example": r.DEFAULT_EXAMPLE.read_text(encoding="utf-8"),
    "lessons": [lesson.id for lesson in load_lessons()],
}))
"""


def _shipped_files() -> list[str]:
    """Every file of resources/, as a path relative to it."""
    return sorted(
        p.relative_to(RESOURCES).as_posix()
        for p in RESOURCES.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A copy of this source tree without its build outputs: what a fresh checkout
    builds from. A build/ or egg-info left in the tree would let setuptools ship files
    that the configuration no longer names, and the checks below would not see it."""
    copy = tmp_path_factory.mktemp("checkout") / "autograd_viz"
    build_outputs = shutil.ignore_patterns(
        ".git", ".venv", ".bundle-venv", "build", "dist", "*.egg-info", "__pycache__",
        ".*_cache", "kernel-ipc-*",
    )  # fmt: skip
    shutil.copytree(ROOT, copy, ignore=build_outputs)
    return copy


@pytest.fixture(scope="module")
def wheel(tree: Path, tmp_path_factory) -> Path:
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
            str(tree),
        ],
        check=True,
        timeout=300,
    )
    (found,) = out.glob("autograd_viz-*.whl")
    return found


def test_wheel_holds_the_resources(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = _shipped_files()
    assert {"icons/autograd-viz.svg", "examples/first_graph.py"} <= set(shipped)
    assert any(f.startswith("lessons/") and f.endswith(".md") for f in shipped)
    missing = [f for f in shipped if f"autograd_viz/resources/{f}" not in names]
    assert not missing, f"resources/ files missing from the wheel: {missing}"
    assert "autograd_viz/resources/__init__.py" in names  # the face that finds them
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert (
        "autograd-viz = autograd_viz.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
    )


def _venv(env_dir: Path) -> Path:
    """A fresh venv whose dependencies (torch, PySide6, …) come from this test run's
    environment through a path file, so nothing is downloaded; the editable install of
    the source tree there is not activated (its .pth is not read). Its Python."""
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "_deps_from_test_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return py


def _pip_install(py: Path, *what: str) -> None:
    """Install into the venv of `py`. Without PYTHONPATH: a source tree on it (its
    egg-info) would look to pip like autograd-viz installed already."""
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", *what],
        check=True,
        timeout=300,
        env=_env(),
    )


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed."""
    env_dir = tmp_path_factory.mktemp("venv")
    _pip_install(_venv(env_dir), str(wheel))
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


def _resources_seen_by(py: Path, cwd: Path) -> dict:
    done = subprocess.run(
        [str(py), "-c", WHERE_ARE_THE_RESOURCES],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=cwd,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _as_in_the_source_tree(seen: dict) -> None:
    """The resources the app found are the source tree's: every example, the lessons."""
    assert seen["icon"]
    examples = sorted(p.name for p in (RESOURCES / "examples").glob("*.py"))
    assert sorted(seen["examples"]) == examples
    assert seen["examples"][0] == "first_graph.py"
    first = (RESOURCES / "examples" / "first_graph.py").read_text(encoding="utf-8")
    assert seen["first_example"] == first
    assert len(seen["lessons"]) == len(list((RESOURCES / "lessons").glob("*.md"))) > 0


def test_installed_app_finds_and_reads_its_resources(installed: Path, tmp_path: Path) -> None:
    seen = _resources_seen_by(installed / "bin" / "python", cwd=installed)
    folder = Path(seen["folder"])
    assert folder == Path(seen["face"]).parent  # inside the installed package
    assert folder.is_relative_to(installed) and not folder.is_relative_to(ROOT)
    _as_in_the_source_tree(seen)
    # The installed command runs a shipped example from where it is installed.
    out = tmp_path / "trace.json"
    done = subprocess.run(
        [
            str(installed / "bin" / "autograd-viz"),
            "trace",
            str(folder / "examples" / "first_graph.py"),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=installed,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    trace = json.loads(out.read_text(encoding="utf-8"))
    assert {n["name"] for n in trace["nodes"]} >= {"MulBackward0", "AccumulateGrad"}


def test_editable_install_reads_the_source_tree(tree: Path, tmp_path: Path) -> None:
    py = _venv(tmp_path / "venv")
    _pip_install(py, "--no-build-isolation", "-e", str(tree))
    seen = _resources_seen_by(py, cwd=tmp_path)
    assert Path(seen["face"]).is_relative_to(tree / "src")
    assert Path(seen["folder"]) == tree / "resources"
    _as_in_the_source_tree(seen)


@pytest.mark.slow  # starts the installed app and its kernel
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
