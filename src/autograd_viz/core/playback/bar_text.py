"""What the player bar's caption says at each moment, in one place: the app's bar and the
replay page (core/share) show the same words."""

from __future__ import annotations

from autograd_viz.core.playback.player import BACKWARD, Player
from autograd_viz.core.playback.run_view import MODE_NAMES


def end_caption(player: Player) -> str:
    """What the bar says before the learner first moves: the graph at the end of the run."""
    text = "The graph as it stands at the end of the run."
    lines = sorted({line for _, line, nodes in player.freeing if nodes and line})
    if lines:
        where = ", ".join(f"line {n}" for n in lines)
        text += (
            f" Dashed nodes: their saved tensors were freed by backward() on {where};"
            " a second backward through them needs retain_graph=True."
        )
    return text + " Press ▶ (Space) to replay it step by step."


def start_caption(player: Player) -> str:
    """What the bar says at the start of the player's view (position -1)."""
    name, count = MODE_NAMES[player.mode], len(player.steps)
    if not count:
        what = "called no backward()" if player.mode == BACKWARD else "ran no torch op"
        return f"The {name} view has no steps: this run {what}. The graph shows its end."
    if player.mode == BACKWARD and player.start_index() >= 0:
        return (
            f"Start of the {name} view: the forward has run, its values are shown. "
            f"{count} steps. Press ▶ or →."
        )
    return f"Start of the {name} view: {count} steps. Press ▶ or →."


def caption_now(player: Player) -> str:
    """What the bar says at the player's position: the step's caption, and below it what
    the view skipped since the previous step, if anything."""
    step = player.current
    if step is None:
        return start_caption(player)
    note = player.unseen_changes()
    return step.caption + (f"\n{note}" if note else "")
