"""The replay page's player, in plain JavaScript, and its style: it only reads the frame
data the page carries (see _frames.py) and toggles classes and texts in the picture. The
controls are the app's player bar's: Space plays or pauses, ← → step, Home and End go to
the start and the end, and the view switches between Forward and Backward."""

from __future__ import annotations

from autograd_viz.core.graph.node_look import (
    BACKGROUND,
    DETAIL_COLOUR,
    TITLE_COLOUR,
)

STEP_MS = 700  # the app's player bar: one step per 700 ms at 1×

PAGE_CSS = f"""
html, body {{ margin: 0; height: 100%; background: {BACKGROUND}; color: {TITLE_COLOUR};
  font: 13px "DejaVu Sans", Helvetica, Arial, sans-serif; }}
body {{ display: flex; flex-direction: column; }}
#bar {{ display: flex; align-items: center; gap: 6px; padding: 6px 10px;
  border-bottom: 1px solid #e2e8f0; flex-wrap: wrap; }}
#bar h1 {{ font-size: 14px; margin: 0 10px 0 0; font-weight: 600; }}
#bar button {{ font: inherit; padding: 3px 9px; border: 1px solid #cbd5e1; background: #f8fafc;
  border-radius: 4px; cursor: pointer; color: {TITLE_COLOUR}; }}
#bar button.on {{ background: #e0e7ff; border-color: #6366f1; font-weight: 600; }}
#slider {{ flex: 1; min-width: 120px; }}
#position {{ min-width: 90px; text-align: right; font-variant-numeric: tabular-nums; }}
#stage {{ flex: 1; position: relative; overflow: hidden; cursor: grab; }}
#stage.dragging {{ cursor: grabbing; }}
#picture {{ width: 100%; height: 100%; display: block; user-select: none; }}
#caption {{ padding: 6px 12px 10px; border-top: 1px solid #e2e8f0; white-space: pre-wrap;
  font: 13px "DejaVu Sans Mono", Menlo, Consolas, monospace; min-height: 2.6em;
  color: {DETAIL_COLOUR}; }}
#legend {{ position: absolute; right: 10px; top: 8px; background: rgba(255,255,255,.9);
  border: 1px solid #e2e8f0; border-radius: 4px; padding: 4px 8px; font-size: 12px; }}
#legend div {{ display: flex; align-items: center; gap: 6px; }}
#help {{ color: #64748b; font-size: 12px; margin-left: 8px; }}
"""

SCRIPT = """
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("replay-data").textContent);
  const T = D.texts, STEP_MS = __STEP_MS__;
  const svg = document.getElementById("picture");
  const nodeEls = new Array(D.nodes), edgeEls = [];
  for (const el of svg.querySelectorAll("#nodes > .n")) nodeEls[+el.dataset.i] = el;
  for (const el of svg.querySelectorAll("#edges > .e")) edgeEls[+el.dataset.e] = el;
  const styled = new Set(D.styled);
  const caption = document.getElementById("caption");
  const slider = document.getElementById("slider");
  const position = document.getElementById("position");
  const gradLayer = document.getElementById("edge-grads");
  const NS = "http://www.w3.org/2000/svg";
  // Per view: the step each node first lights (-1: never) and each label's timeline.
  const views = {};
  for (const [mode, v] of Object.entries(D.modes)) {
    const first = new Int32Array(D.nodes).fill(-1);
    for (const [i, n] of v.first) first[i] = n;
    views[mode] = { ...v, firstAt: first };
  }
  const player = { mode: "forward", position: -1, moved: false, timer: null };
  const state = new Array(D.nodes).fill("");

  function setClass(i, look) {
    if (state[i] === look) return;
    const el = nodeEls[i];
    if (!el) return;
    if (state[i]) el.classList.remove(state[i]);
    if (look) el.classList.add(look);
    state[i] = look;
  }
  function elide(text, room) {
    const most = Math.max(2, Math.floor(room / 6.9));
    if (text.length <= most) return text;
    return text.slice(0, most - 1).replace(/\\u2026+$/, "") + "\\u2026";
  }
  function setLabel(i, value, grad) {
    const el = nodeEls[i];
    if (!el) return;
    for (const [cls, text] of [["v", value], ["g", grad]]) {
      const t = el.querySelector("text.t." + cls);
      if (!t) continue;
      const shown = elide(text, +t.dataset.room);
      if (t.textContent !== shown) t.textContent = shown;
    }
  }
  function labelAt(timeline, p) {
    let lo = 1, hi = timeline.length - 1, found = null;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (timeline[mid][0] <= p) { found = timeline[mid]; lo = mid + 1; } else hi = mid - 1;
    }
    return found;
  }
  function edgeGrads(carried) {
    gradLayer.textContent = "";
    for (const [e, text] of carried || []) {
      const path = edgeEls[e];
      if (!path) continue;
      const mid = path.getPointAtLength(path.getTotalLength() / 2);
      const g = document.createElementNS(NS, "g");
      g.setAttribute("class", "gl");
      const label = document.createElementNS(NS, "text");
      label.setAttribute("x", mid.x); label.setAttribute("y", mid.y - 5);
      label.textContent = T[text];
      g.appendChild(label);
      gradLayer.appendChild(g);
      const box = label.getBBox();
      const plate = document.createElementNS(NS, "rect");
      plate.setAttribute("x", box.x - 2); plate.setAttribute("y", box.y - 1);
      plate.setAttribute("width", box.width + 4); plate.setAttribute("height", box.height + 2);
      g.insertBefore(plate, label);
    }
  }
  function render() {
    const v = views[player.mode], p = player.position;
    for (const b of document.querySelectorAll("button[data-mode]"))
      b.classList.toggle("on", b.dataset.mode === player.mode);
    slider.max = String(Math.max(-1, v.count - 1));
    const end = !player.moved && v.count > 0;  // the timeline stands at the run's end too
    slider.value = String(end ? v.count - 1 : p);
    position.textContent = end ? "end / " + v.count : (p + 1) + " / " + v.count;
    if (!player.moved) {  // the app's first look: the graph as it stands at the end
      const freed = new Set(D.end.freed);
      for (let i = 0; i < D.nodes; i++) setClass(i, freed.has(i) ? "freed" : "");
      caption.textContent = T[D.end.caption];
      return;
    }
    const lit = new Set(p >= 0 ? v.lit[p] : []);
    const freed = new Set();
    for (const [from, nodes] of v.freed) if (from <= p) for (const i of nodes) freed.add(i);
    const first = v.firstAt;
    for (let i = 0; i < D.nodes; i++) {
      const visited = first[i] >= 0 && first[i] <= p;
      setClass(i, lit.has(i) ? "lit" : freed.has(i) ? "freed" : visited ? "" : "faded");
    }
    const carried = p >= 0 ? v.grads[p] : null;
    const hot = new Set((carried || []).map((c) => c[0]));
    edgeEls.forEach((el, e) => {
      if (styled.has(e)) return;
      const target = D.targets[e], seen = first[target] >= 0 && first[target] <= p;
      el.classList.toggle("faded", !seen && !hot.has(e));
      el.classList.toggle("hot", hot.has(e));
    });
    edgeGrads(carried);
    for (const timeline of v.labels) {
      const at = labelAt(timeline, p);
      if (at) setLabel(timeline[0], T[at[1]], T[at[2]]);
    }
    caption.textContent = p >= 0 ? T[v.captions[p]] : T[v.start];
  }
  // ---- the app's Player and PlayerBar, move for move -------------------------------
  function seek(p, force) {
    const count = views[player.mode].count;
    p = Math.max(-1, Math.min(p, count - 1));
    if (p !== player.position || force) {
      player.position = p;
      player.moved = true;
      render();
    }
  }
  function setMode(mode) {
    if (mode !== player.mode && views[mode]) {
      player.mode = mode;
      player.position = -1;
      seek(-1, true);
    }
  }
  function atEnd() { return player.position >= views[player.mode].count - 1; }
  function stepForward() {
    if (atEnd()) return false;
    seek(player.position + 1);
    return true;
  }
  function pause() {
    if (player.timer !== null) clearInterval(player.timer);
    player.timer = null;
    document.getElementById("play").textContent = "\\u25b6 Play";
  }
  function togglePlay() {
    if (player.timer !== null) { pause(); return; }
    if (!views[player.mode].count) return;
    if (atEnd()) seek(-1);
    player.timer = setInterval(() => { if (!stepForward()) pause(); }, STEP_MS);
    document.getElementById("play").textContent = "Pause";
  }
  const actions = {
    start: () => { pause(); seek(-1, !player.moved); },
    back: () => {
      pause();
      if (!player.moved) seek(views[player.mode].count - 1, true);  // from the run's end
      else if (player.position >= 0) seek(player.position - 1);
    },
    play: togglePlay,
    step: () => { stepForward(); },
    end: () => { pause(); seek(views[player.mode].count - 1); },
    fit: fit,
  };
  const keys = { " ": "play", ArrowLeft: "back", ArrowRight: "step", Home: "start", End: "end" };
  document.addEventListener("keydown", (event) => {
    const action = keys[event.key];
    if (!action || event.target === slider && action !== "play") return;
    event.preventDefault();
    actions[action]();
  });
  for (const b of document.querySelectorAll("button[data-action]"))
    b.addEventListener("click", () => actions[b.dataset.action]());
  for (const b of document.querySelectorAll("button[data-mode]"))
    b.addEventListener("click", () => setMode(b.dataset.mode));
  slider.addEventListener("input", () => seek(+slider.value));
  // ---- zoom (wheel, about the pointer) and pan (drag) -------------------------------
  const home = svg.viewBox.baseVal;
  const whole = [home.x, home.y, home.width, home.height];
  function fit() { svg.setAttribute("viewBox", whole.join(" ")); }
  function toPicture(event) {
    const point = svg.createSVGPoint();
    point.x = event.clientX; point.y = event.clientY;
    return point.matrixTransform(svg.getScreenCTM().inverse());
  }
  svg.addEventListener("wheel", (event) => {
    event.preventDefault();
    const at = toPicture(event), box = svg.viewBox.baseVal;
    const k = Math.exp(event.deltaY * 0.0015);
    svg.setAttribute("viewBox", [at.x - (at.x - box.x) * k, at.y - (at.y - box.y) * k,
      box.width * k, box.height * k].join(" "));
  }, { passive: false });
  let drag = null;
  svg.addEventListener("pointerdown", (event) => {
    drag = toPicture(event);
    svg.setPointerCapture(event.pointerId);
    svg.parentElement.classList.add("dragging");
  });
  svg.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const at = toPicture(event), box = svg.viewBox.baseVal;
    svg.setAttribute("viewBox", [box.x - (at.x - drag.x), box.y - (at.y - drag.y),
      box.width, box.height].join(" "));
  });
  svg.addEventListener("pointerup", () => {
    drag = null; svg.parentElement.classList.remove("dragging");
  });
  // What a test (or a curious reader) asks of the page: the player's moment, and what it shows.
  window.replay = {
    state: () => ({ mode: player.mode, position: player.position, moved: player.moved,
      playing: player.timer !== null }),
    lit: () => [...svg.querySelectorAll("#nodes > .n.lit")].map((el) => el.dataset.key),
    caption: () => caption.textContent,
    setMode: setMode,
  };
  render();
})();
""".replace("__STEP_MS__", str(STEP_MS))
