"""The descent pane's words: each optimizer's caption line and its readout at the current
step, written so that a narrow pane never breaks a symbol or a "name = value" apart."""

from __future__ import annotations

import html

import numpy as np

from autograd_viz.ui.descent._descent_sweep import Sweep

JOIN = "\u2060"  # word joiner: no line break between the characters it sits between


def _pair(name: str, value: str) -> str:
    # "∂L/∂w" stays one symbol: the word joiner forbids the break Qt allows after "/".
    return f"{name.replace('/', '/' + JOIN)} = {value}"


def readout_lines(sweep: Sweep, index: int, step: int, titles: dict[str, str]) -> list[str]:
    """One plain-text line per optimizer: its point, loss and autograd's gradient at `step`."""
    lines = []
    for name, run in sweep.runs.items():
        path = run.paths[index]
        at = min(step, len(path) - 1)
        w, b, loss = path[at]
        if run.grads is not None:
            dw, db = run.grads[index, at]
            pairs = [("w", w), ("b", b), ("loss", loss), ("∂L/∂w", dw), ("∂L/∂b", db)]
            text = ", ".join(_pair(n, f"{v:.4g}") for n, v in pairs)
            lines.append(f"{titles[name]} step {at}: {text}")
        else:
            extra = sweep.extra
            lines.append(
                f"step {at}: {_pair('α', f'{w:.4g}')}, {_pair('β', f'{b:.4g}')}, "
                f"the model's {_pair('loss', f'{loss:.4g}')}, "
                f"{_pair('‖∇L‖', format(float(extra['grad_norms'][at]), '.4g'))}; the plane "
                f"holds {100 * extra['in_plane'][at]:.0f}% of the way from θ "
                f"({extra['parameters']} parameters, {sweep.device})"
            )
    return lines


_GAP = ' style="padding-left:12px"'  # "3.076" and "-2.091" read as one number without it


def readout_table(
    sweep: Sweep, index: int, step: int, looks: dict[str, tuple[str, str]]
) -> str | None:
    """Two or more optimizers side by side at `step`, as rich text: a row each (its colour
    and name), a column per number (point, loss, autograd's gradient); None when there is
    one optimizer or a model's plane (their line reads better). `looks`: name -> (colour,
    title). Four optimizers' lines wrapped to eight and were cut under the chart."""
    runs = sweep.runs
    if len(runs) < 2 or any(run.grads is None for run in runs.values()):
        return None
    heads = ["w", "b", "loss", "∂L/∂w", "∂L/∂b"]
    rows = []
    at = step
    for name, run in runs.items():
        path = run.paths[index]
        at = min(step, len(path) - 1)
        w, b, loss = path[at]
        dw, db = run.grads[index, at]
        colour, title = looks[name]
        cells = "".join(f'<td align="right"{_GAP}>{v:.4g}</td>' for v in (w, b, loss, dw, db))
        rows.append(
            f'<tr><td><span style="color:{colour}">■</span> {html.escape(title)}</td>{cells}</tr>'
        )
    header = "".join(f'<th align="right"{_GAP}>{h}</th>' for h in heads)
    return (
        '<table cellspacing="0" cellpadding="1" style="margin-top:2px">'
        f'<tr><th align="left">step {at}</th>{header}</tr>{"".join(rows)}</table>'
    )


def caption_line(colour: str, title: str, text: str) -> str:
    """An optimizer's caption as rich text: its colour swatch, its name, the sentence."""
    return f'<span style="color:{colour}">■</span> <b>{title}</b>: {html.escape(text)}'


def legend_corner(sweep: Sweep, index: int, view: tuple[float, float, float, float]) -> int:
    """The corner of the view (0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right) that
    the paths at rate `index` cross least, so the legend covers none of their starts."""
    x0, x1, y0, y1 = view
    points = np.concatenate([run.paths[index, :, :2] for run in sweep.runs.values()])
    points = points[np.isfinite(points).all(axis=1)]
    right = points[:, 0] > (x0 + x1) / 2
    top = points[:, 1] > (y0 + y1) / 2
    counts = [
        int((top & ~right).sum()) * 3,  # a start point weighs like three steps
        int((top & right).sum()) * 3,
        int((~top & ~right).sum()) * 3,
        int((~top & right).sum()) * 3,
    ]
    starts = np.array([run.paths[index, 0, :2] for run in sweep.runs.values()])
    for w, b in starts[np.isfinite(starts).all(axis=1)]:
        counts[(0 if b > (y0 + y1) / 2 else 2) + (1 if w > (x0 + x1) / 2 else 0)] += 1000
    return int(np.argmin(counts))
