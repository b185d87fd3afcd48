// The tree panel's Sequence view: one lane per agent over time, a bar per agent visit with its
// model and tool calls nested in it, an arrow per transfer and AgentTool call or return. The
// server sends the view's data (web.Sequence) in the #seq-data fragment, whole or as a delta,
// over the live socket and with each time-travel step; this module keeps it by id and draws only
// what is in view, so that a run of 10,000 events scrolls as smoothly as one of 60.
//
// The time axis is the events' times with a floor: each event the view shows is at least one
// step after the one before, so a burst of events a microsecond apart stays readable and a long
// model call stays long. Clicking a bar or an arrow inspects its event the way a timeline row
// does (run.js and report.js handle .seq-link).
//
// A redraw touches only what is in view: as data lands, bars are indexed per lane and kind by
// where they start, with the furthest end reached so far, and arrows by where they are; a redraw
// binary-searches both. Zoomed out below a pixel per call, a lane's neighbouring calls of a kind
// are drawn as one merged bar instead of hundreds of rects on the same pixels.

const VIEW_KEY = "baton.view";
const LABEL_W = 150;  // the sticky lane labels' column
const AXIS_H = 20;    // the time axis on top
const LANE_H = 36;
const RATE = 1 / 50;  // steps per millisecond: 50 ms of a call take as much room as one event
const MIN_ZOOM = 2, MAX_ZOOM = 80; // px per step; Fit stays at MIN_ZOOM or more, a hand may go
                                   // down to the whole run (wholeZoom)
const KINDS = ["agent", "model", "tool"]; // the bars' drawing order: calls over their visit
const SVGNS = "http://www.w3.org/2000/svg";

// Q is the view's state. It, take, layout, firstAtLeast and timeAt are exported for the
// module's unit tests (static/test/sequence.test.js) only: no other module touches them.
export const Q = {
  lanes: [],          // {agent, colour, depth}, in lane order
  bars: new Map(),    // id -> bar, with .agent
  arrows: new Map(),  // id -> arrow, with .fromAgent, .toAgent
  head: 0, now: 0,
  ticks: null,        // {seqs, xs, ts, index}: where each event the view shows sits, in steps
  headTick: false,    // the axis's last tick is the head's alone (see addTicks)
  groups: new Map(),  // the bars indexed for a redraw (see index), grown by live deltas
  order: [],          // the groups' keys in drawing order
  sorted: [],         // the arrows in time order, with .x: their step
  changed: null,      // {lo, hi}: the steps live deltas changed since the last draw
  zoom: 0,            // px per step
  fitted: true,       // zoom to fit the whole run as it grows, until the reader zooms
  width: 0,           // of the time area, in px
  frame: 0,           // the pending redraw
  drawn: null,        // {x0, x1, zoom}: the span of the time area the SVG holds
  labels: [],         // the drawn calls' labels, {label, name, dur, a, z}: placed for the view
  dirty: true,        // the SVG must be drawn again, wherever the view is
  follow: true,       // keep the newest event in view as the run goes on
  selected: 0,        // the event the page has selected
};

const scroller = () => document.getElementById("seq-scroll");

// listeners are told when the data changes (onSequence): the Waterfall view draws it too.
const listeners = [];

// onSequence calls fn after each change of the view's data: fn(true) for a whole Sequence (the
// page's, a step in time), fn(false) for a live delta.
export function onSequence(fn) { listeners.push(fn); }

// sequenceState is the view's data as it stands, for the Waterfall view to read, never change:
// the bars by id ({id, agent, kind, name, seq, end, t0, t1, tokens, failed, parent}), the lanes,
// the newest event and its time.
export function sequenceState() { return { bars: Q.bars, lanes: Q.lanes, head: Q.head, now: Q.now }; }
const shown = () => { const p = document.getElementById("view-sequence"); return p && !p.hidden; };

// take takes in the data of the #seq-data element el, once. A whole Sequence (page load, a step
// in time) replaces what the view holds; a live delta costs what it holds: its bars and arrows
// join the index (see extend) and the view draws again only if they change what is drawn.
export function take(el) {
  if (!el || el.dataset.taken) return;
  el.dataset.taken = "1";
  let s;
  try { s = JSON.parse(el.dataset.json || "{}"); } catch (e) { return; }
  if (!Array.isArray(s.lanes)) return;
  if (s.full) { Q.bars.clear(); Q.arrows.clear(); Q.ticks = null; }
  // Lanes come whole; those seen keep their index unless an agent joins before them.
  const grown = Q.lanes.length <= s.lanes.length && Q.lanes.every((l, i) => l.agent === s.lanes[i].agent);
  if (!grown) Q.ticks = null;
  if (!grown || Q.lanes.length !== s.lanes.length) Q.dirty = true;
  Q.lanes = s.lanes;
  const name = (i) => (s.lanes[i] ? s.lanes[i].agent : "");
  const bars = [], arrows = [], was = new Map(); // was: a changed bar's id -> its extent before
  const prevHead = Q.ticks ? stepOf(Q.head) : 0;
  // Bars and arrows come as arrays (web.SeqBar and web.SeqArrow say the order). A bar or arrow
  // seen before changes in place, so the index keeps holding it.
  for (const [id, lane, kind, nm, seq, end, t0, t1, tokens, failed, parent] of s.bars || []) {
    const b = { id, agent: name(lane), kind, name: nm, seq, end, t0, t1, tokens, failed, parent };
    const old = Q.bars.get(id);
    if (old && Q.ticks && old.a !== undefined) was.set(id, [old.a, old.end ? old.z : prevHead]);
    if (old) Object.assign(old, b); else Q.bars.set(id, b);
    bars.push(old || b);
  }
  for (const [id, kind, order, from, to, seq, t, mode, failed] of s.arrows || []) {
    const a = { id, kind, order, fromAgent: name(from), toAgent: name(to), seq, t, mode, failed };
    const old = Q.arrows.get(id);
    if (old) Object.assign(old, a); else Q.arrows.set(id, a);
    if (!old) arrows.push(a);
    else if (Q.ticks && old.x !== undefined) changed(old.x, old.x);
  }
  const ahead = s.full || s.head > Q.head;
  if (ahead) { Q.head = s.head; Q.now = s.now; }
  if (Q.ticks && !extend(bars, arrows, was, ahead, prevHead)) Q.ticks = null;
  if (!Q.ticks) Q.dirty = true; // laid out again on the next draw
  schedule();
  for (const fn of listeners) fn(Boolean(s.full));
}

// changed notes that the steps lo..hi of the view changed: a redraw that would show them draws.
function changed(lo, hi) {
  const c = Q.changed;
  Q.changed = c ? { lo: Math.min(c.lo, lo), hi: Math.max(c.hi, hi) } : { lo, hi };
}

// layout places every event the view shows on the time axis, in steps, and indexes it all.
export function layout() {
  Q.ticks = { seqs: [], xs: [], ts: [], index: new Map() };
  Q.headTick = false;
  Q.groups = new Map();
  Q.order = [];
  Q.sorted = [];
  addTicks(Array.from(Q.bars.values()), Array.from(Q.arrows.values()));
  index();
}

// addTicks puts on the time axis the events of bars and arrows and the head that it lacks,
// after those it has; false if one of them would go before its end (the axis must be laid out
// again). The head keeps a tick of its own only while it is the newest: the next head takes
// its place, as it would in a layout of the whole run.
function addTicks(bars, arrows) {
  const T = Q.ticks, at = new Map(); // seq -> time
  const put = (seq, t) => { if (seq > 0 && !at.has(seq) && !T.index.has(seq)) at.set(seq, t); };
  for (const b of bars) { put(b.seq, b.t0); if (b.end) put(b.end, b.t1); }
  for (const a of arrows) put(a.seq, a.t);
  const own = !at.has(Q.head) && !T.index.has(Q.head);
  put(Q.head, Q.now);
  const seqs = Array.from(at.keys()).sort((x, y) => x - y);
  const n = T.seqs.length;
  if (seqs.length && n && seqs[0] <= T.seqs[n - 1]) return false;
  for (const seq of seqs) {
    const i = T.seqs.length, t = at.get(seq);
    T.seqs.push(seq);
    T.ts.push(t);
    T.xs.push(i === 0 ? 0.5 : T.xs[i - 1] + Math.max(1, (t - T.ts[i - 1]) * RATE));
    T.index.set(seq, i);
  }
  if (seqs.length) Q.headTick = own;
  return true;
}

// dropHeadTick takes the old head's tick off the axis's end when nothing but the head had it.
function dropHeadTick() {
  const T = Q.ticks;
  if (!Q.headTick || !T.seqs.length) return;
  T.index.delete(T.seqs.pop());
  T.xs.pop();
  T.ts.pop();
  Q.headTick = false;
}

// stepOf returns where event seq sits on the time axis, in steps.
function stepOf(seq) {
  const i = Q.ticks.index.get(seq);
  return i === undefined ? 0 : Q.ticks.xs[i];
}

// index groups the bars by lane and kind (Q.groups, drawn in the order Q.order), each group in
// order of its bars' starts (a, in steps) with reach[i] the furthest end (z) of bars 0..i, an
// open bar reaching on to the head (Infinity), and sorts the arrows by time: a redraw then finds
// what is in view by binary search, and skips a lane's past at once.
function index() {
  const lanes = new Map(Q.lanes.map((l, i) => [l.agent, i]));
  const byKey = new Map();
  for (const b of Q.bars.values()) {
    if (!place(b, lanes)) continue;
    const key = groupKey(b);
    if (!byKey.has(key)) byKey.set(key, []);
    byKey.get(key).push(b);
  }
  for (const [key, bars] of byKey) {
    bars.sort(byStart);
    const g = { bars, a: bars.map((b) => b.a), reach: [] };
    Q.groups.set(key, g);
    reachFrom(g, 0);
  }
  Q.order = Array.from(Q.groups.keys()).sort((p, q) => p - q);
  Q.sorted = Array.from(Q.arrows.values()).sort(bySeq);
  for (const a of Q.sorted) a.x = stepOf(a.seq);
}

const byStart = (p, q) => p.a - q.a || p.id - q.id;
const bySeq = (p, q) => p.seq - q.seq || p.id - q.id;
const groupKey = (b) => KINDS.indexOf(b.kind) * 1e6 + b.lane;

// place sets bar b's lane and its start and end in steps; false if it has no lane.
function place(b, lanes) {
  const lane = lanes.get(b.agent);
  if (lane === undefined) return false;
  b.lane = lane;
  b.a = stepOf(b.seq);
  b.z = b.end ? stepOf(b.end) : Infinity; // open: on to the head, wherever it is then
  return true;
}

// reachFrom sets group g's reach from its bar i on.
function reachFrom(g, i) {
  for (; i < g.bars.length; i++) g.reach[i] = Math.max(i ? g.reach[i - 1] : -Infinity, g.bars[i].z);
}

// extend takes a live delta's bars (new or changed; was holds the changed ones' extents
// before) and new arrows into the index, at a cost in proportion to them: the axis grows at
// its end, a bar joins its group at its place (the end, as a lane's bars come in order of their
// starts), a changed bar's group mends its reach from that bar on. It notes what changed for
// the next redraw; false if the view must be laid out again (an event before the axis's end).
function extend(bars, arrows, was, ahead, prevHead) {
  if (ahead) dropHeadTick();
  if (!addTicks(bars, arrows)) return false;
  const head = stepOf(Q.head);
  changed(Math.min(prevHead, head), head); // open bars and the axis grow to the new head
  const lanes = new Map(Q.lanes.map((l, i) => [l.agent, i]));
  for (const b of bars) {
    const before = was.get(b.id);
    if (before) {
      const g = Q.groups.get(groupKey(b));
      const i = g ? g.bars.indexOf(b, firstAtLeast(g.a, before[0])) : -1;
      if (i < 0 || !place(b, lanes) || b.a !== before[0] || Q.groups.get(groupKey(b)) !== g) return false;
      reachFrom(g, i);
      changed(b.a, Math.max(before[1], b.end ? b.z : head));
      continue;
    }
    if (!place(b, lanes)) continue;
    const key = groupKey(b);
    let g = Q.groups.get(key);
    if (!g) {
      g = { bars: [], a: [], reach: [] };
      Q.groups.set(key, g);
      Q.order.splice(firstAtLeast(Q.order, key), 0, key);
    }
    const n = g.bars.length;
    const i = n && byStart(b, g.bars[n - 1]) < 0 ? firstAtLeast(g.bars, b, null, byStart) : n;
    g.bars.splice(i, 0, b);
    g.a.splice(i, 0, b.a);
    reachFrom(g, i);
    changed(b.a, b.end ? b.z : head);
  }
  for (const a of arrows) {
    a.x = stepOf(a.seq);
    const n = Q.sorted.length;
    const i = n && bySeq(a, Q.sorted[n - 1]) < 0 ? firstAtLeast(Q.sorted, a, null, bySeq) : n;
    Q.sorted.splice(i, 0, a);
    changed(a.x, a.x);
  }
  return true;
}

// firstAtLeast returns the first index of the ascending array arr whose value is >= v (by(x)
// gives an element's value; or cmp(x, v) compares them), arr.length if none.
export function firstAtLeast(arr, v, by, cmp) {
  let lo = 0, hi = arr.length;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (cmp ? cmp(arr[m], v) < 0 : (by ? by(arr[m]) : arr[m]) < v) lo = m + 1; else hi = m;
  }
  return lo;
}

// timeAt returns the run's time (ms) at px x of the time area.
export function timeAt(x) {
  const { xs, ts } = Q.ticks;
  if (xs.length === 0) return 0;
  const s = x / Q.zoom;
  let lo = 0, hi = xs.length - 1;
  while (lo < hi) { const m = (lo + hi + 1) >> 1; if (xs[m] <= s) lo = m; else hi = m - 1; }
  if (lo >= xs.length - 1 || s <= xs[lo]) return ts[lo];
  return ts[lo] + (ts[lo + 1] - ts[lo]) * (s - xs[lo]) / (xs[lo + 1] - xs[lo]);
}

const steps = () => (Q.ticks.xs.length ? Q.ticks.xs[Q.ticks.xs.length - 1] + 1 : 1);

// fitZoom is the zoom that shows the whole run in the scroller, within the zoom's bounds.
function fitZoom() {
  return Math.max(MIN_ZOOM, Math.min(MAX_ZOOM / 2, wholeZoom()));
}

// wholeZoom is the zoom that shows the whole run in the scroller: how far one may zoom out by
// hand, calls too narrow for a pixel then merged.
function wholeZoom() {
  const box = scroller();
  return Math.max(100, (box ? box.clientWidth : 600) - LABEL_W - 24) / steps();
}

function schedule() {
  if (Q.frame || !shown()) return;
  Q.frame = requestAnimationFrame(() => { Q.frame = 0; draw(); });
}

function el(tag, attrs, parent) {
  const e = document.createElementNS(SVGNS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}

function titled(e, text) { el("title", {}, e).textContent = text; return e; }

// A bar's tooltip is written when the pointer first comes over it: a redraw makes hundreds of
// bars, and their titles would double its elements.
const tips = new WeakMap(); // bar element -> () => its tooltip's text

function tipOnHover(ev) {
  const f = tips.get(ev.target);
  if (f) { tips.delete(ev.target); titled(ev.target, f()); }
}

function ms(v) { return v < 1000 ? (Math.round(v * 10) / 10) + " ms" : (v / 1000).toFixed(2) + " s"; }

const laneY = (i) => AXIS_H + i * LANE_H;

// draw lays the view out again when needed and draws what is in view, with half a screen on
// either side; a scroll that stays within what was drawn draws nothing.
function draw() {
  const box = scroller();
  if (!box) return;
  if (!Q.ticks) layout();
  if (Q.fitted || !Q.zoom) Q.zoom = fitZoom();
  const atEnd = box.scrollLeft + box.clientWidth >= box.scrollWidth - 4;
  let canvas = box.querySelector(".seq-canvas");
  if (!canvas) {
    canvas = document.createElement("div");
    canvas.className = "seq-canvas";
    canvas.append(document.createElement("div"), el("svg", { class: "seq-svg" }));
    canvas.firstChild.className = "seq-labels";
    box.appendChild(canvas);
  }
  Q.width = steps() * Q.zoom + 24;
  const height = laneY(Q.lanes.length) + 4;
  canvas.style.width = LABEL_W + Q.width + "px";
  canvas.style.height = height + "px";
  drawLabels(canvas.firstChild, height);
  if (Q.follow && atEnd) box.scrollLeft = box.scrollWidth;
  const d = Q.drawn, v0 = Math.max(0, box.scrollLeft - LABEL_W);
  const v1 = Math.min(Q.width, box.scrollLeft - LABEL_W + box.clientWidth);
  const c = Q.changed;
  Q.changed = null;
  if (!Q.dirty && d && d.zoom === Q.zoom && v0 >= d.x0 && v1 <= d.x1 &&
      !(c && c.lo * Q.zoom <= d.x1 && c.hi * Q.zoom >= d.x0)) { placeLabels(box); return scaleText(box); }
  Q.dirty = false;
  const x0 = Math.max(0, box.scrollLeft - LABEL_W - box.clientWidth / 2);
  const x1 = Math.min(Q.width, box.scrollLeft - LABEL_W + box.clientWidth * 1.5);
  const svg = canvas.lastChild;
  svg.setAttribute("width", String(Math.max(1, x1 - x0)));
  svg.setAttribute("height", String(height));
  svg.setAttribute("viewBox", x0 + " 0 " + Math.max(1, x1 - x0) + " " + height);
  svg.style.left = LABEL_W + x0 + "px";
  svg.replaceChildren();
  Q.labels = [];
  drawAxis(svg, x0, x1, height);
  drawBars(svg, x0, x1);
  drawArrows(svg, x0, x1);
  placeLabels(box);
  Q.drawn = { x0, x1, zoom: Q.zoom };
  scaleText(box);
}

function scaleText(box) {
  const scale = document.getElementById("seq-scale");
  if (scale) scale.textContent = ms(timeAt(Math.max(0, box.scrollLeft - LABEL_W))) + " – " +
    ms(timeAt(box.scrollLeft - LABEL_W + box.clientWidth)) + " in view";
}

function drawLabels(box, height) {
  box.style.height = height + "px";
  if (box.childElementCount === Q.lanes.length &&
      Q.lanes.every((l, i) => box.children[i].dataset.agent === l.agent)) return;
  box.replaceChildren(...Q.lanes.map((l, i) => {
    const d = document.createElement("div");
    d.className = "seq-lane agent-c" + (l.colour % 10);
    d.dataset.testid = "seq-lane";
    d.dataset.agent = l.agent;
    d.title = l.agent; // the whole name, however narrow the column
    d.style.top = laneY(i) + "px";
    d.style.paddingLeft = 6 + Math.min(l.depth, 4) * 8 + "px";
    d.textContent = l.agent;
    return d;
  }));
}

function drawAxis(svg, x0, x1, height) {
  const g = el("g", { class: "seq-axis", "aria-hidden": "true" }, svg);
  for (let i = 0; i < Q.lanes.length; i++) {
    el("line", { x1: x0, x2: x1, y1: laneY(i + 1), y2: laneY(i + 1), class: "seq-rule" }, g);
  }
  let right = -Infinity; // where the last label drawn ends
  for (let x = Math.ceil(x0 / 120) * 120; x < x1; x += 120) {
    el("line", { x1: x, x2: x, y1: AXIS_H - 4, y2: height, class: "seq-tick" }, g);
    const label = ms(timeAt(x)), w = label.length * 7;
    // A label that would run past the end of the time area ends at its tick instead of being cut,
    // unless it would then run into the one before: that tick goes without.
    const end = x + 3 + w > Q.width;
    if (end && x - 3 - w < right + 8) continue;
    el("text", { x: end ? x - 3 : x + 3, y: AXIS_H - 6, "text-anchor": end ? "end" : "start" }, g).textContent = label;
    right = end ? x - 3 : x + 3 + w;
  }
}

// drawBars draws the bars that reach into [x0, x1] (px), each lane's and kind's narrower than a
// pixel merged with their neighbours.
function drawBars(svg, x0, x1) {
  const layer = el("g", { class: "seq-bars" }, svg);
  const selected = selectedSeq();
  const s0 = x0 / Q.zoom, s1 = x1 / Q.zoom, head = stepOf(Q.head);
  for (const key of Q.order) {
    const g = Q.groups.get(key);
    // Every bar before lo ends before the view; every bar from hi on starts after it.
    const lo = firstAtLeast(g.reach, s0), hi = firstAtLeast(g.a, s1 + 1e-9);
    let run = null;        // neighbouring sub-pixel bars to draw as one
    let right = -Infinity; // the right end drawn so far: a bar that adds no pixel is left out
    for (let i = lo; i < hi; i++) {
      const b = g.bars[i], bz = b.end ? b.z : head;
      if (bz < s0) continue;
      const a = b.a * Q.zoom, z = bz * Q.zoom;
      if (z - a >= 1) {
        if (Math.max(a + 2, z) <= right + 1 && b.seq !== selected) continue;
        right = Math.max(right, drawRun(layer, run, selected), a + Math.max(2, z - a));
        run = null;
        drawBar(layer, b, a, z, selected);
      } else if (run && a <= Math.max(run.z, run.lastA + 2) + 1) { // would touch it on screen
        Object.assign(run, { z: Math.max(run.z, z), lastA: a, last: b, n: run.n + 1, failed: run.failed || b.failed,
          open: run.open || !b.end, selected: run.selected || b.seq === selected });
      } else {
        right = Math.max(right, drawRun(layer, run, selected));
        run = { a, z, lastA: a, first: b, last: b, n: 1, failed: b.failed, open: !b.end, selected: b.seq === selected };
      }
    }
    drawRun(layer, run, selected);
  }
}

function barClass(b, failed, open, selected) {
  return "seq-bar seq-link kind-" + b.kind + " agent-c" + ((Q.lanes[b.lane].colour || 0) % 10) +
    (failed ? " failed" : "") + (open ? " open" : "") + (selected ? " selected" : "");
}

function barBox(b) {
  const y = laneY(b.lane);
  return b.kind === "agent" ? { y: y + 4, height: LANE_H - 8 } : { y: b.kind === "model" ? y + 9 : y + 20, height: 9 };
}

function drawBar(layer, b, a, z, selected) {
  const dur = b.end ? ms(b.t1 - b.t0) : "running";
  const what = b.kind === "agent" ? "visit" : b.kind + " call" + (b.name ? " " + b.name : "");
  const r = el("rect", {
    x: a, width: Math.max(2, z - a), ...barBox(b), rx: 2,
    class: barClass(b, b.failed, !b.end, b.seq === selected),
    "data-testid": "seq-bar", "data-kind": b.kind, "data-seq": b.seq, "data-agent": b.agent,
  }, layer);
  tips.set(r, () => b.agent + " · " + what + " · " + dur + (b.tokens ? " · " + b.tokens + " tokens" : "") +
    (b.failed ? " · failed" : "") + " (#" + b.seq + (b.end ? "–#" + b.end : "") + ")");
  // A call's bar wide enough for it says what it was and how long it took: its tool's name, or
  // the model the call named ("model" when it named none), with the duration when that fits too.
  // Its place and text depend on what of the bar is in view: placeLabels sets them.
  if (b.kind === "agent") return;
  const box = barBox(b);
  const label = el("text", { y: box.y + box.height - 1.5, class: "seq-bar-label", "aria-hidden": "true", "data-seq": b.seq }, layer);
  Q.labels.push({ label, name: b.name || b.kind, dur, a, z });
}

// barLabelIn is the label of a call's bar from a to z (px of the time area) when v0 to v1 of the
// time area is in view right of the lanes' names: barLabel's for the part of the bar in view, at
// that part's start, {x, text}; null when nothing fits. Zoomed in, a bar may start under the
// names, and its label would be hidden there.
export function barLabelIn(name, dur, a, z, v0, v1) {
  const from = Math.max(a, v0), to = Math.min(z, v1);
  const text = barLabel(name, dur, to - from - 6);
  return text ? { x: from + 3, text } : null;
}

// placeLabels sets the drawn bars' labels for the part of the time area in view: a scroll
// within what is drawn draws nothing else.
function placeLabels(box) {
  const v0 = box.scrollLeft, v1 = box.scrollLeft + box.clientWidth - LABEL_W;
  for (const { label, name, dur, a, z } of Q.labels) {
    const p = barLabelIn(name, dur, a, z, v0, v1);
    if (!p) { label.setAttribute("display", "none"); continue; }
    label.removeAttribute("display");
    label.setAttribute("x", String(p.x));
    if (label.textContent !== p.text) label.textContent = p.text;
  }
}

// barLabel is the label that fits px of a bar: "name · duration", the name alone, or "" (about
// 5 px a character at the label's size).
export function barLabel(name, dur, px) {
  const fits = (s) => s.length * 5 <= px;
  if (fits(name + " · " + dur)) return name + " · " + dur;
  return fits(name) ? name : "";
}

// drawRun draws run: one bar as itself, more as one merged bar that inspects the first of them.
// It returns the right end of what it drew.
function drawRun(layer, run, selected) {
  if (!run) return -Infinity;
  const b = run.first;
  if (run.n === 1) drawBar(layer, b, run.a, run.z, selected);
  else drawMerged(layer, run);
  return Math.max(run.z, run.lastA + 2);
}

function drawMerged(layer, run) {
  const b = run.first;
  const what = b.kind === "agent" ? "visits" : b.kind + " calls";
  const r = el("rect", {
    x: run.a, width: Math.max(run.z, run.lastA + 2) - run.a, ...barBox(b), rx: 2,
    class: barClass(b, run.failed, run.open, run.selected) + " merged",
    "data-testid": "seq-bar", "data-kind": b.kind, "data-seq": b.seq, "data-agent": b.agent, "data-count": run.n,
  }, layer);
  const last = run.last.end || run.last.seq;
  tips.set(r, () => b.agent + " · " + run.n + " " + what + (run.failed ? ", some failed" : "") +
    ", #" + b.seq + "–#" + last + ": zoom in to tell them apart");
}

// drawArrows draws the arrows in [x0, x1] (px).
function drawArrows(svg, x0, x1) {
  const layer = el("g", { class: "seq-arrows" }, svg);
  const lanes = new Map(Q.lanes.map((l, i) => [l.agent, i]));
  let lastLabel = -Infinity;
  const selected = selectedSeq();
  const end = firstAtLeast(Q.sorted, x1 / Q.zoom + 1e-9, (a) => a.x);
  for (let i = firstAtLeast(Q.sorted, x0 / Q.zoom, (a) => a.x); i < end; i++) {
    const a = Q.sorted[i];
    const from = lanes.get(a.fromAgent), to = lanes.get(a.toAgent);
    if (from === undefined || to === undefined) continue;
    const x = a.x * Q.zoom;
    const y1 = laneY(from) + LANE_H / 2, y2 = laneY(to) + LANE_H / 2;
    const down = y2 > y1;
    const name = a.kind === "transfer"
      ? "Transfer " + a.order + ": " + a.fromAgent + " → " + a.toAgent + " (" + (a.mode || "llm") + (a.failed ? ", failed" : "") + ")"
      : "AgentTool " + (a.kind === "call" ? "call c" : "return r") + a.order + ": " + a.fromAgent + " → " + a.toAgent;
    const g = el("g", {
      class: "seq-arrow seq-link kind-" + a.kind + " mode-" + (a.mode || "none") + (a.failed ? " failed" : "") +
        (a.seq === selected ? " selected" : ""),
      "data-testid": "seq-arrow", "data-kind": a.kind, "data-order": a.order, "data-mode": a.mode || "",
      "data-failed": a.failed ? "true" : "false", "data-seq": a.seq,
      tabindex: "0", role: "button", "aria-label": name,
    }, layer);
    titled(g, name + " (#" + a.seq + ")");
    const tip = y2 + (down ? -5 : 5);
    el("line", { x1: x, x2: x, y1: y1, y2: tip, class: "seq-hit" }, g);
    el("line", { x1: x, x2: x, y1: y1, y2: tip, class: "seq-line" }, g);
    el("path", { d: "M" + (x - 4) + " " + (tip + (down ? -6 : 6)) + " L" + x + " " + (tip + (down ? 5 : -5)) + " L" + (x + 4) + " " + (tip + (down ? -6 : 6)) + " Z", class: "seq-head" }, g);
    if (x - lastLabel >= 16) {
      lastLabel = x;
      // The accessible name holds this label: "Transfer 3", "call c1", "return r1".
      const label = (a.kind === "transfer" ? "" : a.kind === "call" ? "c" : "r") + a.order;
      el("text", { x: x + 3, y: (y1 + y2) / 2 + 4, class: "seq-order", "aria-hidden": "true" }, g).textContent = label;
    }
  }
}

const selectedSeq = () => Q.selected;

// markSequence shows event seq as the page's selection (selection.js and report.js call it as
// they select).
export function markSequence(seq) {
  if (seq === Q.selected) return;
  Q.selected = seq;
  Q.dirty = true;
  schedule();
}

// zoom sets px per step to z, keeping the time at px x of the scroller where it is.
function zoom(z, x) {
  const box = scroller();
  if (!box || !Q.ticks) return;
  z = Math.max(Math.min(MIN_ZOOM, wholeZoom()), Math.min(MAX_ZOOM, z));
  Q.fitted = false;
  const at = x === undefined ? box.clientWidth / 2 : x;
  const step = (box.scrollLeft + at - LABEL_W) / Q.zoom;
  Q.zoom = z;
  draw();
  box.scrollLeft = step * z - at + LABEL_W;
  Q.follow = box.scrollLeft + box.clientWidth >= box.scrollWidth - 4;
  draw();
}

// showView shows the tree, the sequence or the waterfall, remembers the choice, and tells the
// page (a "baton:view" event).
function showView(name, focus) {
  for (const b of document.querySelectorAll("[role=tab][data-view]")) {
    const on = b.dataset.view === name;
    b.setAttribute("aria-selected", on ? "true" : "false");
    b.tabIndex = on ? 0 : -1;
    const panel = document.getElementById(b.getAttribute("aria-controls"));
    if (panel) panel.hidden = !on;
    if (on && focus) b.focus();
  }
  const zoom = document.querySelector(".graph-zoom");
  if (zoom) zoom.hidden = name !== "tree"; // it zooms the tree; the sequence has its own
  const legend = document.querySelector(".legend");
  if (legend) legend.dataset.view = name; // the tree's lines and bundles are not the sequence's
  try { localStorage.setItem(VIEW_KEY, name); } catch (e) { /* storage may be off */ }
  if (name === "sequence") { Q.dirty = true; schedule(); }
  document.dispatchEvent(new CustomEvent("baton:view", { detail: name }));
}

const VIEWS = ["tree", "sequence", "waterfall"];

// initSequence wires the Sequence view and takes in the data the page came with; each
// #seq-data fragment swapped in later is taken in as it lands.
export function initSequence() {
  const panel = document.getElementById("view-sequence");
  const box = scroller();
  if (!panel || !box) return;
  take(document.getElementById("seq-data"));
  new MutationObserver(() => take(document.getElementById("seq-data"))).observe(panel, { childList: true });
  let view = "tree";
  try { view = VIEWS.includes(localStorage.getItem(VIEW_KEY)) ? localStorage.getItem(VIEW_KEY) : "tree"; } catch (e) { /* off */ }
  if (!document.getElementById("view-" + view) && view !== "tree") view = "tree";
  showView(view);
  for (const b of document.querySelectorAll("[role=tab][data-view]")) {
    b.addEventListener("click", () => showView(b.dataset.view));
    b.addEventListener("keydown", (ev) => {
      if (ev.key !== "ArrowLeft" && ev.key !== "ArrowRight") return;
      ev.preventDefault();
      ev.stopPropagation(); // not a step in time
      const i = VIEWS.indexOf(b.dataset.view) + (ev.key === "ArrowRight" ? 1 : -1);
      showView(VIEWS[(i + VIEWS.length) % VIEWS.length], true);
    });
  }
  // The buttons and the keys (+ - 0, keymap.js) zoom alike: in, out, to fit.
  const zoomBy = (n) => {
    if (n === 0) { Q.follow = Q.fitted = true; draw(); } else zoom(Q.zoom * (n > 0 ? 1.5 : 1 / 1.5));
  };
  panel.querySelector(".seq-tools").addEventListener("click", (ev) => {
    const z = ev.target.closest("[data-zoom]");
    if (z) zoomBy({ in: 1, out: -1, fit: 0 }[z.dataset.zoom]);
  });
  panel.addEventListener("baton:zoom", (ev) => zoomBy(ev.detail));
  box.addEventListener("wheel", (ev) => {
    if (!ev.ctrlKey) return;
    ev.preventDefault();
    zoom(Q.zoom * (ev.deltaY < 0 ? 1.25 : 0.8), ev.clientX - box.getBoundingClientRect().left);
  }, { passive: false });
  box.addEventListener("scroll", () => {
    Q.follow = box.scrollLeft + box.clientWidth >= box.scrollWidth - 4;
    schedule();
  });
  box.addEventListener("keydown", (ev) => {
    const link = ev.target.closest && ev.target.closest(".seq-link");
    if (!link || (ev.key !== "Enter" && ev.key !== " ")) return;
    ev.preventDefault();
    ev.stopPropagation(); // the page's own Enter (keys.js) would inspect the old selection
    link.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  });
  window.addEventListener("resize", () => { Q.dirty = true; schedule(); });
  box.addEventListener("pointerover", tipOnHover);
}
