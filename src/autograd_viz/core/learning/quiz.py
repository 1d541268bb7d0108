"""The "check your understanding" questions, with the right answer and why.

Where an answer is a number, it is the number torch computes: each such question carries
a snippet that sets ``result`` (the tests run every snippet and compare), and the quiz
pane offers to open it in the editor.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Question:
    """A multiple-choice question on one lesson."""

    id: str
    lesson_id: str
    prompt: str
    choices: tuple[str, ...]
    right: int  # index into choices
    explanation: str
    code: str = ""  # a snippet that shows the answer with torch and sets `result`

    @property
    def right_choice(self) -> str:
        """The text of the right answer."""
        return self.choices[self.right]


@dataclass(frozen=True)
class Feedback:
    """What the learner is told after answering."""

    correct: bool
    explanation: str
    right_choice: str


QUESTIONS: tuple[Question, ...] = (
    Question(
        id="l2-item",
        lesson_id="lesson2",
        prompt=(
            "You turn an intermediate result into an ordinary Python number with `.item()` "
            "and keep computing with that number. Is the result still connected to the "
            "autograd graph?"
        ),
        choices=("Yes", "No"),
        right=1,
        explanation=(
            "`.item()` returns a plain Python float. Torch never sees what you do with it, "
            "so nothing computed from it has a `grad_fn`, and no gradient can flow back "
            "through it to the tensors that produced it."
        ),
        code=(
            "import torch\n\n"
            "w = torch.tensor(3.0, requires_grad=True)\n"
            "h = w * 2\n"
            "number = h.item()\n"
            "result = type(number * 5).__name__\n"
            "print(result)  # float: no grad_fn, no way back to w\n"
        ),
    ),
    Question(
        id="l2-accumulate",
        lesson_id="lesson2",
        prompt=(
            "w = 3, x = 2, b = 1 and loss = (w·x + b − 5)². You run forward and backward "
            "twice, without any zero_grad in between. What is w.grad?"
        ),
        choices=("8", "16", "0", "An error on the second backward"),
        right=1,
        explanation=(
            "Each round builds a fresh graph, so the second backward is allowed, and "
            "backward adds to .grad: 2(w·x + b − 5)·x = 8 per round, 8 + 8 = 16."
        ),
        code=(
            "import torch\n\n"
            "w = torch.tensor(3.0, requires_grad=True)\n"
            "x = torch.tensor(2.0)\n"
            "b = torch.tensor(1.0, requires_grad=True)\n"
            "for _ in range(2):\n"
            "    loss = (w * x + b - 5) ** 2\n"
            "    loss.backward()\n"
            "result = w.grad.item()\n"
            "print(result)  # 16.0\n"
        ),
    ),
    Question(
        id="l2-second-backward",
        lesson_id="lesson2",
        prompt=(
            "After one `loss.backward()`, you call `loss.backward()` again on the same "
            "forward pass, without retain_graph. What happens?"
        ),
        choices=(
            "w.grad doubles",
            "PyTorch raises a RuntimeError",
            "Nothing: the second call is ignored",
        ),
        right=1,
        explanation=(
            "The first backward freed the values the graph had saved for it, so PyTorch "
            "refuses: “Trying to backward through the graph a second time”. Pass "
            "retain_graph=True to the first call, or run a fresh forward pass."
        ),
        code=(
            "import torch\n\n"
            "w = torch.tensor(3.0, requires_grad=True)\n"
            "loss = (w * 2 + 1 - 5) ** 2\n"
            "loss.backward()\n"
            "try:\n"
            "    loss.backward()\n"
            "    result = 'no error'\n"
            "except RuntimeError as error:\n"
            "    result = type(error).__name__\n"
            "    print(error)\n"
        ),
    ),
    Question(
        id="l2-x-grad",
        lesson_id="lesson2",
        prompt=(
            "In the lab, `x = torch.tensor(2.0)` is made without requires_grad, while w and b "
            "require grad. After `loss.backward()`, what is x.grad?"
        ),
        choices=("12", "None", "0"),
        right=1,
        explanation=(
            "Only leaves that require grad receive a gradient. 12 is what x would get "
            "(2(w·x + b − 5)·w) if it did require grad."
        ),
        code=(
            "import torch\n\n"
            "w = torch.tensor(3.0, requires_grad=True)\n"
            "x = torch.tensor(2.0)\n"
            "b = torch.tensor(1.0, requires_grad=True)\n"
            "loss = (w * x + b - 5) ** 2\n"
            "loss.backward()\n"
            "result = x.grad\n"
            "print(result)  # None\n"
        ),
    ),
    Question(
        id="l2-eval",
        lesson_id="lesson2",
        prompt="Does `model.eval()` stop autograd from recording the forward pass?",
        choices=(
            "Yes: eval() and no_grad() are the same switch",
            "No: eval() changes layers such as Dropout; no_grad() stops the recording",
        ),
        right=1,
        explanation=(
            "The two are independent. eval() switches Dropout off and makes BatchNorm use "
            "its running statistics; the output still requires grad. Evaluation normally "
            "wants both eval() and torch.no_grad()."
        ),
        code=(
            "import torch\n"
            "from torch import nn\n\n"
            "model = nn.Sequential(nn.Linear(4, 3), nn.Dropout(0.5))\n"
            "model.eval()\n"
            "result = model(torch.randn(2, 4)).requires_grad\n"
            "print(result)  # True: still recorded\n"
        ),
    ),
    Question(
        id="l2-parameters",
        lesson_id="lesson2",
        prompt=(
            "A batch of shape (2, 4) goes through `nn.Linear(4, 3)`. How many parameters "
            "does the layer have?"
        ),
        choices=("12", "15", "24", "30"),
        right=1,
        explanation=(
            "A weight of shape (3, 4) and a bias of 3: 4·3 + 3 = 15. The batch size does "
            "not matter, both examples share the same parameters."
        ),
        code=(
            "from torch import nn\n\n"
            "layer = nn.Linear(4, 3)\n"
            "result = sum(p.numel() for p in layer.parameters())\n"
            "print(result)  # 15\n"
        ),
    ),
    Question(
        id="l1-dtype",
        lesson_id="lesson1",
        prompt="What dtype does `torch.tensor([1.0, 2.0, 3.0])` have?",
        choices=("torch.float64", "torch.float32", "torch.float16"),
        right=1,
        explanation=(
            "PyTorch makes floating-point tensors as float32 (NumPy's default is float64): "
            "half the memory, and what networks expect."
        ),
        code=(
            "import torch\n\n"
            "result = str(torch.tensor([1.0, 2.0, 3.0]).dtype)\n"
            "print(result)  # torch.float32\n"
        ),
    ),
    Question(
        id="l1-leaf-grads",
        lesson_id="lesson1",
        prompt=(
            "x and w require grad, b does not; z = x·w + b and out = z². After "
            "`out.backward()`, which tensors hold a gradient in .grad?"
        ),
        choices=("x and w", "x, w and b", "x, w, b and z", "Only out"),
        right=0,
        explanation=(
            "Only leaves that require grad keep a .grad: x (42) and w (28). b is a leaf but "
            "does not require grad; z and out are non-leaf results."
        ),
        code=(
            "import torch\n\n"
            "x = torch.tensor(2.0, requires_grad=True)\n"
            "w = torch.tensor(3.0, requires_grad=True)\n"
            "b = torch.tensor(1.0)\n"
            "z = x * w + b\n"
            "out = z**2\n"
            "out.backward()\n"
            "result = x.grad.item(), w.grad.item(), b.grad\n"
            "print(result)  # (42.0, 28.0, None)\n"
        ),
    ),
    Question(
        id="l1-retain-grad",
        lesson_id="lesson1",
        prompt=(
            "x = 2 requires grad, `z = x * 3` and `out = z ** 2`. You call `z.retain_grad()` "
            "and then `out.backward()`. What is z.grad?"
        ),
        choices=("6", "12", "14", "36"),
        right=1,
        explanation=(
            "z = 6, and d(z²)/dz = 2z = 12. (The original lesson's comment says 14; that "
            "would need z = 7, which was the z of the example before.) 36 is x.grad."
        ),
        code=(
            "import torch\n\n"
            "x = torch.tensor(2.0, requires_grad=True)\n"
            "z = x * 3\n"
            "out = z**2\n"
            "z.retain_grad()\n"
            "out.backward()\n"
            "result = z.grad.item()\n"
            "print(result)  # 12.0\n"
        ),
    ),
    Question(
        id="l1-no-grad",
        lesson_id="lesson1",
        prompt=(
            "w requires grad. Inside `with torch.no_grad():` you compute `y = w * 2`. "
            "What is y.requires_grad?"
        ),
        choices=("True", "False"),
        right=1,
        explanation=(
            "Nothing is recorded under no_grad, so y has no grad_fn and does not require "
            "grad, even though w does."
        ),
        code=(
            "import torch\n\n"
            "w = torch.tensor(3.0, requires_grad=True)\n"
            "with torch.no_grad():\n"
            "    y = w * 2\n"
            "result = y.requires_grad\n"
            "print(result)  # False\n"
        ),
    ),
    Question(
        id="l1-learning-rate",
        lesson_id="lesson1",
        prompt=(
            "Loss (w − 3)², start at w = 0.5, one step of plain gradient descent with "
            "learning rate 0.5. Where is w after the step?"
        ),
        choices=("0.5", "2.5", "3.0", "5.5"),
        right=2,
        explanation=(
            "The gradient is 2(w − 3) = −5, and w − 0.5·(−5) = 3.0: with this loss a "
            "learning rate of 0.5 lands on the minimum in one step. Try it on the Descent tab."
        ),
        code=(
            "import torch\n\n"
            "w = torch.tensor(0.5, requires_grad=True)\n"
            "loss = (w - 3) ** 2\n"
            "loss.backward()\n"
            "with torch.no_grad():\n"
            "    w -= 0.5 * w.grad\n"
            "result = w.item()\n"
            "print(result)  # 3.0\n"
        ),
    ),
)

_BY_ID = {q.id: q for q in QUESTIONS}
if len(_BY_ID) != len(QUESTIONS):  # pragma: no cover - a typo in the table above
    raise ValueError("two quiz questions share an id")


def question(question_id: str) -> Question:
    """The question with this id (KeyError when there is none)."""
    return _BY_ID[question_id]


def questions_for(lesson_id: str) -> list[Question]:
    """The questions on one lesson, in order."""
    return [q for q in QUESTIONS if q.lesson_id == lesson_id]


def answer(question_id: str, choice: int | str) -> Feedback:
    """Judge an answer, given as the choice's index or its text."""
    q = question(question_id)
    if isinstance(choice, str):
        if choice not in q.choices:
            raise ValueError(f"{choice!r} is not a choice of {question_id}")
        index = q.choices.index(choice)
    elif 0 <= choice < len(q.choices):
        index = choice
    else:
        raise ValueError(f"{question_id} has no choice {choice}")
    return Feedback(
        correct=index == q.right, explanation=q.explanation, right_choice=q.right_choice
    )
