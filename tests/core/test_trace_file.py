"""Opening a trace file: a round trip replays exactly as the run did, and a mutated or
broken file gets one clear line, never a traceback."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from autograd_viz.core.kernel.runner import run_source
from autograd_viz.core.playback.player import MODES
from autograd_viz.core.playback.run_view import prepare_run
from autograd_viz.core.trace import Trace
from autograd_viz.core.trace.trace_file import TraceFileError, read_trace, trace_from_bytes
from tests.core.fidelity_cases import CASES

ROUND_TRIP = sorted(CASES)[::6]  # every sixth fidelity case (all of them run in CI-slow)


def _replay(trace: Trace) -> list[tuple[str, int, frozenset, str, dict]]:
    """Every step of every view: its event, lit set, caption and the labels then."""
    run = prepare_run(trace)
    player = run.player
    out = []
    for mode in MODES:
        player.set_mode(mode)
        while player.step_forward():
            step = player.current
            frame = player.frame()
            out.append((mode, step.event_index, step.lit, step.caption, frame.labels))
    return out


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_a_saved_trace_opens_and_replays_as_the_run_did(name: str, tmp_path) -> None:
    trace = run_source(CASES[name])
    path = tmp_path / "run.json"
    trace.save(path)
    opened = read_trace(path)
    assert opened.script == CASES[name] and opened.recorded_at == trace.recorded_at
    assert _replay(opened) == _replay(trace)  # the run as the app had it, before saving


def test_bad_files_get_one_line(tmp_path) -> None:
    good = run_source(
        "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 3).sum().backward()\n"
    )
    data = json.loads(good.to_json())
    cases = {
        b"": "is not JSON",
        b'{"events": [': "is not JSON",
        b"[1, 2]": "is JSON but not a trace",
        json.dumps({**data, "version": 99}).encode(): "newer autograd-viz",
        json.dumps(
            {**data, "nodes": [{"id": 3}]}
        ).encode(): "nodes[0] must be an object with an id",
        json.dumps({**data, "nodes": [{**data["nodes"][0], "next": ["n99"]}]}).encode(): (
            "nodes[0].next must be ids of nodes in the trace"
        ),
        json.dumps({**data, "tensors": [{**data["tensors"][0], "shape": [-1]}]}).encode(): (
            "tensors[0].shape must be a list of sizes"
        ),
    }
    for raw, said in cases.items():
        with pytest.raises(TraceFileError) as caught:
            trace_from_bytes(raw, "run.json")
        assert said in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(TraceFileError, match=r"run\.json: No such file"):
        read_trace(tmp_path / "run.json")


JUNK: list[Any] = [None, 0, -1, 2**70, 1.5, "nan", "x", "", [], [None], {}, {"kind": 3}, True]


def _mutate(data: Any, rng: random.Random) -> None:
    """Replace one value somewhere in `data` with junk (or drop a key)."""
    node = data
    for _ in range(6):
        if isinstance(node, dict) and node:
            key = rng.choice(sorted(node, key=str))
            child = node[key]
            if not isinstance(child, (dict, list)) or not child or rng.random() < 0.3:
                if rng.random() < 0.2:
                    del node[key]
                else:
                    node[key] = rng.choice(JUNK)
                return
            node = child
        elif isinstance(node, list) and node:
            i = rng.randrange(len(node))
            child = node[i]
            if not isinstance(child, (dict, list)) or not child or rng.random() < 0.3:
                node[i] = rng.choice(JUNK)
                return
            node = child
        else:
            return


def test_mutated_traces_open_and_replay_or_say_why_in_one_line() -> None:
    rng = random.Random(0)
    sources = [CASES[name] for name in sorted(CASES)[:40:4]]
    opened = refused = 0
    for source in sources:
        text = run_source(source).to_json()
        for _ in range(25):
            data = json.loads(text)
            for _ in range(rng.randint(1, 3)):
                _mutate(data, rng)
            raw = json.dumps(data).encode()
            try:
                trace = trace_from_bytes(raw, "run.json")
            except TraceFileError as exc:
                assert "\n" not in str(exc)
                refused += 1
                continue
            _replay(trace)  # no exception: what was accepted can be shown and stepped
            opened += 1
    assert opened > 25 and refused > 25  # both paths taken, many times
