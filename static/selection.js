// The selection and the inspector: which event is selected and shown, how j/k and the arrow
// keys move it (loading the rows the list has not), what a click in the tree inspects, and what
// the tree, the sequence view and the waterfall mark as selected.

import { withToken } from "./common.js";
import { activateGraph } from "./graph.js";
import { openDrawer } from "./layout.js";
import { ensure, fill, gapNext, gapOf } from "./rows.js";
import { S, rowOf, rowsEl, visibleRows, writeHash } from "./runstate.js";
import { markSequence } from "./sequence.js";
import { travelAt } from "./travel.js";
import { markWaterfall } from "./waterfall.js";

// markGraph highlights what is selected in the tree: the summarised (else the filtered) agent,
// the selected event.
export function markGraph(summarised) {
  const graph = document.getElementById("graph");
  if (!graph) return;
  // An agent's summary in the inspector keeps its node marked through live redraws of the tree.
  const shown = typeof S.inspected === "string" && S.inspected.startsWith("agent:") ? S.inspected.slice(6) : "";
  const agent = summarised || shown || S.agent;
  for (const el of graph.querySelectorAll(".selected")) el.classList.remove("selected");
  for (const n of graph.querySelectorAll("[data-agent]")) {
    if (agent && n.dataset.agent === agent) n.classList.add("selected");
  }
  for (const t of graph.querySelectorAll(".transfer")) {
    if (S.selected && Number(t.dataset.seq) === S.selected) t.classList.add("selected");
  }
}

export function select(seq, opts) {
  S.selected = seq;
  for (const r of rowsEl().querySelectorAll(".row.selected")) {
    r.classList.remove("selected");
    r.removeAttribute("aria-current");
  }
  const row = rowOf(seq);
  if (row) {
    row.classList.add("selected");
    row.setAttribute("aria-current", "true");
    if (opts && opts.scroll) scrollToRow(row);
    if (opts && opts.focus) row.focus({ preventScroll: true });
  } else if (!(opts && opts.load === false) && gapOf(seq)) {
    // The list has not loaded its row yet: load it, then select it if it is still wanted.
    ensure(seq).then(() => { if (S.selected === seq && rowOf(seq)) select(seq, opts); });
  }
  markGraph();
  markSequence(seq);
  markWaterfall(seq);
  writeHash();
}

// scrollToRow scrolls the timeline, and nothing else, so that row is in view: on a narrow
// screen, where the page itself scrolls, the header stays where the reader left it.
function scrollToRow(row) {
  if (row.hidden) return;
  const list = rowsEl();
  const r = row.getBoundingClientRect(), l = list.getBoundingClientRect();
  if (r.top < l.top) list.scrollTop -= l.top - r.top;
  else if (r.bottom > l.bottom) list.scrollTop += Math.min(r.bottom - l.bottom, r.top - l.top);
}

// inspect selects event seq (scrolled into view; focused too with opts.focus) and shows it in
// the inspector.
export async function inspect(seq, opts) {
  if (!seq) return;
  select(seq, Object.assign({ scroll: true }, opts));
  S.inspected = seq;
  loadInspector("seq=" + seq, "Event #" + seq, () => S.inspected === seq);
}

// inspectAgent shows agent's summary in the inspector: how it was reached, its calls, and its
// prompt sizes by origin.
export function inspectAgent(agent) {
  S.inspected = "agent:" + agent;
  markGraph(agent);
  loadInspector(agentQuery(agent), agent, () => S.inspected === "agent:" + agent);
}

// agentQuery asks for agent's summary as of the event the page shows (time travel), or as the
// run stands.
function agentQuery(agent) {
  const at = travelAt();
  return "agent=" + encodeURIComponent(agent) + (at ? "&at=" + at : "");
}

// refreshAgentSummary brings an agent's summary in the inspector up to the run as it goes on, at
// most once a second, keeping where the reader has scrolled: a summary that said "done, 200
// calls" beside a tree showing the agent active at 271 read wrong.
export function refreshAgentSummary() {
  if (typeof S.inspected !== "string" || !S.inspected.startsWith("agent:") || S.summaryDue) return;
  const agent = S.inspected.slice("agent:".length);
  S.summaryDue = setTimeout(() => {
    S.summaryDue = null;
    if (S.inspected !== "agent:" + agent) return;
    loadInspector(agentQuery(agent), agent, () => S.inspected === "agent:" + agent, true);
  }, 1000);
}

// loadInspector fills the inspector with the server's fragment for query; current says whether
// it is still wanted when it arrives; keepScroll leaves the panel where the reader has it.
async function loadInspector(query, what, current, keepScroll) {
  const panel = document.getElementById("inspector");
  if (S.fetch) S.fetch.abort();
  const ctl = new AbortController();
  S.fetch = ctl;
  const url = "/runs/" + encodeURIComponent(S.runId) + "/inspector?" + query;
  try {
    const res = await fetch(withToken(url), { signal: ctl.signal, headers: { "Accept": "text/html" } });
    const text = await res.text();
    if (!current()) return;
    if (!res.ok) {
      let msg = "HTTP " + res.status;
      try { msg = JSON.parse(text).error || msg; } catch (e) { /* not JSON */ }
      panel.replaceChildren(errorLine(what + ": " + msg));
      return;
    }
    // The inspector is server-rendered HTML in which all trace text is escaped.
    const tpl = document.createElement("template");
    tpl.innerHTML = text;
    const top = panel.scrollTop;
    panel.replaceChildren(tpl.content);
    panel.scrollTop = keepScroll ? top : 0;
  } catch (e) {
    if (e.name !== "AbortError") panel.replaceChildren(errorLine(what + ": cannot reach the server"));
  }
}

function errorLine(msg) {
  const p = document.createElement("p");
  p.className = "error";
  p.textContent = msg;
  return p;
}

// move selects and inspects the visible row dir rows away from the selection; dir may be
// -Infinity or Infinity for the first or last. Past the rows the list holds, it loads the gap
// beyond them first.
export async function move(dir, loaded) {
  if (!loaded && Number.isFinite(dir) && S.selected && !rowOf(S.selected) && gapOf(S.selected)) {
    await ensure(S.selected); // the selection was folded away: move from it, not from the list's edge
    return move(dir, true);
  }
  const rows = visibleRows();
  if (rows.length === 0) return;
  const seqs = rows.map((r) => Number(r.dataset.seq));
  const i = seqs.indexOf(S.selected);
  const edge = !Number.isFinite(dir) ? rows[dir > 0 ? rows.length - 1 : 0]
    : (i >= 0 && (i + dir < 0 || i + dir >= rows.length) ? rows[i] : null);
  const g = !loaded && edge && gapNext(edge, dir > 0 ? 1 : -1);
  if (g) {
    // Down, or to the very first row: the gap's first rows; up: its last ones.
    const forward = dir > 0 || dir === -Infinity;
    await fill(g, forward, !forward);
    return move(dir, true);
  }
  openDrawer();
  inspect(seqs[moveIndex(seqs, S.selected, dir)], { focus: true });
}

// moveIndex returns the index in seqs (the visible rows' seqs, ascending, at least one) of the
// row dir rows away from the selected event, staying within the rows; dir -Infinity or Infinity
// is the first or the last row.
export function moveIndex(seqs, selected, dir) {
  if (!Number.isFinite(dir)) return dir > 0 ? seqs.length - 1 : 0;
  const i = seqs.indexOf(selected);
  if (i >= 0) return Math.max(0, Math.min(seqs.length - 1, i + dir));
  // Nothing visible is selected: start from the nearest visible row.
  const next = dir > 0 ? seqs.findIndex((s) => s > selected) : -1;
  return next >= 0 ? next : (dir > 0 ? 0 : seqs.length - 1);
}

// inspectError selects the event that shows why the run failed, if the header names one.
export function inspectError() {
  const jump = document.querySelector("[data-testid=jump-to-error]");
  if (jump) inspect(Number(jump.dataset.seq));
}

export function onGraphActivate(target) {
  if (activateGraph(target)) return true;
  openDrawer();
  // A bundle inspects its newest transfer, whose inspector lists the others.
  const edge = target.closest(".transfer, .transfer-badge, .transfer-bundle, .at-arrow.seen");
  if (edge && Number(edge.dataset.seq) > 0) {
    inspect(Number(edge.dataset.seq));
    return true;
  }
  const node = target.closest(".node");
  if (node) {
    // An agent's node summarises the agent; its summary offers to filter the timeline to it.
    inspectAgent(node.dataset.agent || "");
    return true;
  }
  return false;
}
