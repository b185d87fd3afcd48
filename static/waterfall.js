// The tree panel's Waterfall view: the run on a linear time axis, as a tracing tool draws it. One
// row per agent visit, model call and tool call, nested as they ran (a call under its visit, the
// visit an AgentTool call ran under that call), each a bar from its start to its end with its
// duration on it, and the critical path (the chain of work the run's end waited for) marked. It
// draws the Sequence view's data (sequence.js keeps it, whole or by live deltas, and says when
// it changes: initWaterfall is handed its onSequence and sequenceState, so that this module
// imports nothing and the report can inline it), only the rows in view. Clicking a row inspects its event as a timeline row does
// (run.js and report.js handle .seq-link); the page's selection is marked.
//
// waterfallRows, criticalPath and axisTicks are pure, for the unit tests
// (static/test/waterfall.test.js).

const LABEL_W = 190; // the rows' names
const AXIS_H = 22;
const ROW_H = 20;
const PAD_R = 56;    // room right of the time area for the last bar's duration
const SVGNS = "http://www.w3.org/2000/svg";
const EPS = 1e-6;    // ms: ends that meet

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
  const want = span * minPx / px;
  let step = Math.pow(10, Math.floor(Math.log10(want)));
  for (const m of [1, 2, 5, 10]) if (step * m >= want) { step *= m; break; }
  const out = [];
  for (let i = 0; i * step <= span + EPS; i++) {
    const t = i * step;
    out.push({ t, x: t / span * px, label: tickLabel(t, step) });
  }
  return out;
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

const W = { rows: null, critical: new Set(), span: 0, dirty: true, frame: 0, selected: 0, data: null, cost: 0, later: 0, drawn: null };

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

function rowName(b) {
  if (b.kind === "agent") return b.agent;
  if (b.kind === "model") return "model " + (b.name || "call");
  return b.name || "tool";
}

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
  // Rows in view that are drawn already stay: a redraw replaces the elements under the pointer,
  // and a click whose press and release fall on two of them reaches neither.
  const top = Math.floor(box.scrollTop / ROW_H), bottom = Math.ceil((box.scrollTop + box.clientHeight) / ROW_H);
  const d = W.drawn;
  if (d && d.width === box.clientWidth && d.selected === W.selected && d.first <= top && bottom <= d.last) return;
  const width = Math.max(120, box.clientWidth - LABEL_W - PAD_R);
  const k = width / W.span; // px per ms: the one scale of the whole view
  let canvas = box.querySelector(".wf-canvas");
  if (!canvas) {
    canvas = document.createElement("div");
    canvas.className = "wf-canvas";
    canvas.append(el("svg", { class: "wf-axis" }), el("svg", { class: "wf-svg" }));
    box.appendChild(canvas);
  }
  const [axis, svg] = canvas.children;
  const height = W.rows.length * ROW_H;
  canvas.style.height = AXIS_H + height + "px";
  drawAxis(axis, box.clientWidth, width);
  const first = Math.max(0, top - 10);
  const last = Math.min(W.rows.length, bottom + 10);
  W.drawn = { width: box.clientWidth, selected: W.selected, first, last: bottom + 10 };
  svg.setAttribute("width", String(box.clientWidth));
  svg.setAttribute("height", String(Math.max(1, (last - first) * ROW_H)));
  svg.style.top = AXIS_H + first * ROW_H + "px";
  svg.replaceChildren();
  const lanes = new Map(s.lanes.map((l) => [l.agent, l.colour || 0]));
  // The texts are a layer of their own over the rows, which clicks pass through: a row's
  // accessible name (its aria-label) is then the only text it has.
  const rows = el("g", {}, svg), texts = el("g", { class: "wf-texts", "aria-hidden": "true" }, svg);
  for (let i = first; i < last; i++) drawRow(rows, texts, W.rows[i], (i - first) * ROW_H, k, lanes);
  const note = document.getElementById("wf-scale");
  if (note) note.textContent = W.rows.length ? duration(W.span) + " in all, " + W.rows.length + " spans" : "";
}

function drawAxis(svg, full, width) {
  svg.setAttribute("width", String(full));
  svg.setAttribute("height", String(AXIS_H));
  svg.replaceChildren();
  const ticks = axisTicks(W.span, width);
  ticks.forEach((t, i) => {
    const x = LABEL_W + t.x;
    el("line", { x1: x, x2: x, y1: AXIS_H - 5, y2: AXIS_H, class: "wf-tick" }, svg);
    // The last label ends at its tick, so that it is never cut at the panel's edge.
    const last = i === ticks.length - 1 && i > 0;
    const text = el("text", { x: last ? x - 2 : x + 2, y: AXIS_H - 8, "text-anchor": last ? "end" : "start" }, svg);
    text.textContent = t.label;
  });
  el("line", { x1: LABEL_W, x2: LABEL_W + width, y1: AXIS_H - 0.5, y2: AXIS_H - 0.5, class: "wf-rule" }, svg);
}

function drawRow(svg, texts, n, y, k, lanes) {
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
  const indent = 6 + Math.min(n.depth, 8) * 10;
  el("text", { x: indent, y: y + ROW_H - 6, class: "wf-name" }, texts).textContent =
    fit(rowName(b), Math.floor((LABEL_W - indent - 6) / 6.5));
  const x = LABEL_W + n.a * k, w = Math.max(2, (n.z - n.a) * k);
  el("rect", {
    x, y: y + 4, width: w, height: ROW_H - 8, rx: 2, class: "wf-bar",
    "data-testid": "wf-bar", "data-seq": b.seq, "data-kind": b.kind, "data-agent": b.agent,
    "data-t0": n.a, "data-t1": n.z, "data-critical": critical ? "true" : "false",
  }, g);
  // The duration goes right of the bar, or left of it when the bar ends at the view's edge.
  const room = LABEL_W + W.span * k + PAD_R - (x + w);
  const label = el("text", { x: room >= dur.length * 6.5 + 4 ? x + w + 4 : x - 4, y: y + ROW_H - 6, class: "wf-dur" }, texts);
  if (room < dur.length * 6.5 + 4) label.setAttribute("text-anchor", "end");
  label.textContent = dur;
}

// markWaterfall shows event seq as the page's selection (selection.js and report.js call it).
export function markWaterfall(seq) {
  if (seq === W.selected) return;
  W.selected = seq;
  schedule();
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
  box.addEventListener("keydown", (ev) => {
    const link = ev.target.closest && ev.target.closest(".seq-link");
    if (!link || (ev.key !== "Enter" && ev.key !== " ")) return;
    ev.preventDefault();
    ev.stopPropagation(); // the page's own Enter (keys.js) would inspect the old selection
    link.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  });
  schedule();
}
