"""What the app does once its window is up, besides showing it."""

from __future__ import annotations

import gc
import sys

from autograd_viz.ui import app


def test_the_preload_imports_torch_then_freezes_what_is_loaded(qtbot) -> None:
    gc.unfreeze()  # earlier tests may have frozen objects already
    assert gc.get_freeze_count() == 0
    app._preload_torch()
    # The background import ends by moving torch's objects (and everything else loaded)
    # out of reach of full collections, which would otherwise rescan them on the GUI thread.
    qtbot.waitUntil(lambda: gc.get_freeze_count() > 0, timeout=60_000)
    assert "autograd_viz.core.descent.paths" in sys.modules
