"""The kind of a folded group's box (module_groups once held the flat module groups; the
fold tree, fold_tree.py, replaced them)."""

from __future__ import annotations

MODULE = "module"  # the kind of a folded group's box
