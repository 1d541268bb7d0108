"""The inspector: what a click on a tensor tells the learner."""

from __future__ import annotations

import json

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


class _InProcessKernel:
    """A session whose calls run the core function here, answering as the kernel does
    (through strict JSON, a raise as ok false), on the next turn of the event loop."""

    def call(self, function, arguments):
        from PySide6.QtCore import QTimer

        from autograd_viz.core.trace import json_safe
        from autograd_viz.session._call import KernelCall

        call = KernelCall("call", function.__name__, 0)
        try:
            result = function(namespace={}, **arguments)
            answer = json.loads(json.dumps(json_safe({"ok": True, "result": result})))
        except LookupError as exc:
            answer = {"ok": False, "error": {"type": "LookupError", "message": str(exc)}}
        QTimer.singleShot(0, lambda: call.finish(answer))
        return call


BIG = (
    "import torch\ntorch.manual_seed(1)\nW = torch.randn(9, 8, requires_grad=True)\n"
    "(W.tanh() * 3).sum().backward()\n"
)


def _held_trace():
    from autograd_viz.core.kernel.held import hold_numbers

    trace = run_source(BIG)
    assert hold_numbers(trace) is not None  # as the kernel does before sending it
    return trace


def test_a_held_tensors_heatmap_waits_for_its_numbers_then_shows_torchs(qtbot) -> None:
    from autograd_viz.ui.graph.held_numbers import HeldNumbers

    trace = _held_trace()
    W = trace.tensor_named("W")
    inspector = Inspector(numbers=HeldNumbers(_InProcessKernel()))
    qtbot.addWidget(inspector)
    inspector.show_item(trace, W.id, 3)
    # Meanwhile: the summary in the rows, a note where the heatmap goes.
    assert "Fetching every number of .grad" in inspector.plot_note.text()
    assert inspector.plot.isHidden() and "[9×8]" in inspector.details.text()
    qtbot.waitUntil(lambda: not inspector.plot.isHidden(), timeout=5_000)
    assert inspector.plot_note.isHidden()
    torch.manual_seed(1)
    w = torch.randn(9, 8, requires_grad=True)
    (w.tanh() * 3).sum().backward()
    assert inspector.plot.image.image[5, 2] == pytest.approx(w.grad[2, 5].item())
    assert W.value.data == w.tolist() and W.value.held is None


def test_numbers_the_kernel_let_go_of_leave_the_summary_and_say_why(qtbot) -> None:
    from autograd_viz.core.kernel import held
    from autograd_viz.ui.graph.held_numbers import HeldNumbers

    trace = _held_trace()
    W = trace.tensor_named("W")
    for _ in range(held.KEEP_RUNS):  # later runs push this one's numbers out
        _held_trace()
    inspector = Inspector(numbers=HeldNumbers(_InProcessKernel()))
    qtbot.addWidget(inspector)
    inspector.show_item(trace, W.id, 3)
    note = inspector.plot_note
    qtbot.waitUntil(lambda: "no longer has them" in note.text(), timeout=5_000)
    assert not note.isHidden() and inspector.plot.isHidden()
    assert "[9×8]" in inspector.details.text() and W.grad.data is None
    # Asked again (the player moved), it does not ask the kernel again.
    assert inspector.numbers.fetch(trace, [W.id], lambda: None) is False


def test_a_complex_vector_reads_as_complex_numbers_and_draws_no_false_matrix(qtbot) -> None:
    trace = run_source("import torch\nz = torch.tensor([1+2j, 3-1j, 0.5j, -2+0j])\n")
    inspector = Inspector()
    qtbot.addWidget(inspector)
    inspector.show_item(trace, trace.tensor_named("z").id, 2)
    text = inspector.details.text()
    assert "[4] complex, |z| 0.5…3.16" in text and "[[1.0, 2.0]" not in text
    assert inspector.plot.isHidden()  # its [re, im] pairs are no 4×2 matrix
