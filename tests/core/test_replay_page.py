"""The replay page (core/share): its frames are the app's Player's, moment for moment; it
names nothing outside itself; a trace's text cannot break out of it; and the 8k-node
RNN's page stays under 5 MB. The same page in a real browser: test_replay_page_browser."""

from __future__ import annotations

import json
import re
import time

import pytest

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.bar_text import caption_now, end_caption
from autograd_viz.core.playback.player import BACKWARD, FORWARD
from autograd_viz.core.playback.run_view import prepare_run
from autograd_viz.core.share import page_html, picture_svg, replay_frames
from autograd_viz.core.trace import Trace
from tests.core.fidelity_cases import CASES
from tests.core.replay_page_cases import EXAMPLE_FILES, example_trace

SVG_NAMESPACE = "http://www.w3.org/2000/svg"  # a name, never fetched
RNN_LIMIT_BYTES = 5_000_000


def _page_data(html: str) -> dict:
    found = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', html)
    assert found is not None
    return json.loads(found.group(1))


def _moment(data: dict, mode: str, p: int, keys: list[str]) -> dict:
    """What the page's player shows at position p, read from its data as its script does."""
    view = data["modes"][mode]
    texts = data["texts"]
    first = dict((i, n) for i, n in view["first"])
    labels = {}
    for timeline in view["labels"]:
        at = [entry for entry in timeline[1:] if entry[0] <= p]
        if at:
            labels[keys[timeline[0]]] = (texts[at[-1][1]], texts[at[-1][2]])
    return {
        "lit": {keys[i] for i in view["lit"][p]} if p >= 0 else set(),
        "caption": texts[view["captions"][p]] if p >= 0 else texts[view["start"]],
        "visited": {keys[i] for i, n in first.items() if n <= p},
        "freed": {keys[i] for start, nodes in view["freed"] if start <= p for i in nodes},
        "labels": labels,
    }


def _compare_every_moment(trace: Trace) -> int:
    run = prepare_run(trace)
    keys = list(run.graph.nodes)
    data = replay_frames(prepare_run(trace))
    player = run.player
    assert data["texts"][data["end"]["caption"]] == end_caption(player)
    compared = 0
    for mode in (FORWARD, BACKWARD):
        player.set_mode(mode)
        assert data["modes"][mode]["count"] == len(player.steps)
        for p in range(-1, len(player.steps)):
            player.seek(p, force=True)
            frame, page = player.frame(), _moment(data, mode, p, keys)
            where = (mode, p)
            assert page["lit"] == set(frame.step.lit if frame.step else ()), where
            assert page["caption"] == caption_now(player), where
            assert page["visited"] == frame.visited, where
            assert page["freed"] == frame.freed & set(keys), where
            assert page["labels"] == frame.labels, where
            compared += 1
    return compared


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_every_moment_of_the_examples_is_the_app_players(name):
    assert _compare_every_moment(example_trace(name)) > 10


@pytest.mark.parametrize("case", ["lab_two_rounds", "lab_zero_between", "lab_loss"])
def test_every_moment_of_fidelity_cases_is_the_app_players(case):
    trace = run_source(CASES[case], "<editor>", {"__name__": "__main__"})
    assert _compare_every_moment(trace) > 5


def test_the_page_names_nothing_outside_itself():
    html = page_html(example_trace("linear_step"))
    urls = set(re.findall(r"[a-z][a-z0-9+.-]*://[^\s\"'<>)]*", html, flags=re.IGNORECASE))
    assert urls <= {SVG_NAMESPACE}, urls
    markup = re.sub(r"<script\b[^>]*>.*?</script>", "", html, flags=re.DOTALL)
    assert not re.search(r"(?<![\w-])(src|href|xlink:href|action|srcset)\s*=", markup, re.I)
    assert "@import" not in html and "url(" not in html.replace("url(#arrow", "")
    assert not re.search(r"\b(fetch|XMLHttpRequest|WebSocket|EventSource|import)\s*\(", html)


def test_a_hostile_trace_cannot_break_out_of_the_page():
    evil = "</script><img src=x onerror=alert(1)><!-- & \u2028"
    data = example_trace("first_graph").to_dict()
    for tensor in data["tensors"]:
        if tensor.get("name") == "x":
            tensor["name"] = evil
    trace = Trace.from_dict(json.loads(json.dumps(data)))
    html = page_html(trace, title=evil)
    assert "<img" not in html and "<!--" not in html
    assert html.count("</script>") == 2  # the data's and the player's own
    page = _page_data(html)
    assert any(evil in text for text in page["texts"])  # the caption names it, escaped
    svg = picture_svg(trace)
    assert "<img" not in svg and "&lt;/script&gt;&lt;img" in svg


def test_picture_svg_is_the_app_layout():
    trace = example_trace("linear_step")
    graph = prepare_run(trace).graph
    svg = picture_svg(trace)
    assert svg.startswith("<svg") and svg.count('class="n ') == len(graph.nodes)
    assert svg.count('class="frame"') == len(graph.frames)
    assert svg.count('class="e') == len(graph.edges)


def test_picture_svg_stands_alone_with_the_end_state():
    # A notebook shows the SVG as an image: no page style reaches it. Without its own
    # rules its edges had no stroke (invisible) and its labels were not centred.
    trace = example_trace("first_graph")
    run = prepare_run(trace)
    svg = picture_svg(trace)
    style = svg[svg.index("<style>") : svg.index("</style>")]
    assert ".e {" in style and "stroke:" in style and "text-anchor: middle" in style
    # Backward freed MulBackward0's and PowBackward0's saved tensors: dashed, as in the app.
    freed = {k for k, n in run.graph.nodes.items() if n.title in ("MulBackward0", "PowBackward0")}
    assert len(freed) == 2
    for key in run.graph.nodes:
        tag = svg[: svg.index(f'data-key="{key}"')].rsplit("<g ", 1)[1]
        assert (" freed" in tag) == (key in freed), key


@pytest.mark.slow
def test_the_8k_node_rnn_page_is_under_5_mb():
    from benchmarks.bench_picture import RNN

    trace = run_source(RNN, "<editor>", {"__name__": "__main__"})
    started = time.perf_counter()
    html = page_html(trace, title="rnn")
    took = time.perf_counter() - started
    size = len(html.encode("utf-8"))
    assert size < RNN_LIMIT_BYTES, f"{size:,} bytes"
    data = _page_data(html)
    assert data["modes"][FORWARD]["count"] > 8000 and data["modes"][BACKWARD]["count"] > 8000
    assert took < 60, f"{took:.1f} s"


def test_open_writes_a_traces_page_without_a_window(tmp_path):
    from autograd_viz.cli.main import main

    trace_file, out = tmp_path / "run.json", tmp_path / "replay.html"
    trace_file.write_text(example_trace("first_graph").to_json(), encoding="utf-8")
    assert main(["open", str(trace_file), "--export-page", str(out)]) == 0
    assert _page_data(out.read_text(encoding="utf-8"))["modes"][FORWARD]["count"] == len(
        prepare_run(example_trace("first_graph")).player.steps_in(FORWARD)
    )
    assert main(["open", str(trace_file), "--export-page", str(tmp_path / "x.txt")]) == 2
