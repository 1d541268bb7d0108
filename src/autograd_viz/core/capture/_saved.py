"""Which tensors an autograd node saved for its backward: what a non-retaining pass frees."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_RAW = "_raw_saved_"
_FREED = "already been freed"  # in torch's "backward through the graph a second time"

# The `_raw_saved_*` names a node class has, by class: every node of one op has the same,
# and dir() is far too slow to call for each of a big graph's nodes.
_names_by_type: dict[type, tuple[str, ...]] = {}


def _slot_names(node: Any) -> tuple[str, ...]:
    """The node's saved-tensor slots, without the `_raw_saved_` prefix."""
    kind = type(node)
    names = _names_by_type.get(kind)
    if names is None:
        # Only SavedVariable fields get a `_raw_saved_` twin; `_saved_alpha`, `_saved_dim`
        # and `_saved_self_sym_sizes` (numbers) have none, so they never count. A custom
        # Function's node has one too: `_raw_saved_tensors`, its ctx.save_for_backward.
        names = tuple(sorted(n[len(_RAW) :] for n in dir(kind) if n.startswith(_RAW)))
        _names_by_type[kind] = names
    return names


def _held(slot: Any) -> list[tuple[str, Any]]:
    """The tensors a raw saved slot (a SavedTensor, or a tuple/list of them) holds, with
    their place in it ("" for the slot itself, "[1]" for a list's second).

    A slot whose tensor was undefined (an optional weight left None, the `self` that
    `x * 2` does not need) has `data` None: the engine has nothing there to free. `data`
    reads what was stored without running the user's `saved_tensors_hooks` unpack hook
    (under a pack hook it is what the hook packed: counted only when it is a tensor).
    """
    if slot is None:
        return []
    if isinstance(slot, (tuple, list)):
        return [(f"[{i}]{place}", t) for i, s in enumerate(slot) for place, t in _held(s)]
    data = getattr(slot, "data", slot)
    return [] if data is None else [("", data)]


def saved_tensors(
    node: Any, describe: Callable[[str, Any], dict[str, Any] | None] | None = None
) -> tuple[list[str], list[dict[str, Any]]]:
    """The names of the tensors `node` saved for its backward (`["other", "self"]` for
    `x * b`'s MulBackward0, `["tensors"]` for a custom Function that saved some) and,
    when `describe` is given, what `describe(name, tensor)` says of each tensor held
    (`tensors[0]`, `tensors[1]` for a list), in the same order."""
    names: list[str] = []
    details: list[dict[str, Any]] = []
    for name in _slot_names(node):
        try:
            slot = getattr(node, _RAW + name)
        except RecursionError:
            raise
        except RuntimeError as error:
            # Seen only after a pass freed them (a graph first met at a later backward):
            # they were saved all the same, and what they held is gone.
            if _FREED in str(error):
                names.append(name)
            continue
        except Exception:  # a slot torch cannot show: not known to be saved
            continue
        held = _held(slot)
        if not held:
            continue
        names.append(name)
        if describe is not None:
            for place, t in held:
                entry = describe(name + place, t)
                if entry is not None:
                    details.append(entry)
    return names, details
