"""Issue 15, item 13: a script that forges `trace`'s status file and ends itself does not
get "exit 0" with no trace written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from autograd_viz.cli import ExitCode

_FORGER = r"""
import os
cmdline = open('/proc/self/cmdline', 'rb').read().split(b'\0')
path = cmdline[cmdline.index(b'--child-status') + 1].decode()
fd = os.environ.get('AUTOGRAD_VIZ_STATUS_FD')  # the token's pipe: gone before we run
token = ''
if fd is not None:
    try:
        token = os.read(int(fd), 64).decode()
    except OSError:
        pass
with open(path, 'a') as out:
    out.write(f'started {token}\nran {token}\n')
    out.write('{"code": 0, "message": "", "token": "%s"}\n' % token)
os._exit(0)
"""


def _trace(script: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autograd_viz", "trace", str(script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )


def test_a_forged_status_is_not_believed(tmp_path: Path) -> None:
    script = tmp_path / "forger.py"
    script.write_text(_FORGER)
    out = tmp_path / "out.json"
    done = _trace(script, "--json", str(out))
    assert not out.exists()  # no trace was written…
    assert done.returncode == ExitCode.CRASHED, done.stderr  # …and the exit code says so
    assert "ended Python itself (exit code 0" in done.stderr


def test_an_honest_run_still_exits_0(tmp_path: Path) -> None:
    script = tmp_path / "honest.py"
    script.write_text("import torch\n(torch.ones(2, requires_grad=True) * 3).sum().backward()\n")
    out = tmp_path / "out.json"
    done = _trace(script, "--json", str(out))
    assert done.returncode == ExitCode.OK, done.stderr
    assert out.exists() and '"nodes"' in out.read_text()
