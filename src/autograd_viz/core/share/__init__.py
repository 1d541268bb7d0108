"""Sharing a run outside the app: one self-contained HTML page that replays it
(`page_html`), and the app's picture as SVG (`picture_svg`)."""

from autograd_viz.core.share._frames import replay_frames
from autograd_viz.core.share.replay_page import (
    page_html,
    picture_svg,
    run_page,
    run_picture,
    shown_run,
)

__all__ = [
    "page_html",
    "picture_svg",
    "replay_frames",
    "run_page",
    "run_picture",
    "shown_run",
]
