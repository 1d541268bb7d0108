"""core/ must run without Qt (in the kernel and in headless tests)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "src" / "autograd_viz" / "core"
QT_MODULES = ("PySide6", "PyQt5", "PyQt6", "qtpy", "pyqtgraph", "shiboken6")


def test_core_source_imports_no_qt() -> None:
    offenders = []
    for path in CORE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [
                f"{path.name}: {n}"
                for n in names
                if n.split(".")[0] in QT_MODULES
                or n.startswith(("autograd_viz.ui", "autograd_viz.session"))
            ]
    assert offenders == []


def test_importing_core_loads_no_qt_module() -> None:
    code = (
        "import sys, autograd_viz.core.kernel.runner, autograd_viz.core.graph.graph_model, "
        "autograd_viz.core.kernel.protocol, autograd_viz.cli\n"
        f"print([m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r}])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_import_linter_contracts_hold() -> None:
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if lint is None:
        pytest.skip("import-linter is not installed (it comes with the test extra)")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([lint], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_module_imports_itself_through_others() -> None:
    """No import cycle anywhere in the package, lazy imports inside functions included:
    a cycle is a knot that every later change has to untie first."""
    grimp = pytest.importorskip("grimp")  # comes with import-linter (the test extra)
    import networkx as nx

    graph = grimp.build_graph("autograd_viz")
    imports = nx.DiGraph()
    for module in graph.modules:
        imports.add_edges_from((module, d) for d in graph.find_modules_directly_imported_by(module))
    cycles = [sorted(c) for c in nx.strongly_connected_components(imports) if len(c) > 1]
    assert cycles == []
