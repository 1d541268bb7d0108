"""What the graph tab shows now: one evented model that every pane follows.

A `RunView` owns the shown run (its trace, drawn graph, player and line map), the collapsed
modules, the selection and the message the canvas shows when there is no graph. The
canvas, the player bar, the editor's line highlight and the inspector subscribe to its
signals (napari's `QtDims(dims)` pattern); none of them relays state to another. It has
no Qt in it, so it is tested without a display.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from psygnal import Signal

from autograd_viz.core.graph.folding import READABLE_HEIGHT, READABLE_WIDTH
from autograd_viz.core.graph.graph_model import DrawnGraph, drawn_graph
from autograd_viz.core.platform.gc_pause import collections_postponed
from autograd_viz.core.playback.player import BACKWARD, EVERYTHING, FORWARD, Frame, Player
from autograd_viz.core.playback.run_text import no_graph, nothing_ran
from autograd_viz.core.playback.saved_memory import HeldMemory, held_memory
from autograd_viz.core.playback.source_map import SourceMap
from autograd_viz.core.trace import TensorValue, Trace

BACKGROUND_REFOLD = 2_000  # graphs of more nodes are folded and opened off the GUI thread
EMPTY_MESSAGE = "Run your code (Ctrl+Enter) to see the graph PyTorch builds."
# The player's views in the learner's words: the mode buttons, captions and inspector say
# these ("Both", not the code's "all").
MODE_NAMES = {FORWARD: "Forward", BACKWARD: "Backward", EVERYTHING: "Both"}
# Steps that a backward() call runs: their node was made on another line than the call.
_IN_BACKWARD = frozenset({"node", "accumulate", "retained_grad"})


@dataclass(frozen=True)
class ShownRun:
    """One run, ready to show: its trace, the graph drawn of it, the player, the line map."""

    trace: Trace
    graph: DrawnGraph
    player: Player = field(compare=False)
    # What is measured of the run when first asked; shared by the copies a refold makes.
    _measured: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def source_map(self) -> SourceMap:
        """Which line made which tensor and node: made when first asked (for a big run by
        the replay job, after the picture is shown: the 8k-node RNN's takes 25-35 ms)."""
        source_map = self._measured.get("source_map")
        if source_map is None:
            source_map = self._measured["source_map"] = SourceMap(self.trace)
        return source_map

    @property
    def freeing(self) -> list:
        """Which nodes each backward pass freed (the player computed it once)."""
        return self.player.freeing

    @property
    def memory(self) -> HeldMemory:
        """What the graph holds for backward at each event, measured when first asked
        (the memory bar asks on a worker thread for a big run)."""
        memory = self._measured.get("memory")
        if memory is None:
            memory = self._measured["memory"] = held_memory(self.trace)
        return memory

    @property
    def measured_memory(self) -> HeldMemory | None:
        """`memory` if it was measured already (a view on the GUI thread must not wait)."""
        return self._measured.get("memory")


def prepare_run(
    trace: Trace,
    collapsed: frozenset[str] | None = None,
    previous: dict | None = None,
    choices: Mapping[str, bool] | None = None,
    replay_later: bool = False,
    readable_width: float = READABLE_WIDTH,
    readable_height: float = READABLE_HEIGHT,
) -> ShownRun:
    """Everything needed to show a trace, built in one go (on a worker thread for a big
    one): the layout, the player with its first view's steps, the source line map.
    `collapsed` None folds what a first look needs, with the learner's `choices` (group
    key -> opened, from earlier runs) applied. `replay_later`: the player's tables and the
    line map are left for `run.player.prepare()` and `run.source_map`, so the picture can
    be shown first. `readable_width`, `readable_height`: see `drawn_graph`."""
    with collections_postponed():
        graph = drawn_graph(
            trace,
            collapsed,
            previous,
            choices=choices,
            readable_width=readable_width,
            readable_height=readable_height,
        )
        player = Player(trace, graph, prepared=not replay_later)
        shown = ShownRun(trace, graph, player)
        if not replay_later:
            shown.source_map  # noqa: B018 (made now, with the rest)
        return shown


class RunView:
    """The run the graph tab shows, the player's position in it, and what is selected."""

    run_changed = Signal(object)  # a ShownRun, or None when no graph is shown
    graph_changed = Signal()  # the shown run's drawn graph changed (a module opened/closed)
    frame_changed = Signal()  # the player moved, or switched between forward and backward
    selection_changed = Signal(tuple)  # the selected tensor/node keys
    message_changed = Signal(str)  # what the canvas says over an empty graph ("" when drawn)
    player_ready = Signal()  # the shown run's player has its steps (see prepare_run)
    inspected_changed = Signal(str)  # the tensor or node the inspector shows ("" for none)

    def __init__(self) -> None:
        self.run: ShownRun | None = None
        self.collapsed: frozenset[str] = frozenset()
        # What the learner opened (True) or folded (False) by hand, by group key: kept
        # across runs, so re-running edited code keeps the picture's folds.
        self.fold_choices: dict[str, bool] = {}
        self.selection: tuple[str, ...] = ()
        self.inspected = ""
        self.message = EMPTY_MESSAGE
        # Runs a big graph's new layout elsewhere (the canvas gives a worker thread):
        # runner(work, done) calls done(work()) later, on this object's thread.
        self.refold_runner: Callable[[Callable[[], DrawnGraph], Callable], None] | None = None
        self._refolding: object | None = None
        # The group the learner's last toggle opened (the canvas zooms to it), else None.
        self.last_opened: str | None = None

    # ---- what is shown ----------------------------------------------------------
    @property
    def trace(self) -> Trace | None:
        """The shown run's trace."""
        return self.run.trace if self.run is not None else None

    @property
    def graph(self) -> DrawnGraph:
        """The shown run's drawn graph (empty when none is shown)."""
        return self.run.graph if self.run is not None else DrawnGraph()

    @property
    def player(self) -> Player | None:
        """The shown run's player."""
        return self.run.player if self.run is not None else None

    @property
    def source_map(self) -> SourceMap | None:
        """Which line made which tensor and node, for the shown run."""
        return self.run.source_map if self.run is not None else None

    def show(self, run: ShownRun) -> None:
        """Show a new run: everything earlier (graph, player, selection) is dropped."""
        self._unfollow()
        self.run = run
        self.collapsed = run.graph.collapsed
        self.selection = ()
        # A change of view seeks to its start, so position_changed covers it (mode_changed
        # comes first, while the position still belongs to the old view).
        run.player.position_changed.connect(self._player_moved)
        said = nothing_ran(run.trace) or ("" if run.graph.nodes else no_graph(run.trace))
        self._say(said)
        self.run_changed.emit(run)
        self.selection_changed.emit(())
        self._uninspect()

    def replay_prepared(self, run: ShownRun) -> None:
        """`run`'s player has built its tables (on a worker): say so, if it is still shown."""
        if run is self.run or (self.run is not None and run.player is self.run.player):
            self.player_ready.emit()

    def clear(self, message: str = EMPTY_MESSAGE) -> None:
        """Show no run, and say why (the kernel died, nothing ran yet)."""
        self._unfollow()
        self.run = None
        self.collapsed = frozenset()
        self.selection = ()
        self._say(message)
        self.run_changed.emit(None)
        self.selection_changed.emit(())
        self._uninspect()

    def say(self, message: str) -> None:
        """Put a message over the canvas (a layout in progress), keeping what is shown."""
        self._say(message)

    def _say(self, message: str) -> None:
        if message != self.message:
            self.message = message
        self.message_changed.emit(message)

    def _unfollow(self) -> None:
        if self.run is not None:
            self.run.player.position_changed.disconnect(self._player_moved)

    def _player_moved(self, *_args: Any) -> None:
        self.frame_changed.emit()

    # ---- modules ------------------------------------------------------------------
    def toggle_module(self, path: str) -> None:
        """Fold an open group (a module, a loop, a repeat) to one box, or open a folded
        one a level. The drawn graph changes; the player keeps its view and step."""
        if self.run is None:
            return
        opening = path in self.collapsed
        self.fold_choices[path] = opening
        self.last_opened = path if opening else None
        self._refold(self.collapsed ^ {path})

    def fold_all(self) -> None:
        """Fold every group: the picture's top level, each group a box."""
        self._choose(self.folds(), False)

    def open_all(self) -> None:
        """Open every group: every node drawn, in its frames."""
        self._choose(self.folds(), True)

    def open_to_depth(self, depth: int) -> None:
        """Open groups down to `depth` levels (1: the top-level groups open, what is in
        them folded; 0: the same as fold_all)."""
        self.last_opened = None
        folds = self.folds()
        for key, info in folds.items():
            self.fold_choices[key] = info.depth <= depth
        self._refold({k for k, info in folds.items() if info.depth > depth})

    def folds(self) -> dict[str, Any]:
        """Every group of the shown picture by key (FoldInfo: kind, title, parent, depth)."""
        return dict(self.graph.folds)

    def breadcrumb(self, key: str) -> list[str]:
        """The groups a drawn item sits in, outermost first (a box: its own group last)."""
        folds = self.graph.folds
        home = key[2:] if key.startswith("m:") else self._home(key)
        chain: list[str] = []
        while home:
            chain.append(home)
            home = folds[home].parent if home in folds else None
        return chain[::-1]

    def _home(self, key: str) -> str | None:
        """The innermost open group holding a drawn item."""
        depth = self.graph.folds
        holding = [k for k, members in self.graph.groups.items() if key in members]
        return max(holding, key=lambda k: depth[k].depth if k in depth else 0, default=None)

    def _choose(self, keys: Iterable[str], opened: bool) -> None:
        self.last_opened = None
        keys = list(keys)
        for key in keys:
            self.fold_choices[key] = opened
        self._refold(set() if opened else set(keys))

    def _refold(self, collapsed: Iterable[str]) -> None:
        if self.run is None:
            return
        run = self.run
        work = partial(
            drawn_graph, run.trace, set(collapsed), run.graph.heights(), run.graph.folding
        )
        folding = run.graph.folding
        big = folding is not None and folding.base.number_of_nodes() > BACKGROUND_REFOLD
        if self.refold_runner is None or not big:
            self._refolded(run, None, work())
            return
        # A big graph is laid out off the caller's thread; the newest request wins.
        token = self._refolding = object()
        self._say("Laying out…")
        self.refold_runner(work, lambda graph: self._refolded(run, token, graph))

    def _refolded(self, run: ShownRun, token: object | None, graph: DrawnGraph) -> None:
        if self.run is not run or (token is not None and token is not self._refolding):
            return  # another run, or a newer fold, came meanwhile
        if token is not None:
            self._refolding = None
            self._say("")
        self.collapsed = graph.collapsed
        run.player.use_graph(graph)
        self.run = replace(run, graph=graph)
        self.selection = tuple(k for k in self.selection if k in graph.nodes)
        self.graph_changed.emit()
        self.selection_changed.emit(self.selection)

    # ---- the player's moment ------------------------------------------------------
    def frame(self) -> Frame | None:
        """What the canvas draws now; None: the state at the end of the run."""
        if self.run is None or not self.run.player.moved:
            return None
        return self.run.player.frame()

    def current_line(self) -> int | None:
        """The source line of the step shown now, if any (for a backward node, the
        backward() call: `current_lines` also gives the line that made the node)."""
        if self.run is None or not self.run.player.moved:
            return None
        step = self.run.player.current
        return step.line if step is not None else None

    def current_lines(self) -> tuple[int | None, int | None]:
        """The line to highlight now and the line that called it, if another: a backward
        step highlights the line that made its node (a leaf's AccumulateGrad: the leaf's
        line) and gives its backward() line as the caller; other steps have no caller."""
        line = self.current_line()
        step = self.run.player.current if line is not None else None
        if step is None or step.kind not in _IN_BACKWARD:
            return line, None
        e = self.run.trace.index.event(step.event_index)
        made = self.line_of(getattr(e, "node", None) or "") or self.line_of(
            getattr(e, "tensor", None) or ""
        )
        if made is None or made == line:
            return line, None
        return made, line

    def go_to_event(self, event: int) -> None:
        """Put the player, in Both, on the step of trace event `event` (the first step at
        or after it): a Training view cell's optimizer step."""
        if self.run is None:
            return
        player = self.run.player
        player.set_mode(EVERYTHING)
        positions = [step.event_index for step in player.steps]
        player.seek(min(bisect_left(positions, event), len(positions) - 1))

    def mode_name(self) -> str:
        """The shown player's view as the learner's buttons name it ("" with no run)."""
        return MODE_NAMES[self.run.player.mode] if self.run is not None else ""

    def event_index(self) -> int | None:
        """Index in the trace's events of the moment shown (None: the end of the run)."""
        if self.run is None or not self.run.player.moved:
            return None
        return self.run.player.event_index()

    def value_now(self, tensor_id: str) -> tuple[TensorValue | None, bool]:
        """A tensor's value at the moment shown, and whether it existed by then."""
        return self._as_of(tensor_id, "value")

    def grad_now(self, tensor_id: str) -> tuple[TensorValue | None, bool]:
        """A tensor's `.grad` at the moment shown (None where torch's was None), and
        whether the tensor existed by then."""
        return self._as_of(tensor_id, "grad")

    def _as_of(self, tensor_id: str, what: str) -> tuple[TensorValue | None, bool]:
        trace = self.trace
        if trace is None:
            return None, False
        info = trace.tensor(tensor_id)
        end = info.value if what == "value" else info.grad
        index = self.event_index()
        if index is None:
            return end, True
        player, last = self.run.player, len(trace.events) - 1
        if player.value_at(tensor_id, last) is not None:  # an event made it: since when?
            if player.value_at(tensor_id, index) is None:
                return None, False  # not computed yet at this step
        elif what == "value":
            return end, True  # no event carried its value: only the end one is known
        if what == "value":
            return _tensor_value(player.value_at(tensor_id, index)), True
        if player.grad_at(tensor_id, last) is None and end is not None:
            return end, True  # .grad set in a way no event records: only its end is known
        return _tensor_value(player.grad_at(tensor_id, index)), True

    def node_grads_now(self, node_id: str) -> dict[str, Any] | None:
        """The gradients a node received and sent in the latest run of it up to the
        moment shown: the `node` event ({grads_in, grads_out, ...}), or None."""
        trace = self.trace
        if trace is None:
            return None
        index = self.event_index()
        last = len(trace.events) - 1 if index is None else index
        runs = [i for i in trace.index.of_node(node_id) if trace.events[i]["kind"] == "node"]
        before = [i for i in runs if i <= last]
        return trace.events[before[-1]] if before else None

    # ---- selection ----------------------------------------------------------------
    def select(self, keys: list[str] | tuple[str, ...]) -> None:
        """Select drawn items (a click, a search hit, the nodes of the editor's line)."""
        keys = tuple(k for k in keys if k in self.graph.nodes)
        if keys != self.selection:
            self.selection = keys
            self.selection_changed.emit(keys)

    def inspect(self, key: str) -> None:
        """Select one tensor, node or folded group's box (a click on it) and show it in
        the inspector; no_grad ops have only their tooltip."""
        if not key.startswith(("t", "n", "m:")) or key not in self.graph.nodes:
            return
        self.select((key,))
        self.inspected = key
        self.inspected_changed.emit(key)

    def _uninspect(self) -> None:
        if self.inspected:
            self.inspected = ""
            self.inspected_changed.emit("")

    def line_of(self, key: str) -> int | None:
        """The source line that made a tensor or node of the shown run."""
        source_map = self.source_map
        return source_map.line_of.get(key) if source_map is not None else None

    def ids_on(self, line: int) -> list[str]:
        """The drawn items a source line made."""
        source_map = self.source_map
        return source_map.ids_on(line) if source_map is not None else []


def _tensor_value(d: dict[str, Any] | TensorValue | None) -> TensorValue | None:
    if d is None or isinstance(d, TensorValue):
        return d
    known = TensorValue.__dataclass_fields__
    return TensorValue(**{k: v for k, v in d.items() if k in known})
