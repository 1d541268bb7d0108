"""The inspector: what a click on a tensor tells the learner."""

from __future__ import annotations

from autograd_viz.core.kernel.runner import run_source
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
