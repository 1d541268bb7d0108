"""Shared test set-up. Qt needs a platform before anything imports it: without a display
and without QT_QPA_PLATFORM it aborts the whole pytest process."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("AUTOGRAD_VIZ_THREADS", "1")
