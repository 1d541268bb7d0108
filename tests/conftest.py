"""Shared test set-up. Qt needs a platform before anything imports it: without a display
and without QT_QPA_PLATFORM it aborts the whole pytest process."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("AUTOGRAD_VIZ_THREADS", "1")
# Fixtures of a wider scope run before the per-test folder below exists: they get this one.
_SESSION_DATA = tempfile.mkdtemp(prefix="autograd-viz-test-data-")
os.environ["AUTOGRAD_VIZ_DATA_DIR"] = _SESSION_DATA
atexit.register(shutil.rmtree, _SESSION_DATA, ignore_errors=True)


@pytest.fixture(autouse=True)
def _private_user_data(tmp_path_factory, monkeypatch) -> None:
    """Every test gets its own data folder: none ever writes progress into the real home."""
    monkeypatch.setenv("AUTOGRAD_VIZ_DATA_DIR", str(tmp_path_factory.mktemp("user-data")))
