"""The replay page in a real browser: headless Chromium loads it from a file, the keys the
app's player bar uses (→ ← Home End Space) and the view buttons drive it, and at five steps
of each view of the first-graph and linear-step examples the lit nodes and the caption it
shows are the app's Player's. It asks the network for nothing.

Chromium is Debian's `chromium`, which `make test` installs (scripts/system_deps.sh
--test). Without it these tests skip on a developer's machine, and fail in CI (where $CI
is set), so a CI run never passes them by skipping.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autograd_viz.core.playback.bar_text import end_caption
from autograd_viz.core.playback.player import BACKWARD, FORWARD
from autograd_viz.core.playback.run_view import prepare_run
from autograd_viz.core.share import page_html
from tests.core.chromium_page import ChromiumPage, browser
from tests.core.replay_page_cases import EXAMPLE_FILES, app_moment, example_trace

if browser() is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI must run the replay page in Chromium: install `chromium`")
    pytest.skip(
        "no chromium on PATH (scripts/system_deps.sh --test installs it)",
        allow_module_level=True,
    )

STEPS_SEEN = 5
# The timeline's handle, its end and the words beside it.
TIMELINE = (
    "(() => { const s = document.getElementById('slider');"
    " return [s.value, s.max, document.getElementById('position').textContent]; })()"
)


def _shown(page: ChromiumPage) -> tuple[set[str], str]:
    return set(page.evaluate("replay.lit()")), page.evaluate("replay.caption()")


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_five_steps_of_each_view_light_and_say_what_the_app_does(name, tmp_path):
    trace = example_trace(name)
    path = tmp_path / f"{name}.html"
    path.write_text(page_html(trace, title=name), encoding="utf-8")
    counts = {m: len(prepare_run(trace).player.steps_in(m)) for m in (FORWARD, BACKWARD)}
    with ChromiumPage.open(path) as page:
        assert page.evaluate("replay.caption()") == end_caption(prepare_run(trace).player)
        for mode in (FORWARD, BACKWARD):
            if mode == BACKWARD:  # the view's start; Forward showed the run's end till →
                page.click('button[data-mode="backward"]')
                assert _shown(page) == app_moment(trace, mode, -1)
            assert page.evaluate("replay.state().mode") == mode
            for position in range(min(STEPS_SEEN, counts[mode])):
                page.press("ArrowRight")
                assert page.evaluate("replay.state().position") == position
                assert _shown(page) == app_moment(trace, mode, position), (mode, position)
            page.screenshot(tmp_path / f"{name}-{mode}.png")
            page.press("ArrowLeft")
            assert _shown(page) == app_moment(trace, mode, position - 1)
            page.press("End")
            assert _shown(page) == app_moment(trace, mode, counts[mode] - 1)
            page.press("Home")
            assert _shown(page) == app_moment(trace, mode, -1)
        assert page.requests == [path.resolve().as_uri()]  # nothing from the network
        assert page.errors == []
    assert (tmp_path / f"{name}-{BACKWARD}.png").stat().st_size > 10_000


def test_space_plays_and_pauses_as_the_app_does(tmp_path):
    trace = example_trace("first_graph")
    path = tmp_path / "first_graph.html"
    path.write_text(page_html(trace), encoding="utf-8")
    with ChromiumPage.open(path) as page:
        page.press("End")
        at_end = page.evaluate("replay.state().position")
        page.press("Space")  # at the end: play starts over from the start
        state = page.evaluate("replay.state()")
        assert state["playing"] and state["position"] == -1 and at_end >= 0
        page.press("Space")
        assert not page.evaluate("replay.state().playing")


def test_a_page_opens_with_nothing_but_itself(tmp_path: Path):
    path = tmp_path / "page.html"
    path.write_text(page_html(example_trace("linear_step")), encoding="utf-8")
    with ChromiumPage.open(path) as page:
        shot = page.screenshot(tmp_path / "page.png")
        assert page.requests == [path.resolve().as_uri()]
        assert page.errors == []
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_run_end_stands_at_the_timeline_end_and_home_and_left_leave_it(tmp_path):
    trace = example_trace("linear_step")
    count = len(prepare_run(trace).player.steps_in(FORWARD))
    path = tmp_path / "linear_step.html"
    path.write_text(page_html(trace), encoding="utf-8")
    with ChromiumPage.open(path) as page:
        assert page.evaluate(TIMELINE) == [str(count - 1), str(count - 1), f"end / {count}"]
        page.press("Home")  # the player is at -1 already: the start must still show
        assert _shown(page) == app_moment(trace, FORWARD, -1)
        assert page.evaluate(TIMELINE) == ["-1", str(count - 1), f"0 / {count}"]
    with ChromiumPage.open(path) as page:
        page.press("ArrowLeft")  # from the run's end, back to the view's last step
        assert page.evaluate("replay.state().position") == count - 1
        assert _shown(page) == app_moment(trace, FORWARD, count - 1)
        assert page.errors == []
