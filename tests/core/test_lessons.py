"""The lessons: they load from the shipped resources, every example runs with plain torch,
and every number a lesson states is the number torch computes."""

from __future__ import annotations

import contextlib
import io
import warnings
from pathlib import Path

import pytest
import torch

from autograd_viz import resources
from autograd_viz.core.learning.lessons import (
    LessonFormatError,
    Section,
    all_sections,
    find_section,
    load_lessons,
    parse_lesson,
)

SECTIONS = all_sections()
EXAMPLES = [(s.key, title, code) for s in SECTIONS for title, code in s.examples]


def run_example(code: str, name: str = "<example>") -> tuple[dict, str]:
    """Run an example as the learner would; return its variables and what it printed."""
    namespace: dict = {"__name__": "__main__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. torch's warning on reading a non-leaf .grad
        exec(compile(code, name, "exec"), namespace)
    return namespace, out.getvalue()


def example(key: str, title_start: str) -> tuple[dict, str]:
    """Run the example of a section whose title starts with title_start."""
    section = find_section(key)
    matches = [code for title, code in section.examples if title.startswith(title_start)]
    assert len(matches) == 1, f"{key}: {title_start!r} names {len(matches)} examples"
    return run_example(matches[0], f"{key}: {title_start}")


# ---- loading ----------------------------------------------------------------------------
def test_both_lessons_load_with_the_sections_the_course_needs() -> None:
    lessons = load_lessons()
    assert [lesson.id for lesson in lessons] == ["lesson1", "lesson2"]
    keys = {s.key for s in SECTIONS}
    assert {
        "lesson1/tensors-and-devices",
        "lesson1/graph",
        "lesson1/first-gradients",
        "lesson1/leaf-vs-nonleaf",
        "lesson1/accumulation",
        "lesson1/no-grad-and-eval",
        "lesson1/descent",
        "lesson1/practice",
        "lesson2/the-idea",
        "lesson2/history-breaks",
        "lesson2/lab",
        "lesson2/code-exercises",
        "lesson2/common-mistakes",
        "lesson2/quiz",
    } <= keys
    for section in SECTIONS:
        assert isinstance(section, Section)
        assert section.title and len(section.text) > 100, section.key
        assert "```python" not in section.text  # examples are taken out of the text


def test_sections_point_to_the_tabs_that_do_the_work() -> None:
    tabs = {s.key: s.tab for s in SECTIONS if s.tab}
    assert tabs == {
        "lesson1/descent": "Descent",
        "lesson1/practice": "Exercises",
        "lesson2/lab": "Lab",
        "lesson2/code-exercises": "Exercises",
        "lesson2/quiz": "Quiz",
    }


def test_lessons_are_the_shipped_resources() -> None:
    names = [f.name for f in resources.lessons()]
    assert names == ["01_tensors_and_autograd.md", "02_autograd_lab.md"]
    # From the source tree they are read from the top-level resources/lessons; the wheel
    # ships the same files inside the package (tests/test_packaging.py).
    in_the_tree = Path(__file__).resolve().parents[2] / "resources" / "lessons"
    assert in_the_tree == resources.LESSONS
    assert [lesson.id for lesson in load_lessons()] == ["lesson1", "lesson2"]


def test_examples_unpack_as_title_and_code() -> None:
    title, code = find_section("lesson1/graph").examples[0]
    assert title.startswith("out = (x·y + 4)²") and code.startswith("import torch\n")


# ---- every example runs -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("key", "title", "code"), EXAMPLES, ids=[f"{k}:{t}" for k, t, _ in EXAMPLES]
)
def test_every_example_runs_with_plain_torch(key: str, title: str, code: str) -> None:
    run_example(code, f"{key}: {title}")


# ---- the numbers the lessons state ------------------------------------------------------
def test_tensor_basics() -> None:
    ns, _ = example("lesson1/tensors-and-devices", "Pick a device")
    assert ns["c"].tolist() == [6.0, 12.0, 20.0] and ns["c"].dtype == torch.float32
    ns, _ = example("lesson1/tensors-and-devices", "Whole-tensor maths")
    assert (ns["A"] @ ns["B"]).tolist() == [[19.0, 22.0], [43.0, 50.0]]
    assert ns["m"].sum().item() == 21.0 and ns["m"].argmax().item() == 5
    ns, _ = example("lesson1/tensors-and-devices", "NumPy and back")
    assert ns["shared"].dtype == torch.float64


def test_graph_example_values() -> None:
    ns, _ = example("lesson1/graph", "out = (x·y + 4)²")
    assert ns["out"].item() == 100.0
    assert (ns["x"].grad.item(), ns["y"].grad.item()) == (60.0, 40.0)
    assert [ns[n].grad_fn.name() for n in ("z", "w", "out")] == [
        "MulBackward0",
        "AddBackward0",
        "PowBackward0",
    ]
    ns, _ = example("lesson1/graph", "Who requires grad")
    assert (ns["c"].requires_grad, ns["d"].requires_grad) == (True, False)


def test_first_gradients_8_30_21_16_and_2_4_6() -> None:
    ns, _ = example("lesson1/first-gradients", "f(x) = x² + 2x + 1")
    assert (ns["y"].item(), ns["x"].grad.item()) == (16.0, 8.0)
    ns, _ = example("lesson1/first-gradients", "A chain")
    assert (ns["z"].item(), ns["x"].grad.item()) == (72.0, 30.0)
    ns, _ = example("lesson1/first-gradients", "Two variables")
    assert (ns["f"].item(), ns["x"].grad.item(), ns["y"].grad.item()) == (30.0, 21.0, 16.0)
    ns, out = example("lesson1/first-gradients", "A vector output")
    assert ns["x"].grad.tolist() == [2.0, 4.0, 6.0] == ns["x2"].grad.tolist()
    assert "only for scalar outputs" in out
    text = find_section("lesson1/first-gradients").text
    for number in ("f′(3) = 8**", "**30**", "**21**", "**16**", "**[2, 4, 6]**"):
        assert number in text


def test_leaf_example_42_28_none() -> None:
    ns, _ = example("lesson1/leaf-vs-nonleaf", "Where .grad lives")
    assert ns["x"].grad.item() == 42.0 and ns["w"].grad.item() == 28.0
    assert ns["b"].grad is None
    assert not ns["z"].is_leaf and ns["x"].is_leaf and ns["b"].is_leaf


def test_retain_grad_gives_12_and_the_lesson_says_the_original_14_was_wrong() -> None:
    ns, _ = example("lesson1/leaf-vs-nonleaf", "Keeping a non-leaf gradient")
    assert ns["z"].grad.item() == 12.0 and ns["x"].grad.item() == 36.0
    # Independently of the example's text: torch's answer for z = x·3, out = z².
    x = torch.tensor(2.0, requires_grad=True)
    z = x * 3
    z.retain_grad()
    (z**2).backward()
    assert z.grad.item() == 12.0
    text = find_section("lesson1/leaf-vs-nonleaf").text
    assert "The original lesson says `z.grad` is 14" in text
    assert "Torch computes **12**" in text and "2z = 12" in text


def test_accumulation_4_8_4() -> None:
    _, out = example("lesson1/accumulation", "Two backwards without clearing")
    assert out.splitlines() == [
        "after backward 1: 4.0",
        "after backward 2: 8.0",
        "after zero_ and backward 3: 4.0",
    ]
    _, out = example("lesson1/accumulation", "A training loop")
    assert len(out.splitlines()) == 3


def test_no_grad_eval_and_frozen_parameter_counts() -> None:
    _, out = example("lesson1/no-grad-and-eval", "no_grad and eval")
    assert out.splitlines()[:4] == [
        "recorded: True",
        "under no_grad: False",
        "under inference_mode: False",
        "eval, no no_grad: True",
    ]
    ns, out = example("lesson1/no-grad-and-eval", "Freezing a layer")
    assert (ns["total"], ns["trainable"]) == (203_530, 2_570)
    text = find_section("lesson1/no-grad-and-eval").text
    assert "200,960" in text and "203,530" in text and "2,570" in text


def test_descent_numbers() -> None:
    ns, _ = example("lesson1/descent", "Descent by hand")
    assert ns["w"].item() == pytest.approx(2.9906, abs=1e-4)
    assert ns["b"].item() == pytest.approx(-1.9887, abs=1e-4)
    assert "w ≈ 2.991 and b ≈ −1.989" in find_section("lesson1/descent").text
    ns, _ = example("lesson1/descent", "Five learning rates")
    descend = ns["descend"]
    assert descend(0.5, steps=1) == [3.0, -2.0]  # factor 1 − 2·lr = 0: one step
    assert descend(1.0, steps=10) == [0.5, 1.0]  # factor −1: bounces back to the start
    w, _b = descend(1.1, steps=10)
    assert abs(w - 3.0) > 10  # factor −1.2: flies off


def test_practice_gradient_check() -> None:
    ns, out = example("lesson1/practice", "Autograd against the derivative")
    assert ns["x"].grad.item() == pytest.approx(ns["by_hand"], abs=1e-6)
    assert ns["by_hand"] == pytest.approx(-0.182668, abs=1e-6)
    assert "-0.182668" in out
    _, out = example("lesson1/practice", "The same check by finite differences")
    assert "gradcheck passes: True" in out


def test_lab_loss_8_4_none_and_retain_graph_16() -> None:
    ns, _ = example("lesson2/the-idea", "The lab's loss")
    assert ns["loss"].item() == 4.0
    assert (ns["w"].grad.item(), ns["b"].grad.item(), ns["x"].grad) == (8.0, 4.0, None)
    # The table's 12 for x: what x gets when it does require grad.
    w, x, b = (torch.tensor(v, requires_grad=True) for v in (3.0, 2.0, 1.0))
    ((w * x + b - 5) ** 2).backward()
    assert x.grad.item() == 12.0
    ns, out = example("lesson2/the-idea", "One graph, two backward passes")
    assert "second backward: Trying to backward through the graph a second time" in out
    assert ns["w"].grad.item() == 16.0


def test_history_breaks() -> None:
    ns, out = example("lesson2/history-breaks", ".item() and .detach()")
    assert ns["w"].grad is None and ns["cut"].grad_fn is None and not ns["loss"].requires_grad
    assert "does not require grad" in out
    ns, _ = example("lesson2/history-breaks", "Log with .item()")
    assert ns["history"] == [4.0, 1.0, 0.25] and ns["w"].item() == 1.25


def test_lab_tasks_16_then_8_and_linear_15() -> None:
    _, out = example("lesson2/lab", "Tasks 2 and 3")
    assert out.splitlines() == ["without zero_grad: 16.0", "with zero_grad: 8.0"]
    ns, out = example("lesson2/common-mistakes", "Shapes and parameters")
    assert "parameters: 15" in out and tuple(ns["layer"](ns["batch"]).shape) == (2, 3)
    ns, _ = example("lesson2/code-exercises", "Starting point")
    assert {"grad_of", "accumulated_grad", "descend"} <= set(ns)


# ---- the format -------------------------------------------------------------------------
LESSON = """---
id: demo
title: A demo
---

## First {#first tab=Descent}

Some *text*.

```text
not runnable
## not a heading
```

```python A title
print(1)
```

## Second {#second}

More.
"""


def test_parser_splits_text_examples_and_tabs() -> None:
    lesson = parse_lesson(LESSON)
    first, second = lesson.sections
    assert (first.key, first.title, first.tab) == ("demo/first", "First", "Descent")
    assert first.examples == (("A title", "print(1)\n"),)
    assert "not runnable\n## not a heading" in first.text and "print(1)" not in first.text
    assert (second.id, second.tab, second.examples, second.text) == ("second", None, (), "More.")
    assert lesson.section("second") is second


@pytest.mark.parametrize(
    "text",
    [
        "no front matter",
        "---\nid: x\n---\n",  # no title
        "---\nid: x\ntitle: y\n---\n## No id\n",
        "---\nid: x\ntitle: y\n---\n## A {#a}\n```python T\nopen(",
        "---\nid: x\ntitle: y\n---\n## A {#a}\n## B {#a}\n",
    ],
)
def test_parser_rejects_malformed_lessons(text: str) -> None:
    with pytest.raises(LessonFormatError):
        parse_lesson(text)
