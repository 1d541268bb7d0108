"""Stable ids for the tensors and autograd nodes a run touches."""

from __future__ import annotations

import itertools
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

import torch

from autograd_viz.core.capture._saved import saved_tensors
from autograd_viz.core.trace import NodeInfo

_runs = itertools.count()
_COMPACT_AT = 4096  # unindexed ids kept before the dead among them are dropped
_DTYPE_NAMES: dict[Any, str] = {}  # torch.float32 -> "float32", filled as met


def grad_fn_of(t: torch.Tensor) -> Any:
    """`t.grad_fn`, or None where torch refuses to give it: a view made under no_grad
    whose base was then written in place raises on every read of its grad_fn (and
    is_leaf). The user's program never asked, so the recorder must not fail there."""
    try:
        return t.grad_fn
    except RecursionError:  # the user's own error, deep in their recursion: theirs
        raise
    except RuntimeError:
        return None


def is_leaf(t: torch.Tensor) -> bool:
    """`t.is_leaf`, read as safely as `grad_fn_of`. Torch refuses to say only for a view
    whose base was written in place since. Made under no_grad (or in inference mode), it
    had no history: a leaf, as torch said before the write. Made with grad on (`a, b =
    x.chunk(2)`), it is no leaf: its grad_fn is there, only unreadable now."""
    try:
        return bool(t.is_leaf)
    except RecursionError:
        raise
    except RuntimeError as error:
        return "no_grad mode" in str(error) or "inference mode" in str(error)


class Registry:
    """Hands out ids `t0, t1, …` for tensors and `n0, n1, …` for autograd nodes.

    Neither is kept alive by tracing. Tensors are held weakly: a tensor's Python object
    is stable while the tensor lives, so id() is a safe key while the weak reference is
    alive. Nodes cannot be weakly referenced, so a node's id is written into the node's
    own `metadata` dict (under a key unique to this run) and dies with it. Each node's
    name and edges are recorded once, when it is first seen; past `max_nodes` new nodes
    get no id and `nodes_capped` says so.
    """

    def __init__(self, max_nodes: int) -> None:
        self.max_nodes = max_nodes
        self._key = f"autograd_viz.node.{next(_runs)}"
        self._tensor_ids: dict[int, tuple[Any, str]] = {}
        self._views: dict[int, list[tuple[Any, str]]] = {}  # id(base) -> its views with ids
        # Tensors on one memory without being views of each other (`w.detach()`, `w.data`,
        # `torch.from_numpy(a.numpy())`, a state_dict's entries): indexed by where their
        # storage begins, lazily, at the first in-place write (see `sharing_memory`).
        self._by_storage: dict[int, list[tuple[Any, str]]] = {}
        self._unindexed: list[tuple[Any, str]] = []
        self._compact_at = self._sweep_at = _COMPACT_AT
        self.tensor_count = 0  # how many tensors have been given an id so far
        self.nodes: dict[str, NodeInfo] = {}
        self.nodes_capped = False
        # Called with (node, id) for each node given an id (the tracer hooks it there).
        self.on_new_node: Callable[[Any, str], None] | None = None
        self._storages: dict[int, str] = {}  # a saved storage's address -> its id
        # What `empty`-like ops made, by storage address, until something writes that
        # memory through another tensor object (`w.data.fill_(2)`, `e.numpy()[:] = 1`):
        # those ids go to `written_empties` (graph_capture's `uninitialised` skips them).
        self.empties: dict[int, str] = {}
        # Tensors without grad the user named (or cut by detach), which may be gone by the
        # end: id -> (shape, dtype, device, a snapshot of the value); see graph_capture.
        self.constants: dict[str, tuple[list[int], str, str, dict[str, Any] | None]] = {}
        self.leaf_hooks: dict[str, list[dict[str, Any]]] = {}  # leaf id -> its hooks
        # The leaves AccumulateGrad nodes write into: id -> (shape, dtype, device), for
        # one gone by the end (the copy `jacobian` makes of its input); see graph_capture.
        self.leaves: dict[str, tuple[list[int], str, str]] = {}
        # A parameter or buffer of a module the user's code held only in a function's local
        # (`def main(): model = nn.Linear(2, 1)`) -> its path from that local
        # (`model.weight`): its name where the script's end leaves it unnamed.
        self.local_paths: dict[str, str] = {}
        # A torch.func wrapper -> the user's local that held it (see _tracer).
        self.transform_names: dict[str, str] = {}
        self.written_empties: set[str] = set()
        self._releases = _Releases()

    @property
    def clock(self) -> Callable[[], int] | None:
        """How many events the run has recorded so far (the tracer sets it): a node that
        saved tensors is stamped with it when it gets an id, and again if Python lets go
        of it before the run ends (`end`)."""
        return self._releases.clock

    @clock.setter
    def clock(self, clock: Callable[[], int] | None) -> None:
        self._releases.clock = clock

    # ---- tensors ----------------------------------------------------------------
    def tensor_id(self, t: torch.Tensor) -> str:
        """The id of `t`, assigning one the first time it is seen."""
        key = id(t)
        entry = self._tensor_ids.get(key)
        if entry is not None and entry[0]() is t:
            return entry[1]
        tid = f"t{self.tensor_count}"
        self.tensor_count += 1

        def forget(ref: Any, key: int = key) -> None:
            current = self._tensor_ids.get(key)
            if current is not None and current[0] is ref:
                del self._tensor_ids[key]

        try:
            ref: Any = weakref.ref(t, forget)
        except TypeError:  # a tensor-like without weakref support: keep it alive instead
            ref = _Strong(t)
        self._tensor_ids[key] = (ref, tid)
        unindexed = self._unindexed
        unindexed.append((ref, tid))
        if len(unindexed) > self._compact_at:
            # Keep only the living (a loop makes and drops many), and wait twice as long
            # for the next sweep when most live on (the RNN keeps every step's `h`).
            unindexed[:] = [(r, i) for r, i in unindexed if r() is not None]
            self._compact_at = max(_COMPACT_AT, 2 * len(unindexed))
        base = t._base
        if base is not None:  # a view: an in-place write to it, or to its base, is theirs too
            self._views.setdefault(id(base), []).append((ref, tid))
        return tid

    def known_id(self, t: torch.Tensor) -> str | None:
        """The id of `t` if it has one (none is handed out)."""
        entry = self._tensor_ids.get(id(t))
        return entry[1] if entry is not None and entry[0]() is t else None

    def sharing_memory(self, t: torch.Tensor) -> list[tuple[str, torch.Tensor]]:
        """The tensors with ids that an in-place write to `t` writes too, alive, `t` left
        out: its base and the base's other views (`r = q.t(); r[0].add_(1)` writes q and
        r), and every tensor on the same memory without being a view of it (`d =
        w.detach(); d[0] = 10` writes w; so do `w.data`, NumPy's `from_numpy` and a
        state_dict's entries)."""
        base = t._base if t._base is not None else t
        found = []
        address = _address(t)
        span = _span(t)
        if base is not t and (bid := self.known_id(base)) is not None:
            found.append((bid, base))
        views = self._views.get(id(base))
        if views:
            # The dead go as they are met: `x[i].add_(1)` in a loop makes a view a step
            # that dies with the statement, and the list would grow with every step.
            alive = [(ref, vid) for ref, vid in views if ref() is not None]
            views[:] = alive
            for ref, vid in alive:
                view = ref()
                # Still on that memory (`a.set_(c)` moves a off it, not its old views),
                # and on the part of it the write reached (`a, b = x.chunk(2)`: a's write
                # leaves b as it was).
                if (
                    view is not None
                    and view is not t
                    and view._base is base
                    and _address(view) == address
                    and _overlap(span, _span(view))
                ):
                    found.append((vid, view))
        if address:
            self._index()
            sharers = self._by_storage.get(address)
            if sharers:
                alive = [(ref, sid) for ref, sid in sharers if ref() is not None]
                sharers[:] = alive
                seen = {wid for wid, _ in found}
                for ref, sid in alive:
                    other = ref()
                    # Checked again: `set_` or `resize_` may have moved it since.
                    fresh = other is not None and other is not t and sid not in seen
                    if fresh and _address(other) == address and _overlap(span, _span(other)):
                        found.append((sid, other))
                        seen.add(sid)
        return found

    def _index(self) -> None:
        """File the tensors given ids since the last write under their storage's address."""
        pending, self._unindexed = self._unindexed, []
        by_storage = self._by_storage
        for ref, tid in pending:
            t = ref()
            if t is not None and (address := _address(t)):
                by_storage.setdefault(address, []).append((ref, tid))
        if len(by_storage) > self._sweep_at:  # the dead of a long loop's writes
            for address, sharers in list(by_storage.items()):
                sharers[:] = [(r, i) for r, i in sharers if r() is not None]
                if not sharers:
                    del by_storage[address]
            self._sweep_at = max(_COMPACT_AT, 2 * len(by_storage))

    def kept_constant(self, t: torch.Tensor, tid: str, value: dict[str, Any] | None) -> None:
        """`t` (id `tid`, no grad) was bound to a name or cut from a graph: what the end of
        the run lists of it if it fed the graph, even when it is gone by then."""
        dtype = str(t.dtype).removeprefix("torch.")
        self.constants[tid] = (list(t.shape), dtype, str(t.device), value)

    def made_empty(self, t: torch.Tensor, tid: str) -> None:
        """`t` (id `tid`) came out of an `empty`-like op: nothing has set its memory yet."""
        address = _address(t)
        if address:
            self.empties[address] = tid

    def unwritten_empty(self, t: torch.Tensor) -> bool:
        """Whether `t` shows memory an `empty`-like op made and nothing has set yet."""
        return bool(self.empties) and _address(t) in self.empties

    def may_write(self, t: Any) -> None:
        """`t`'s memory is written (or handed out to be): an empty made on it is not
        uninitialised any more, whichever tensor object the write went through."""
        if isinstance(t, torch.Tensor):
            tid = self.empties.pop(_address(t), None)
            if tid is not None:
                self.written_empties.add(tid)

    def live_tensors(self) -> list[tuple[str, torch.Tensor]]:
        """The (id, tensor) pairs still alive, in id order."""
        alive = [(tid, ref()) for ref, tid in list(self._tensor_ids.values())]
        pairs = [(tid, t) for tid, t in alive if t is not None]
        return sorted(pairs, key=lambda pair: int(pair[0][1:]))

    # ---- nodes ------------------------------------------------------------------
    def known_node_id(self, node: Any) -> str | None:
        """The id of a node registered in this run, or None."""
        if node is None:
            return None
        try:
            return node.metadata.get(self._key)
        except (AttributeError, RuntimeError):
            return None

    def node_id(self, node: Any) -> str | None:
        """The id of a grad_fn node, registering it and the graph behind it as needed."""
        nid = self.known_node_id(node)
        if nid is not None or node is None:
            return nid
        return self._register(node)

    def _assign(self, node: Any) -> str | None:
        if len(self.nodes) >= self.max_nodes:
            self.nodes_capped = True
            return None
        nid = f"n{len(self.nodes)}"
        # Everything that can fail (a RecursionError deep in the user's recursion, too)
        # comes before the id is written into the node: a node never carries an id that
        # `nodes` does not know.
        info = NodeInfo(id=nid, name=type(node).__name__, tensor=None, variable=None, next=[])
        # Read now, while the forward has just built it: what a backward will free.
        info.saved, info.saved_tensors = saved_tensors(node, self._describe_saved)
        clock = self._releases.clock
        if clock is not None and info.saved_tensors:
            info.made_at = clock()
        variable = getattr(node, "variable", None)
        if isinstance(variable, torch.Tensor):
            info.variable = info.tensor = self.tensor_id(variable)
            dtype = str(variable.dtype).removeprefix("torch.")
            self.leaves[info.variable] = (list(variable.shape), dtype, str(variable.device))
        try:
            metadata = node.metadata
            metadata[self._key] = nid
        except RecursionError:
            raise
        except (AttributeError, RuntimeError):
            return None
        self.nodes[nid] = info
        if clock is not None and info.saved_tensors:
            # Dies with the node: the moment Python let go of a graph no backward freed.
            release = _Release(self._releases, info)
            metadata[self._key + ".release"] = release
            self._releases.stamped.append(weakref.ref(release))
        if self.on_new_node is not None:
            self.on_new_node(node, nid)
        return nid

    def _describe_saved(self, name: str, t: Any) -> dict[str, Any] | None:
        """A saved tensor as the trace's node lists it (docs/trace.md, `saved_tensors`)."""
        if not isinstance(t, torch.Tensor):
            return None  # what a user's pack hook made of it: not a tensor's memory
        try:
            storage = t.untyped_storage()
            nbytes, address = storage.nbytes(), storage.data_ptr()
        except Exception:  # a tensor without storage of its own (a wrapper subclass, meta)
            nbytes = address = 0
        sid = None
        if nbytes:
            # Storages alive at one moment have distinct addresses (a device's too, in one
            # virtual address space): equal ids mean one storage for every node holding it
            # at the same time. A freed storage's address comes back, but by then the
            # nodes that held it hold nothing.
            sid = self._storages.get(address)
            if sid is None:
                sid = self._storages[address] = f"s{len(self._storages)}"
        # A saved input is the tensor object itself; a saved output is a new object on
        # the same memory (matched to the node's output by `saved_output`).
        entry = self._tensor_ids.get(id(t))
        dtype = t.dtype
        dtype_name = _DTYPE_NAMES.get(dtype)
        if dtype_name is None:
            dtype_name = _DTYPE_NAMES[dtype] = str(dtype).removeprefix("torch.")
        return {
            "name": name,
            "shape": list(t.shape),
            "dtype": dtype_name,
            "bytes": nbytes,
            "storage": sid,
            "tensor": entry[1] if entry is not None and entry[0]() is t else None,
        }

    def saved_output(self, info: NodeInfo, t: torch.Tensor, tid: str) -> None:
        """`t` (id `tid`) is an output of the op that made the node `info`: name it as the
        tensor of the node's saved entries that are its very memory (`result` of
        ExpBackward0, `indices` of SortBackward0)."""
        for entry in info.saved_tensors or ():
            if entry["tensor"] is None and entry["storage"] is not None:
                try:
                    here = t.untyped_storage().data_ptr()
                except Exception:
                    return
                if self._storages.get(here) == entry["storage"] and entry["shape"] == list(t.shape):
                    entry["tensor"] = tid

    def end(self) -> None:
        """The run is over: a node Python lets go of from now on is not the run's doing.

        The stamps leave the nodes' metadata now. A graph the user keeps (the RNN's last
        `h` holds its 8,000 nodes) would otherwise keep every node's record, its lists and
        dicts, alive past the trace: 220,000 objects that each full collection rescanned,
        the kernel's before the next run among them (0.12-0.13 s, measured)."""
        releases = self._releases
        releases.clock = None
        for ref in releases.stamped:
            release = ref()
            if release is not None:
                release.info = None
        releases.stamped = []

    def _register(self, root: Any) -> str | None:
        """Give ids to `root` and every not-yet-seen node behind it, breadth first."""
        root_id = self._assign(root)
        if root_id is None:
            return None
        queue: deque[Any] = deque([root])
        while queue:
            node = queue.popleft()
            info = self.nodes[node.metadata[self._key]]
            for slot, (next_node, nr) in enumerate(getattr(node, "next_functions", ())):
                if next_node is None:
                    continue
                next_id = self.known_node_id(next_node)
                if next_id is None:
                    next_id = self._assign(next_node)
                    if next_id is None:
                        continue
                    queue.append(next_node)
                info.next.append(next_id)
                info.next_nr.append(int(nr))
                info.next_input.append(slot)
        return root_id


def _address(t: torch.Tensor) -> int:
    """Where `t`'s storage begins (0 when it has none of its own: a wrapper, meta)."""
    try:
        return t.untyped_storage().data_ptr()
    except Exception:
        return 0


def _span(t: torch.Tensor) -> tuple[int, int] | None:
    """The bytes of its storage a tensor can reach: from its first element to past its
    last (None when it has no elements or its layout says nothing of the kind)."""
    try:
        if t.numel() == 0:
            return None
        size = t.element_size()
        start = t.storage_offset()
        last = start + sum((n - 1) * abs(s) for n, s in zip(t.shape, t.stride(), strict=True))
        return start * size, (last + 1) * size
    except Exception:  # sparse, nested, a wrapper subclass: assume it reaches everything
        return None


def _overlap(a: tuple[int, int] | None, b: tuple[int, int] | None) -> bool:
    """Whether two spans share a byte (an unknown span counts as sharing)."""
    if a is None or b is None:
        return True
    return a[0] < b[1] and b[0] < a[1]


class _Releases:
    """Stamps nodes let go of during the run with the run's clock (None once it ended)."""

    def __init__(self) -> None:
        self.clock: Callable[[], int] | None = None
        # The stamps handed out, weakly: each dies with its node (and stamps it then).
        self.stamped: list[weakref.ref[_Release]] = []


class _Release:
    """Kept in a node's metadata dict, which dies with the node."""

    __slots__ = ("__weakref__", "info", "releases")

    def __init__(self, releases: _Releases, info: NodeInfo) -> None:
        self.releases, self.info = releases, info  # info: None once the run ended

    def __del__(self) -> None:
        clock = self.releases.clock
        if clock is not None and self.info is not None:
            self.info.released_at = clock()
        self.info = None


class _Strong:
    """Stands in for a weak reference to an object that does not allow one."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __call__(self) -> Any:
        return self.obj
