"""What a user's variable holds that the capture names things by: the modules in it
(itself, a small container's, an attribute of an object of the script's own class)."""

from __future__ import annotations

from typing import Any

import torch

MAX_CONTAINED = 32  # items of a list, tuple or dict (or attributes of an object) looked into


def modules_held(
    var: str, obj: Any, script: str | None = None
) -> list[tuple[str, torch.nn.Module]]:
    """The modules a variable holds: itself, those in a small list, tuple or dict of them
    (`models = {"a": nn.Linear(2, 1), …}` makes `models['a']`), and those an object of a
    class the script defined holds as attributes (`trainer.model`)."""
    if isinstance(obj, torch.nn.Module):
        return [(var, obj)]
    if script is not None and type(obj).__module__ == script and hasattr(obj, "__dict__"):
        return [
            (f"{var}.{attr}", m)
            for attr, m in list(vars(obj).items())[:MAX_CONTAINED]
            if isinstance(m, torch.nn.Module) and not attr.startswith("_")
        ]
    if type(obj) in (list, tuple) and len(obj) <= MAX_CONTAINED:
        return [(f"{var}[{i}]", m) for i, m in enumerate(obj) if isinstance(m, torch.nn.Module)]
    if type(obj) is dict and len(obj) <= MAX_CONTAINED:
        return [
            (f"{var}[{k!r}]", m)
            for k, m in obj.items()
            if isinstance(k, (str, int)) and isinstance(m, torch.nn.Module)
        ]
    return []
