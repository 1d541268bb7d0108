"""How the canvas's markers look: each node kind's brush, pen and size in each playback
state (normal, faded, lit, freed, failed), at the share of their size the zoom leaves
room for. A base of GraphCanvas, whose `_markers`, `_kinds`, `_states`, `_looks`,
`_scales`, `_crowd`, `_pitch`, `_row_room`, `_tallest_px`, `colours` and `dark` it uses."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtGui import QBrush, QPen

from autograd_viz.ui.graph._crowding import crowd_share, room_share
from autograd_viz.ui.graph._graph_style import marker_look

# A marker's looks during playback; "failed": what an error step lights (the operands of
# the call that raised, the freed node a second backward met), ringed in red.
STATES = ("normal", "faded", "lit", "freed", "failed")


class MarkerStyling:
    """The canvas's marker looks, restyled per playback step and per zoom."""

    _markers: Any
    _kinds: list[str]
    _states: np.ndarray
    _looks: dict[tuple[str, str], tuple[QBrush, QPen, int]]
    _scales: np.ndarray | None
    _crowd: float
    _pitch: float | None
    _row_room: float | None
    _tallest_px: float
    colours: Any
    dark: bool

    def _look(self, kind: str, state: str) -> tuple[QBrush, QPen, int]:
        """The brush, pen and size of a node kind in a playback state. The same objects are
        reused, so pyqtgraph's symbol atlas renders each look once, not once per frame."""
        key = (kind, state)
        look = self._looks.get(key)
        if look is None:
            look = self._looks[key] = marker_look(kind, state, self.colours, self.dark)
        return look

    def _fit_crowd(self) -> None:
        """Draw the markers at the share of their size this zoom leaves room for."""
        box = self.getViewBox()
        (x0, x1), (y0, y1) = box.viewRange()
        if y1 <= y0 or x1 <= x0 or not self._kinds:
            return
        crowd = min(
            crowd_share(self._pitch, box.height() / (y1 - y0), self._tallest_px),
            room_share(self._row_room, box.width() / (x1 - x0)),
        )
        if crowd != self._crowd:
            self._crowd = crowd
            self._restyle(self._states, every=True)

    def _restyle(self, codes: np.ndarray, every: bool = False) -> None:
        """Give each marker the look of its state (an index into STATES), touching only
        markers whose state changed (a playback step changes a handful of 10,000), or
        `every` one (their share of their size changed with the zoom)."""
        previous = self._states
        self._states = codes
        data = self._markers.data
        kinds = self._kinds
        if every:
            changed = np.arange(len(data))
        elif len(previous) == len(codes) == len(data):
            changed = np.flatnonzero(previous != codes)
            if not len(changed):
                return
        else:
            changed = np.arange(len(codes))
        brushes, pens, sizes = data["brush"], data["pen"], data["size"]
        scales, crowd = self._scales, self._crowd
        for i in changed.tolist():
            brushes[i], pens[i], sizes[i] = self._look(kinds[i], STATES[codes[i]])
            sizes[i] *= crowd
            if scales is not None:
                sizes[i] *= scales[i]
        data["sourceRect"][changed] = 0  # looked up again in the symbol atlas
        self._markers.updateSpots()
