"""scripts/system_deps.sh, the check `make run`, `make test` and .ci/run share: on this
machine it finds nothing missing, quickly; on a machine without Qt's libraries (a fake
`ldconfig` that lists nothing) it names the Debian packages and the one apt-get command,
installs them itself as root or with a password-less sudo, and never runs apt-get when it
may only report. apt-get, sudo, id and ldconfig are fakes on PATH that log their calls, so
nothing here installs anything."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "system_deps.sh"
# What Qt's offscreen and xcb plugins load (`ldd` of PySide6's libQt6Gui, libqxcb) and the
# packages that hold them: the list .ci/run installed before it called the script.
BASE = {
    "libegl1": "libEGL.so.1",
    "libgl1": "libGL.so.1",
    "libfontconfig1": "libfontconfig.so.1",
    "libxkbcommon0": "libxkbcommon.so.0",
    "libglib2.0-0": "libglib-2.0.so.0",
    "libdbus-1-3": "libdbus-1.so.3",
}
WINDOW = {
    "libxcb-cursor0": "libxcb-cursor.so.0",
    "libxkbcommon-x11-0": "libxkbcommon-x11.so.0",
    "libxcb-icccm4": "libxcb-icccm.so.4",
    "libxcb-keysyms1": "libxcb-keysyms.so.1",
    "libxcb-image0": "libxcb-image.so.0",
    "libxcb-randr0": "libxcb-randr.so.0",
    "libxcb-render-util0": "libxcb-render-util.so.0",
    "libxcb-shape0": "libxcb-shape.so.0",
    "libx11-xcb1": "libX11-xcb.so.1",
}
ARCH = {"x86_64": "x86-64", "aarch64": "AArch64"}.get(platform.machine(), "")

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or shutil.which("bash") is None, reason="a Linux set-up check"
)


def _fake(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    path.chmod(0o755)


@pytest.fixture
def bare_machine(tmp_path: Path) -> dict:
    """PATH and folders of a machine without Qt's libraries and fonts, whose apt-get
    'installs' them: afterwards the fake ldconfig lists every soname and a font exists."""
    bin_dir, fonts, log = tmp_path / "bin", tmp_path / "fonts", tmp_path / "calls.log"
    bin_dir.mkdir()
    fonts.mkdir()
    installed = tmp_path / "installed"
    cache = "".join(
        f"\t{soname} (libc6,{ARCH}) => /usr/lib/{soname}\n"
        for soname in {**BASE, **WINDOW}.values()
    )
    (tmp_path / "cache").write_text(cache, encoding="utf-8")
    _fake(
        bin_dir,
        "ldconfig",
        f'echo "0 libs found in cache"\n[ -e {installed} ] && cat {tmp_path / "cache"}\nexit 0\n',
    )
    _fake(
        bin_dir,
        "apt-get",
        f'echo "apt-get $*" >> {log}\n'
        f'case "$1" in install) touch {installed} {fonts}/DejaVuSans.ttf ;; esac\n',
    )
    _fake(bin_dir, "id", 'echo "${FAKE_UID:-1000}"\n')
    _fake(
        bin_dir,
        "sudo",
        f'echo "sudo $*" >> {log}\n'
        'if [ "$1" = -n ]; then [ "${FAKE_SUDO:-no}" = yes ]; exit $?; fi\nexec "$@"\n',
    )
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "QT_QPA_PLATFORM")}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        SYSTEM_DEPS_FONT_DIRS=str(fonts),
        PYTHON=sys.executable,
        VENV=sys.prefix,
    )
    return {"env": env, "log": log}


def _run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


def _calls(machine: dict) -> list[str]:
    log = machine["log"]
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def test_this_machine_lacks_nothing_and_the_check_is_fast():
    """What `make test` checks on every run: nothing missing here, in well under a second."""
    started = time.monotonic()
    done = _run("--check", env={**os.environ, "PYTHON": sys.executable, "VENV": sys.prefix})
    elapsed = time.monotonic() - started
    assert (done.returncode, done.stdout.strip(), done.stderr) == (
        0,
        "system_deps: nothing missing",
        "",
    )
    assert elapsed < 5, f"the check took {elapsed:.1f} s"


def test_check_only_names_the_packages_and_the_one_command_and_runs_nothing(bare_machine):
    done = _run("--check", "--window", env=bare_machine["env"])
    assert done.returncode == 1
    packages = [*BASE, *WINDOW, "fonts-dejavu-core"]
    for soname in [*BASE.values(), *WINDOW.values()]:
        assert soname in done.stderr
    commands = [line.strip() for line in done.stderr.splitlines() if "apt-get install" in line]
    assert commands == [
        "sudo apt-get update && sudo apt-get install -y --no-install-recommends "
        + " ".join(packages)
    ]
    assert _calls(bare_machine) == []  # neither apt-get nor sudo ran


def test_without_window_it_asks_only_for_what_offscreen_qt_loads(bare_machine):
    done = _run("--check", env=bare_machine["env"])
    assert done.returncode == 1
    assert all(package in done.stderr for package in BASE)
    assert not any(package in done.stderr for package in WINDOW)


def test_a_sudo_that_asks_for_a_password_gets_the_command_printed(bare_machine):
    done = _run("--window", env=bare_machine["env"])
    assert done.returncode == 1
    assert "Run:" in done.stderr and "sudo apt-get install" in done.stderr
    assert _calls(bare_machine) == ["sudo -n true"]  # asked, never installed


@pytest.mark.parametrize(
    ("uid", "sudo", "prefix"), [("1000", "yes", "sudo "), ("0", "no", "")], ids=["sudo", "root"]
)
def test_it_installs_what_is_missing_and_says_what_and_why(bare_machine, uid, sudo, prefix):
    env = {**bare_machine["env"], "FAKE_UID": uid, "FAKE_SUDO": sudo}
    done = _run("--window", env=env)
    assert done.returncode == 0, done.stderr
    packages = " ".join([*BASE, *WINDOW, "fonts-dejavu-core"])
    assert f"installing {packages} with {prefix}apt-get" in done.stderr
    assert "libxcb-cursor.so.0" in done.stderr  # why: the library Qt would not find
    installs = [call for call in _calls(bare_machine) if call.startswith("apt-get")]
    assert installs == [
        "apt-get update -qq",
        f"apt-get install -y --no-install-recommends {packages} -qq",
    ]
    assert ("sudo apt-get update -qq" in _calls(bare_machine)) == bool(prefix)
    # Once installed, the next `make run` finds nothing to do.
    again = _run("--window", "--check", env=env)
    assert (again.returncode, again.stdout.strip()) == (0, "system_deps: nothing missing")


def test_offscreen_qt_needs_no_window_libraries(bare_machine):
    env = {**bare_machine["env"], "QT_QPA_PLATFORM": "offscreen"}
    done = _run("--check", "--window", env=env)
    assert not any(package in done.stderr for package in WINDOW)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_run_and_make_test_check_first_and_ci_uses_the_same_script(tmp_path):
    venv = tmp_path / "fresh-venv"

    def dry(target: str) -> list[str]:
        # Under an outer make (.ci/run's `make test`) MAKELEVEL makes this one print
        # "make[1]: Entering directory …" first: run it as a make of its own.
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
        done = subprocess.run(
            ["make", "--no-print-directory", "-n", target, f"VENV={venv}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            env=env,
        )
        return done.stdout.splitlines()

    for target, args in (("run", "--window"), ("test", "--test")):
        lines = dry(target)
        assert lines[0].rstrip().endswith(f"scripts/system_deps.sh {args}".rstrip())
        assert "-m venv" in lines[1]  # the check runs before .venv is made
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "scripts/system_deps.sh" in ci and "apt-get" not in ci  # one list, in the script


def test_a_python_without_venv_support_asks_for_its_venv_package(bare_machine, tmp_path):
    """Debian's python3 has no ensurepip until pythonX.Y-venv is installed, and then
    `python3 -m venv .venv` fails; that is checked only while .venv does not exist."""
    python = tmp_path / "bin" / "python3-debian"
    _fake(
        python.parent,
        python.name,
        f'case "$*" in *"import ensurepip"*) exit 1 ;; esac\nexec {sys.executable} "$@"\n',
    )
    env = {**bare_machine["env"], "PYTHON": str(python), "VENV": str(tmp_path / "no-venv")}
    done = _run("--check", env=env)
    venv_package = "python{}.{}-venv".format(*sys.version_info[:2])
    assert done.returncode == 1 and f" {venv_package}" in done.stderr
    assert venv_package not in _run("--check", env={**env, "VENV": sys.prefix}).stderr


def test_make_test_asks_for_chromium_and_make_run_does_not(bare_machine):
    """The replay page's browser test needs chromium: `--test` (make test, CI) asks for it,
    the app alone never does."""
    env = {**bare_machine["env"], "SYSTEM_DEPS_BROWSER": "no-such-chromium-here"}
    tested = _run("--check", "--test", env=env)
    assert "chromium" in tested.stderr.split("\n")[0]
    plain = _run("--check", env=env)
    assert "chromium" not in plain.stderr
