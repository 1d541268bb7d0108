"""What the player bar's caption says at each moment, in one place: the app's bar and the
replay page (core/share) show the same words."""

from __future__ import annotations

from autograd_viz.core.playback.player import BACKWARD, Player
from autograd_viz.core.playback.run_view import MODE_NAMES


def end_caption(player: Player) -> str:
    """What the bar says before the learner first moves: the graph at the end of the run."""
    # Two lines of the bar: what matters first (its end was cut off: "a seco…").
    error = player.trace.error
    if error is not None:
        at = f" on line {error['line']}" if error.get("line") else ""
        return (
            f"The run stopped{at} ({error['type']}): its graph up to there. "
            "The End key shows what raised; ▶ replays."
        )
    lines = sorted({line for _, line, nodes in player.freeing if nodes and line})
    if not lines:
        return "The graph at the end of the run. Press ▶ (Space) to replay it step by step."
    where = ", ".join(f"line {n}" for n in lines)
    return (
        f"End of the run. Dashed nodes: backward() on {where} freed their saved tensors"
        " (retain_graph=True keeps them). ▶ replays."
    )


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
