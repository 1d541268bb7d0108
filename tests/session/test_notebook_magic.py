"""`%%autograd_viz` in a notebook: a real kernel driven through jupyter_client, as a
notebook front end drives it (execute_request, IOPub replies)."""

from __future__ import annotations

import json
import re
import sys
from xml.etree import ElementTree

import pytest
import torch

from autograd_viz.core.kernel.notebook import NOTEBOOK_RUN_MIME, notebook_trace_request
from autograd_viz.core.kernel.protocol import TRACE_MIME, version_problem
from autograd_viz.core.kernel.trace_messages import TRACE_PART_MIME, trace_from_payload
from autograd_viz.core.kernel.wire import TraceAssembly
from autograd_viz.jupyter._magic import app_command
from tests.session.test_remote_kernel import _separate_kernel

pytestmark = pytest.mark.kernel

CELL = """%%autograd_viz
import torch
w = torch.tensor(3.0, requires_grad=True)
x = torch.tensor(2.0)
b = torch.tensor(1.0, requires_grad=True)
loss = (w * x + b - 5) ** 2
loss.backward()
print("loss is", loss.item())
"""
BROKEN = """%%autograd_viz
import torch
a = torch.ones(2, requires_grad=True)
h = a * 2
c = h @ torch.ones(3)
after = 1
"""
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class Notebook:
    """One front end of a kernel: runs cells and keeps what IOPub said about each."""

    def __init__(self, client) -> None:
        self.client = client

    def run(self, code: str) -> tuple[dict, list[dict]]:
        """The execute_reply's content and the cell's IOPub messages (status ones left out)."""
        said: list[dict] = []
        reply = self.client.execute_interactive(
            code, timeout=60, output_hook=said.append, allow_stdin=False
        )
        return reply["content"], [m for m in said if m["msg_type"] != "status"]

    def stdout(self, said: list[dict]) -> str:
        return "".join(
            m["content"]["text"]
            for m in said
            if m["msg_type"] == "stream" and m["content"]["name"] == "stdout"
        )

    def shown(self, said: list[dict]) -> list[dict]:
        return [m for m in said if m["msg_type"] == "display_data"]


@pytest.fixture(scope="module")
def notebook(tmp_path_factory):
    km = _separate_kernel(
        tmp_path_factory.mktemp("notebook"), [sys.executable, "-m", "ipykernel_launcher"]
    )
    client = km.client()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    book = Notebook(client)
    reply, _ = book.run("%load_ext autograd_viz")
    assert reply["status"] == "ok", reply
    yield book
    client.stop_channels()
    km.shutdown_kernel(now=True)


def _oracle() -> dict[str, float]:
    w = torch.tensor(3.0, requires_grad=True)
    b = torch.tensor(1.0, requires_grad=True)
    loss = (w * torch.tensor(2.0) + b - 5) ** 2
    loss.backward()
    return {"w": w.grad.item(), "b": b.grad.item(), "loss": loss.item()}


def _fetched(book: Notebook, run_id: str):
    """What an attached app receives for a run id: the trace's parts, each in the buffer of
    a message of its own, then the payload that describes them."""
    said: list[dict] = []
    book.client.execute_interactive(
        notebook_trace_request(run_id), timeout=60, output_hook=said.append
    )
    parts = [m for m in said if TRACE_PART_MIME in m["content"].get("data", {})]
    reply = next(m for m in said if TRACE_MIME in m["content"].get("data", {}))
    payload = reply["content"]["data"][TRACE_MIME]
    assert version_problem(payload) is None and payload["streamed"] and len(parts) > 1
    assembly = TraceAssembly(payload["parts"])
    for message in parts:
        assembly.add(message["content"]["data"][TRACE_PART_MIME]["format"], message["buffers"][0])
    return trace_from_payload(payload, [], assembly)


def test_a_traced_cell_is_still_a_cell_and_announces_its_run(notebook) -> None:
    reply, said = notebook.run(CELL)
    assert reply["status"] == "ok", reply
    want = _oracle()
    assert notebook.stdout(said) == f"loss is {want['loss']}\n"  # the cell's own output
    (shown,) = notebook.shown(said)
    data = shown["content"]["data"]
    assert data.keys() == {"text/plain", "image/svg+xml", "text/html", NOTEBOOK_RUN_MIME}
    assert "autograd nodes" in data["text/plain"]
    announcement = data[NOTEBOOK_RUN_MIME]
    assert version_problem(announcement) is None
    assert announcement["cell"] == reply["execution_count"]
    assert len(json.dumps(announcement)) < 500  # the notebook never holds the trace
    # The app's picture, as SVG: a node of each kind the cell built, its leaves named.
    svg = ElementTree.fromstring(data["image/svg+xml"])
    words = " ".join(svg.itertext())
    assert {"MulBackward0", "PowBackward0", "AccumulateGrad", "w", "b"} <= set(words.split())
    # The replay page plays in a sandboxed iframe: scripts run, nothing else is reached.
    page = data["text/html"]
    assert '<iframe srcdoc="&lt;!DOCTYPE html&gt;' in page and 'sandbox="allow-scripts"' in page
    assert len(page) < 200_000
    # The cell's variables live on in the notebook, like any cell's.
    reply, said = notebook.run("print(float(w.grad), float(b.grad), x.grad)")
    assert notebook.stdout(said) == f"{want['w']} {want['b']} None\n"
    # The trace an attached app fetches holds torch's numbers and the cell as written.
    trace = _fetched(notebook, announcement["run_id"])
    assert trace.tensor_named("w").grad.data == want["w"]
    assert trace.tensor_named("b").grad.data == want["b"]
    assert trace.tensor_named("x").grad is None
    assert trace.script == CELL.split("\n", 1)[1]
    assert trace.source == f"Cell In[{announcement['cell']}]"
    assert len(trace.nodes) == announcement["nodes"]
    assert {"MulBackward0", "PowBackward0", "AccumulateGrad"} <= {n.name for n in trace.nodes}


def test_an_error_shows_the_real_traceback_and_the_graph_so_far(notebook) -> None:
    reply, said = notebook.run(BROKEN)
    assert reply["status"] == "error" and reply["ename"] == "RuntimeError"
    (error,) = [m for m in said if m["msg_type"] == "error"]
    text = _ANSI.sub("", "\n".join(error["content"]["traceback"]))
    assert "----> 4 c = h @ torch.ones(3)" in text
    assert "inconsistent tensor size" in text
    # Only the learner's frames: not the tracer's, nor torch's dispatch to it.
    assert "autograd_viz" not in text.replace("run_cell_magic('autograd_viz'", "")
    assert "handle_torch_function" not in text
    # The graph of what ran before the error is still shown, before the traceback.
    (shown,) = notebook.shown(said)
    assert said.index(shown) < said.index(error)
    trace = _fetched(notebook, shown["content"]["data"][NOTEBOOK_RUN_MIME]["run_id"])
    assert trace.error["type"] == "RuntimeError" and trace.error["line"] == 4
    assert [n.name for n in trace.nodes if n.name == "MulBackward0"]
    # The names bound before the error stay; the ones after it were never bound.
    reply, said = notebook.run("print(h.shape, 'after' in dir())")
    assert notebook.stdout(said) == "torch.Size([2]) False\n"


def test_a_line_magic_without_open_says_how_to_use_it(notebook) -> None:
    reply, said = notebook.run("%autograd_viz")
    assert reply["status"] == "ok"
    assert "%autograd_viz open" in notebook.stdout(said)


def test_open_starts_this_python_attached_to_the_connection_file() -> None:
    command = app_command("/tmp/kernel-1.json")
    assert command == [sys.executable, "-m", "autograd_viz", "--existing", "/tmp/kernel-1.json"]
