"""ruff keeps the code as STYLE.md asks: lint-clean and formatted."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("args", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff(args: list[str]) -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    if ruff is None:
        pytest.skip("ruff is not installed (it comes with the test extra)")
    done = subprocess.run(
        [ruff, *args, "src", "tests"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_text_the_app_shows_uses_a_glyph_its_baseline_font_lacks() -> None:
    """The bar read "End (▯) shows what raised": DejaVu Sans, the font a bare machine gets
    (scripts/system_deps.sh), has no media-control symbols (⏮ ⏭ ⏯, U+23E9–U+23FA); a
    missing glyph draws as an empty box. Buttons use the style's icons instead."""
    import ast

    media = {chr(c) for c in range(0x23E9, 0x23FB)}
    found = []
    for path in sorted((Path(__file__).parents[1] / "src").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docs
                and media & set(node.value)
            ):
                found.append(f"{path.name}:{node.lineno}: {node.value!r}")
    assert not found, found
