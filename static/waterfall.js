// The tree panel's Waterfall view: the run on a linear time axis, as a tracing tool draws it. One
// row per agent visit, model call and tool call, nested as they ran (a call under its visit, the
// visit an AgentTool call ran under that call), each a bar from its start to its end with its
// duration on it, and the critical path (the chain of work the run's end waited for) marked. It
// draws the Sequence view's data (sequence.js keeps it, whole or by live deltas, and says when
// it changes: initWaterfall is handed its onSequence and sequenceState, so that this module
// imports nothing and the report can inline it), only the rows in view. Clicking a row inspects its event as a timeline row does
// (run.js and report.js handle .seq-link); the page's selection is marked.
//
// It opens with the whole run fitted to the panel; −/+ (the buttons, the keys + - 0 as keymap.js
// says, ctrl + wheel about the pointer) zoom in time as the Sequence view does, the names staying
// on the left as the time area scrolls, and Fit returns to the whole run. Zoomed in, the scale
// stays as the run grows.
//
// waterfallRows, criticalPath, axisTicks, ticksIn, zoomView and durationAt are pure, for the unit tests
// (static/test/waterfall.test.js).

const LABEL_W = 190; // the rows' names
const AXIS_H = 22;
const ROW_H = 20;
const PAD_R = 56;    // room right of the time area for the last bar's duration
const SVGNS = "http://www.w3.org/2000/svg";
const EPS = 1e-6;    // ms: ends that meet
export const MAX_ZOOM = 1000; // times the fitted scale: a second's run shows a millisecond wide

// waterfallRows returns the rows of bars (sequence.js's: {id, agent, kind, name, seq, end, t0,
// t1, parent}) in the order the waterfall draws them, each {bar, depth, a, z, kids}: a and z
// are its start and end in ms (an open bar ends at now). A model or tool call nests in its visit
// (bar.parent); a visit nests in the innermost AgentTool call (a tool call of another agent named
// after the visited agent) that was open when it began. Siblings go by start, then by seq.
export function waterfallRows(bars, now) {
  const nodes = new Map();
  for (const b of bars) {
    const a = b.t0, z = b.end ? Math.max(b.t1, b.t0) : Math.max(now, b.t0);
    nodes.set(b.id, { bar: b, a, z, kids: [], up: null, depth: 0 });
  }
  const tools = new Map(); // tool name -> its calls
  for (const n of nodes.values()) {
    if (n.bar.kind !== "tool") continue;
    if (!tools.has(n.bar.name)) tools.set(n.bar.name, []);
    tools.get(n.bar.name).push(n);
  }
  // Calls first: a visit's nesting is checked against the chain its calls make.
  for (const n of nodes.values()) if (n.bar.kind !== "agent") n.up = nodes.get(n.bar.parent) || null;
  for (const n of nodes.values()) {
    if (n.bar.kind !== "agent") continue;
    let best = null;
    for (const t of tools.get(n.bar.agent) || []) {
      if (t.bar.agent !== n.bar.agent && t.a <= n.a + EPS && n.a <= t.z + EPS && (!best || t.a >= best.a)) best = t;
    }
    if (best && !above(best, n)) n.up = best;
  }
  const roots = [];
  for (const n of nodes.values()) (n.up ? n.up.kids : roots).push(n);
  const order = (x, y) => x.a - y.a || x.bar.seq - y.bar.seq;
  const out = [];
  const visit = (list, depth) => {
    list.sort(order);
    for (const n of list) {
      n.depth = depth;
      out.push(n);
      visit(n.kids, depth + 1);
    }
  };
  visit(roots, 0);
  return out;
}

// above says whether n is up the chain from t already: nesting t's visit under n would loop.
function above(t, n) {
  for (let u = t, hops = 0; u && hops < 10000; u = u.up, hops++) if (u === n) return true;
  return false;
}

// criticalPath returns the ids of the bars on the run's critical path: from the end of the run,
// the work that ended last, then, from that work's start back, the work that ended last before
// it, and so on; inside each piece of work, the same among what it nests. Work that overlaps a
// piece already on the path ran beside it and is not on it. rows are waterfallRows' (any order).
export function criticalPath(rows) {
  const on = new Set();
  const roots = rows.filter((n) => !n.up);
  if (roots.length === 0) return on;
  const walk = (list, from, to) => {
    let cursor = to;
    for (const n of list.slice().sort((x, y) => y.z - x.z || y.a - x.a)) {
      if (cursor <= from + EPS) break;
      if (n.z > cursor + EPS) continue; // it ran beside what is already on the path
      on.add(n.bar.id);
      walk(n.kids, n.a, n.z);
      cursor = n.a;
    }
  };
  walk(roots, roots.reduce((m, n) => Math.min(m, n.a), Infinity), roots.reduce((m, n) => Math.max(m, n.z), -Infinity));
  return on;
}

// axisTicks returns the ticks of a linear axis from 0 to span ms drawn px wide: a round step (1,
// 2 or 5 times a power of ten) at least minPx apart, each {t, x, label}. The last tick is never
// past the axis.
export function axisTicks(span, px, minPx = 90) {
  if (!(span > 0) || !(px > 0)) return [{ t: 0, x: 0, label: "0 ms" }];
  return ticksIn(0, span, px / span, minPx);
}

// ticksIn returns the ticks between t0 and t1 ms of an axis of k px per ms (x = t * k): the
// steps axisTicks takes, only those in [t0, t1], so that a zoomed view lays out what it shows.
export function ticksIn(t0, t1, k, minPx = 90) {
  if (!(k > 0) || !(t1 >= t0)) return [];
  const want = minPx / k;
  let step = Math.pow(10, Math.floor(Math.log10(want)));
  for (const m of [1, 2, 5, 10]) if (step * m >= want) { step *= m; break; }
  const out = [];
  for (let i = Math.max(0, Math.ceil((t0 - EPS) / step)); i * step <= t1 + EPS; i++) {
    const t = i * step;
    out.push({ t, x: t * k, label: tickLabel(t, step) });
  }
  return out;
}

// zoomView returns the view {k, left, fitted} after zooming view ({k: px per ms, left: the
// scroller's scrollLeft}) by factor about px at of the scroller: the time under at stays there
// as far as the run's ends allow. fitK is the scale that fits the whole span (ms) in the time
// area; k stays within fitK and MAX_ZOOM times it, left within the scrolled canvas.
export function zoomView(view, factor, at, fitK, span) {
  const k = Math.min(fitK * MAX_ZOOM, Math.max(fitK, view.k * factor));
  at = Math.max(LABEL_W, at);
  const t = (view.left + at - LABEL_W) / view.k; // the time under at
  const left = Math.min(span * (k - fitK), Math.max(0, t * k - at + LABEL_W));
  return { k, left, fitted: k <= fitK * (1 + 1e-9) };
}

function tickLabel(t, step) {
  if (t === 0) return "0";
  if (step >= 1000) return trim((t / 1000).toFixed(step % 1000 ? 1 : 0)) + " s";
  if (step >= 1) return Math.round(t) + " ms";
  return trim(t.toFixed(Math.min(3, Math.ceil(-Math.log10(step))))) + " ms";
}

const trim = (s) => s.includes(".") ? s.replace(/\.?0+$/, "") : s;

// duration writes ms for a bar's label.
export function duration(v) {
  if (v < 1) return trim(v.toFixed(2)) + " ms";
  if (v < 1000) return Math.round(v) + " ms";
  if (v < 60000) return trim((v / 1000).toFixed(2)) + " s";
  return Math.floor(v / 60000) + " min " + Math.round(v % 60000 / 1000) + " s";
}

// ---- drawing

const W = {
  rows: null, labels: [], critical: new Set(), span: 0, dirty: true, frame: 0, selected: 0, data: null, cost: 0, later: 0, drawn: null,
  fitted: true, // the whole run in the panel, as it grows, until the reader zooms
  k: 0,         // px per ms once zoomed
};

const scroller = () => document.getElementById("wf-scroll");
const shown = () => { const p = document.getElementById("view-waterfall"); return p && !p.hidden; };

function schedule() {
  if (W.frame || !shown()) return;
  W.frame = requestAnimationFrame(() => { W.frame = 0; draw(); });
}

function el(tag, attrs, parent) {
  const e = document.createElementNS(SVGNS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}

// fit cuts text to about n characters, with an ellipsis.
const fit = (text, n) => text.length <= n ? text : text.slice(0, Math.max(1, n - 1)) + "…";

// rowName is a row's name: the visited agent, the model a call named ("gpt-4o-mini", "scripted";
// "model" when it named none), the tool.
export function rowName(b) {
  if (b.kind === "agent") return b.agent;
  if (b.kind === "model") return b.name ? "model " + b.name : "model";
  return b.name || "tool";
}

// fitK is the scale, in px per ms, that shows the whole run in box's time area.
const fitWidth = (box) => Math.max(120, box.clientWidth - LABEL_W - PAD_R);
const fitK = (box) => fitWidth(box) / W.span;
const scale = (box) => (W.fitted ? fitK(box) : Math.max(W.k, fitK(box)));

// draw lays the rows out again when the data changed, and draws the axis and the rows in view.
function draw() {
  const box = scroller();
  if (!box) return;
  const s = W.data();
  if (W.dirty || !W.rows) {
    const t = performance.now();
    W.rows = waterfallRows(s.bars.values(), s.now);
    W.critical = criticalPath(W.rows);
    W.span = W.rows.reduce((m, n) => Math.max(m, n.z), EPS);
    W.dirty = false;
    W.cost = performance.now() - t;
    W.drawn = null;
  }
  const k = scale(box); // px per ms: the one scale of the whole view
  let canvas = box.querySelector(".wf-canvas");
  if (!canvas) {
    canvas = document.createElement("div");
    canvas.className = "wf-canvas";
    const names = document.createElement("div");
    names.className = "wf-names";
    names.setAttribute("aria-hidden", "true");
    names.appendChild(el("svg", {}));
    canvas.append(el("svg", { class: "wf-axis" }), names, el("svg", { class: "wf-svg" }));
    box.appendChild(canvas);
  }
  const [axis, names, svg] = canvas.children;
  const full = Math.ceil(LABEL_W + W.span * k + PAD_R);
  const height = W.rows.length * ROW_H;
  canvas.style.width = full + "px";
  canvas.style.height = AXIS_H + height + "px";
  names.style.height = height + "px";
  drawAxis(axis, full, k, box);
  // Rows in view that are drawn already stay: a redraw replaces the elements under the pointer,
  // and a click whose press and release fall on two of them reaches neither.
  const top = Math.floor(box.scrollTop / ROW_H), bottom = Math.ceil((box.scrollTop + box.clientHeight) / ROW_H);
  const d = W.drawn;
  if (d && d.k === k && d.selected === W.selected && d.first <= top && bottom <= d.last) { placeDurations(box); return; }
  const first = Math.max(0, top - 10);
  const last = Math.min(W.rows.length, bottom + 10);
  W.drawn = { k, selected: W.selected, first, last: bottom + 10 };
  svg.setAttribute("width", String(full));
  svg.setAttribute("height", String(Math.max(1, (last - first) * ROW_H)));
  svg.style.top = AXIS_H + first * ROW_H + "px";
  svg.replaceChildren();
  W.labels = [];
  const labels = names.firstChild;
  labels.setAttribute("width", String(LABEL_W));
  labels.setAttribute("height", String(Math.max(1, (last - first) * ROW_H)));
  labels.style.top = first * ROW_H + "px";
  labels.replaceChildren();
  const lanes = new Map(s.lanes.map((l) => [l.agent, l.colour || 0]));
  // The texts are a layer of their own over the rows, which clicks pass through: a row's
  // accessible name (its aria-label) is then the only text it has. The names are another, kept
  // on the left (sticky) as the time area scrolls.
  const rows = el("g", {}, svg), texts = el("g", { class: "wf-texts", "aria-hidden": "true" }, svg);
  for (let i = first; i < last; i++) drawRow(rows, texts, labels, W.rows[i], (i - first) * ROW_H, k, lanes);
  placeDurations(box);
  const note = document.getElementById("wf-scale");
  if (note) note.textContent = W.rows.length ? duration(W.span) + " in all, " + W.rows.length + " spans" : "";
}

// drawAxis draws the ticks of the part of the time area in view.
function drawAxis(svg, full, k, box) {
  svg.setAttribute("width", String(full));
  svg.setAttribute("height", String(AXIS_H));
  svg.replaceChildren();
  const left = box.scrollLeft, right = left + box.clientWidth; // the scroller's view, in canvas px
  const t0 = Math.max(0, left / k), t1 = Math.min(W.span, (right - LABEL_W) / k);
  const ticks = ticksIn(t0, t1, k);
  ticks.forEach((t) => {
    const x = LABEL_W + t.x;
    el("line", { x1: x, x2: x, y1: AXIS_H - 5, y2: AXIS_H, class: "wf-tick" }, svg);
    // A label that would run past the view's right end ends at its tick, so that it is never cut.
    const end = x + 2 + t.label.length * 7 > Math.min(right, full);
    const text = el("text", { x: end ? x - 2 : x + 2, y: AXIS_H - 8, "text-anchor": end ? "end" : "start" }, svg);
    text.textContent = t.label;
  });
  el("line", { x1: LABEL_W, x2: LABEL_W + W.span * k, y1: AXIS_H - 0.5, y2: AXIS_H - 0.5, class: "wf-rule" }, svg);
}

function drawRow(svg, texts, labels, n, y, k, lanes) {
  const b = n.bar;
  const critical = W.critical.has(b.id);
  const dur = b.end ? duration(n.z - n.a) : "running";
  const what = b.kind === "agent" ? b.agent + " (visit)" : rowName(b) + " of " + b.agent;
  const name = what + " · " + dur + (b.tokens ? " · " + b.tokens + " tokens" : "") + (b.failed ? " · failed" : "") +
    (critical ? " · on the critical path" : "") + " (#" + b.seq + ")";
  const g = el("g", {
    class: "wf-row seq-link kind-" + b.kind + " agent-c" + ((lanes.get(b.agent) || 0) % 10) +
      (critical ? " critical" : "") + (b.failed ? " failed" : "") + (!b.end ? " open" : "") +
      (b.seq === W.selected ? " selected" : ""),
    "data-seq": b.seq, tabindex: "0", role: "button", "aria-label": name,
  }, svg);
  el("title", {}, g).textContent = name;
  el("rect", { x: 0, y, width: "100%", height: ROW_H, class: "wf-band" }, g);
  if (b.seq === W.selected) el("rect", { x: 0, y, width: LABEL_W, height: ROW_H, class: "wf-band-selected" }, labels);
  const indent = 6 + Math.min(n.depth, 8) * 10;
  el("text", { x: indent, y: y + ROW_H - 6, class: "wf-name" + (b.kind === "agent" ? "" : " wf-call") }, labels).textContent =
    fit(rowName(b), Math.floor((LABEL_W - indent - 6) / 6.5));
  const x = LABEL_W + n.a * k, w = Math.max(2, (n.z - n.a) * k);
  el("rect", {
    x, y: y + 4, width: w, height: ROW_H - 8, rx: 2, class: "wf-bar",
    "data-testid": "wf-bar", "data-seq": b.seq, "data-kind": b.kind, "data-agent": b.agent, "data-name": b.name || "",
    "data-t0": n.a, "data-t1": n.z, "data-critical": critical ? "true" : "false",
  }, g);
  // The duration's place depends on what of the bar is in view: placeDurations sets it.
  const label = el("text", { y: y + ROW_H - 6, class: "wf-dur", "data-seq": b.seq }, texts);
  label.textContent = dur;
  W.labels.push({ label, x, w, tw: dur.length * 6.5 });
}

// durationAt places a bar's duration label, tw px wide, for a bar from x to x + w (px of the
// canvas) when v0 to v1 of the canvas is in view right of the names column: right of the bar,
// else inside the part of the bar in view, else left of the bar; null when none of these is
// wholly in view, rather than under the names (zoomed in, a bar may end or start under them).
export function durationAt(x, w, tw, v0, v1) {
  const z = x + w;
  if (z >= v0 && z + 4 + tw <= v1) return { x: z + 4, anchor: "start", inside: false };
  const from = Math.max(x, v0), to = Math.min(z, v1);
  if (to - from >= tw + 6) return { x: from + 3, anchor: "start", inside: true };
  if (x <= v1 && x - 4 - tw >= v0) return { x: x - 4, anchor: "end", inside: false };
  return null;
}

// placeDurations moves the drawn rows' duration labels to where durationAt says for the part of
// the time area in view; a horizontal scroll draws nothing else.
function placeDurations(box) {
  const v0 = box.scrollLeft + LABEL_W, v1 = box.scrollLeft + box.clientWidth;
  for (const { label, x, w, tw } of W.labels) {
    const p = durationAt(x, w, tw, v0, v1);
    if (!p) { label.setAttribute("display", "none"); continue; }
    label.removeAttribute("display");
    label.setAttribute("x", String(p.x));
    label.setAttribute("text-anchor", p.anchor);
    label.classList.toggle("inside", p.inside);
  }
}

// markWaterfall shows event seq as the page's selection (selection.js and report.js call it).
export function markWaterfall(seq) {
  if (seq === W.selected) return;
  W.selected = seq;
  schedule();
}

// zoomBy zooms the time axis by factor about px at of the scroller (its middle when undefined);
// a factor of 0 fits the whole run again.
function zoomBy(factor, at) {
  const box = scroller();
  if (!box || !W.rows) return;
  if (factor === 0) {
    W.fitted = true;
    box.scrollLeft = 0; // first: the axis is drawn for what is in view
    draw();
    return;
  }
  const v = zoomView({ k: scale(box), left: box.scrollLeft }, factor,
    at === undefined ? LABEL_W + (box.clientWidth - LABEL_W) / 2 : at, fitK(box), W.span);
  W.fitted = v.fitted;
  W.k = v.k;
  draw();
  box.scrollLeft = v.left;
  draw(); // the axis of what is now in view
}

// initWaterfall draws the Waterfall view whenever it is shown and the Sequence view's data
// changes: sequence.js's onSequence tells when, its sequenceState gives the data.
export function initWaterfall(onSequence, sequenceState) {
  const box = scroller();
  if (!box) return;
  W.data = sequenceState;
  // A live run's data changes at every event; laying out a large one again takes a while (tens
  // of ms at 10,000 bars, docs/performance.md), so a live delta lays it out at most once per ten
  // times what that took. A whole Sequence (a step in time) is drawn at once.
  onSequence((whole) => {
    W.dirty = true;
    if (whole || W.cost < 16) { schedule(); return; }
    if (!W.later) W.later = setTimeout(() => { W.later = 0; schedule(); }, Math.min(2000, W.cost * 10));
  });
  document.addEventListener("baton:view", (ev) => { if (ev.detail === "waterfall") { W.dirty = true; schedule(); } });
  box.addEventListener("scroll", schedule);
  window.addEventListener("resize", schedule);
  // The buttons, the keys (+ - 0, keymap.js) and ctrl + wheel zoom as the Sequence view's do.
  const panel = document.getElementById("view-waterfall");
  const step = (n) => zoomBy(n === 0 ? 0 : n > 0 ? 1.5 : 1 / 1.5);
  panel.querySelector(".wf-tools")?.addEventListener("click", (ev) => {
    const z = ev.target.closest("[data-zoom]");
    if (z) step({ in: 1, out: -1, fit: 0 }[z.dataset.zoom]);
  });
  panel.addEventListener("baton:zoom", (ev) => step(ev.detail));
  box.addEventListener("wheel", (ev) => {
    if (!ev.ctrlKey) return;
    ev.preventDefault();
    zoomBy(ev.deltaY < 0 ? 1.25 : 0.8, ev.clientX - box.getBoundingClientRect().left);
  }, { passive: false });
  box.addEventListener("keydown", (ev) => {
    const link = ev.target.closest && ev.target.closest(".seq-link");
    if (!link || (ev.key !== "Enter" && ev.key !== " ")) return;
    ev.preventDefault();
    ev.stopPropagation(); // the page's own Enter (keys.js) would inspect the old selection
    link.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  });
  schedule();
}
