"""The inspector: what a click on a tensor tells the learner."""

from __future__ import annotations

import pytest
import torch

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.trace.value_text import format_number
from autograd_viz.ui.graph._value_plot import index_ticks
from autograd_viz.ui.graph.inspector import Inspector


def test_a_tensor_with_two_names_shows_both(qtbot) -> None:
    trace = run_source(
        "import torch\na = torch.tensor([1.0, 2.0], requires_grad=True)\nb = a * 2\nc = b.mul_(3)\n"
    )
    inspector = Inspector()
    qtbot.addWidget(inspector)
    b = trace.tensor_named("c")
    inspector.show_item(trace, b.id, 3)
    text = inspector.details.text()
    assert "<b>b</b>" in text
    assert "also named" in text and "<td>c</td>" in text
    assert "[6.0, 12.0]" in text


MATMUL = (
    "import torch\n"
    "torch.manual_seed(0)\n"
    "w = torch.randn(3, 4, requires_grad=True)\n"
    "x = torch.randn(4, 2)\n"
    "(w @ x).sum().backward()\n"
)


def _torch_grad() -> list[list[float]]:
    # The oracle: the same program run by torch directly.
    torch.manual_seed(0)
    w = torch.randn(3, 4, requires_grad=True)
    x = torch.randn(4, 2)
    (w @ x).sum().backward()
    return w.grad.tolist()


def test_a_matrix_grad_reads_at_4_digits_with_the_full_float_on_hover(qtbot) -> None:
    trace = run_source(MATMUL)
    grad = _torch_grad()
    inspector = Inspector()
    qtbot.addWidget(inspector)
    inspector.show_item(trace, trace.tensor_named("w").id, 3)
    text = inspector.details.text()
    flat = [g for row in grad for g in row]
    # The rows give a matrix's shape and range; its numbers are in the table below.
    assert f"[3×4] {format_number(min(flat), 3)}…{format_number(max(flat), 3)}" in text
    assert repr(grad[0][0]) not in text  # no 17-digit floats in the rows
    assert repr(grad[0][0]) in inspector.details.toolTip()
    table = inspector.values
    assert not table.isHidden() and (table.rowCount(), table.columnCount()) == (3, 4)
    for r in range(3):
        for c in range(4):
            cell = table.item(r, c)
            assert cell.text() == format_number(grad[r][c])
            assert len(cell.text().replace("-", "").replace(".", "").lstrip("0")) <= 4
            assert cell.toolTip() == f".grad[{r}, {c}] = {grad[r][c]!r}"


def test_a_matrix_heatmap_has_integer_ticks_and_a_colour_bar_of_its_range(qtbot) -> None:
    trace = run_source(MATMUL)
    grad = torch.tensor(_torch_grad())
    inspector = Inspector()
    qtbot.addWidget(inspector)
    inspector.show_item(trace, trace.tensor_named("w").id, 3)
    plot = inspector.plot
    assert not plot.isHidden() and plot.image is not None
    assert plot.tick_labels("bottom") == ["0", "1", "2", "3"]  # columns
    assert plot.tick_labels("left") == ["0", "1", "2"]  # rows
    bar = plot.colour_bar
    assert bar.isVisible()
    low, high = bar.levels()
    assert low == pytest.approx(grad.min().item()) and high == pytest.approx(grad.max().item())
    assert plot.image.getLevels() == pytest.approx([low, high])
    # Cell (row 2, column 1) of the picture is the grad's [2][1] (rows top to bottom).
    assert plot.image.image[1, 2] == pytest.approx(grad[2, 1].item())


def test_index_ticks_thin_out_but_stay_integers() -> None:
    ticks = index_ticks(100)
    assert all(float(label) == pos and pos.is_integer() for pos, label in ticks)
    assert len(ticks) <= 12 and ticks[0] == (0.0, "0")


def test_a_node_hides_the_numbers(qtbot) -> None:
    trace = run_source(MATMUL)
    inspector = Inspector()
    qtbot.addWidget(inspector)
    inspector.show_item(trace, trace.tensor_named("w").id, 3)
    node = next(n for n in trace.nodes if n.name == "MmBackward0")
    inspector.show_item(trace, node.id, 5)
    assert inspector.plot.isHidden() and inspector.values.isHidden()
