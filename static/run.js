// The run page: the timeline's filters and selection, the inspector, tabs, keys and the run
// controls, kept current by the live socket (live.js); the tree's pan and zoom are graph.js's.

import { postJSON, postRun, setupPace, showError, showPace, pace, startRun, withToken } from "./common.js";
import { activateGraph, initGraph } from "./graph.js";
import { applyFragment, follow, runClock } from "./live.js";
import { away, dim, hold, initTravel, onNews, step } from "./travel.js";
import { initSequence, markSequence } from "./sequence.js";
import { complete, ensure, fill, first, fold, gapNext, gapOf, holds, initRows, reload } from "./rows.js";
import { closeDrawer, initLayout, openDrawer } from "./layout.js";

const body = document.body;

const S = {
  runId: body.dataset.runId || "",
  seq: Number(body.dataset.seq) || 0,
  status: body.dataset.status || "running",
  agent: "", kinds: [], failed: false, text: "",
  selected: 0,   // seq of the selected timeline row
  inspected: 0,  // seq shown in the inspector
  tab: "timeline",
  paceMS: pace(),   // the run's pace as the server last told it
  paceWanted: null, // a pace this page is sending or will send next
  fetch: null,      // the inspector's request in flight
  counts: null,     // {matches, events, head}: the server's count of the filters' matches, for a
                    // timeline that does not hold every row (rows.js)
  resumeNow: () => {}, // looks at once whether the run was resumed (set while following it)
};

const isFinal = (status) => status !== "" && status !== "running";
const rowsEl = () => document.getElementById("timeline-rows");
const allRows = () => Array.from(rowsEl().querySelectorAll(":scope > .row"));
const visibleRows = () => allRows().filter((r) => !r.hidden);
const rowOf = (seq) => document.getElementById("ev-" + seq);

// ---- URL: #seq=12&agent=math_agent&kind=transfer,tool&failed=1&q=text&tab=session

function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  S.selected = Number(p.get("seq")) || 0;
  S.agent = p.get("agent") || "";
  S.kinds = (p.get("kind") || "").split(",").filter(Boolean);
  S.failed = p.get("failed") === "1";
  S.text = p.get("q") || "";
  S.tab = p.get("tab") === "session" ? "session" : "timeline";
}

function writeHash() {
  const p = new URLSearchParams();
  if (S.selected) p.set("seq", String(S.selected));
  if (S.agent) p.set("agent", S.agent);
  if (S.kinds.length) p.set("kind", S.kinds.join(","));
  if (S.failed) p.set("failed", "1");
  if (S.text) p.set("q", S.text);
  if (S.tab !== "timeline") p.set("tab", S.tab);
  const h = p.toString();
  history.replaceState(null, "", h ? "#" + h : location.pathname + location.search);
}

// ---- filters

// matches reports whether row passes the filters. Rows carry their whole content, lower-cased,
// in data-search: a search reads attributes, never layout, so it stays fast over 10,000 rows.
// A message that repeats a call's reply is folded into that call's row unless messages are
// asked for by kind.
function matches(row, text) {
  if (S.agent && row.dataset.agent !== S.agent) return false;
  if (S.kinds.length ? !S.kinds.includes(row.dataset.group) : row.dataset.echoOf) return false;
  if (S.failed && row.dataset.failed !== "true") return false;
  if (text && !(row.dataset.search || "").includes(text)) return false;
  return true;
}

const filtering = () => S.agent || S.kinds.length || S.failed || S.text;

// filterQuery returns the filters as GET /runs/:id/rows takes them.
function filterQuery() {
  const q = new URLSearchParams();
  if (S.agent) q.set("agent", S.agent);
  if (S.kinds.length) q.set("kind", S.kinds.join(","));
  if (S.failed) q.set("failed", "1");
  if (S.text.trim()) q.set("q", S.text);
  return q;
}

function syncFilterInputs() {
  const a = document.getElementById("filter-agent");
  if (a) {
    if (S.agent && !Array.from(a.options).some((o) => o.value === S.agent)) {
      const o = document.createElement("option");
      o.value = S.agent;
      o.textContent = S.agent;
      a.appendChild(o);
    }
    a.value = S.agent;
  }
  for (const c of document.querySelectorAll("#filter-kind input")) c.checked = S.kinds.includes(c.value);
  const f = document.getElementById("filter-failed");
  if (f) f.checked = S.failed;
  const t = document.getElementById("filter-text");
  if (t && t.value !== S.text) t.value = S.text;
}

// applyFilters hides the rows that do not pass the filters: rows, or with none the whole list
// after the filters changed. A list that does not hold every row is reloaded with the rows that
// pass them, found by the server over the whole run; the promise resolves once it is.
function applyFilters(rows) {
  const text = S.text.trim().toLowerCase();
  let done = Promise.resolve();
  if (!rows && !complete() && !holds(filterQuery())) {
    done = reload().then((counts) => {
      if (counts) S.counts = counts;
      showFilterCount();
    }).catch((e) => { if (e.name !== "AbortError") showError(document.getElementById("form-error"), "timeline: " + e.message); });
  }
  for (const r of rows || allRows()) r.hidden = !matches(r, text);
  showFilterCount();
  markGraph();
  return done;
}

// countLive adds the rows that arrived live after the server's count to it.
function countLive(added) {
  const c = S.counts;
  if (!c) return;
  for (const r of added) {
    const seq = Number(r.dataset.seq);
    if (seq <= c.head) continue;
    c.head = seq;
    c.events++;
    if (!r.hidden) c.matches++;
  }
}

// showFilterCount says how many events the filters keep, and says so plainly when none.
function showFilterCount() {
  const count = document.getElementById("filter-count");
  const empty = document.getElementById("filter-empty");
  const all = allRows();
  let shown = all.filter((r) => !r.hidden).length, total = all.length;
  if (!complete() && S.counts) ({ matches: shown, events: total } = S.counts);
  if (count) count.textContent = filtering() ? shown + " of " + total + " events" : "";
  if (empty) {
    empty.hidden = !filtering() || shown > 0;
    empty.textContent = S.text.trim()
      ? "No event matches \u201c" + S.text.trim() + "\u201d with these filters."
      : "No event matches these filters.";
  }
}

// revealRow clears the filters that hide row (an element, in the list or not), so that a jump
// to it shows it; the promise resolves once the list is filtered again.
function revealRow(row) {
  if (!row || matches(row, S.text.trim().toLowerCase())) return Promise.resolve();
  return setFilters({ agent: "", kinds: row.dataset.echoOf ? ["message"] : [], failed: false, text: "" });
}

// firstError inspects the run's first failed row, whatever the filters: the list's, or the
// server's when the list does not hold every row.
async function firstError() {
  let row = rowsEl().querySelector('.row[data-failed="true"]');
  if (!complete()) {
    try {
      row = await first({ failed: "1" });
    } catch (e) {
      showError(document.getElementById("form-error"), "first error: " + e.message);
      return;
    }
  }
  const btn = document.getElementById("first-error");
  if (!row) {
    if (btn) btn.textContent = "No error";
    return;
  }
  const seq = Number(row.dataset.seq);
  await revealRow(row);
  openDrawer();
  inspect(seq);
}

function setFilters(f) {
  Object.assign(S, f);
  syncFilterInputs();
  const done = applyFilters();
  writeHash();
  return done;
}

// markGraph highlights what is selected in the tree: the summarised (else the filtered) agent,
// the selected event.
function markGraph(summarised) {
  const graph = document.getElementById("graph");
  if (!graph) return;
  const agent = summarised || S.agent;
  for (const el of graph.querySelectorAll(".selected")) el.classList.remove("selected");
  for (const n of graph.querySelectorAll("[data-agent]")) {
    if (agent && n.dataset.agent === agent) n.classList.add("selected");
  }
  for (const t of graph.querySelectorAll(".transfer")) {
    if (S.selected && Number(t.dataset.seq) === S.selected) t.classList.add("selected");
  }
}

// ---- selection and inspector

function select(seq, opts) {
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
async function inspect(seq, opts) {
  if (!seq) return;
  select(seq, Object.assign({ scroll: true }, opts));
  S.inspected = seq;
  loadInspector("seq=" + seq, "Event #" + seq, () => S.inspected === seq);
}

// inspectAgent shows agent's summary in the inspector: how it was reached, its calls, and its
// prompt sizes by origin.
function inspectAgent(agent) {
  S.inspected = "agent:" + agent;
  markGraph(agent);
  loadInspector("agent=" + encodeURIComponent(agent), agent, () => S.inspected === "agent:" + agent);
}

// loadInspector fills the inspector with the server's fragment for query; current says whether
// it is still wanted when it arrives.
async function loadInspector(query, what, current) {
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
    panel.replaceChildren(tpl.content);
    panel.scrollTop = 0;
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
async function move(dir, loaded) {
  if (!loaded && Number.isFinite(dir) && S.selected && !rowOf(S.selected) && gapOf(S.selected)) {
    await ensure(S.selected); // the selection was folded away: move from it, not from the list's edge
    return move(dir, true);
  }
  const rows = visibleRows();
  if (rows.length === 0) return;
  let i = rows.findIndex((r) => Number(r.dataset.seq) === S.selected);
  const edge = !Number.isFinite(dir) ? rows[dir > 0 ? rows.length - 1 : 0]
    : (i >= 0 && (i + dir < 0 || i + dir >= rows.length) ? rows[i] : null);
  const g = !loaded && edge && gapNext(edge, dir > 0 ? 1 : -1);
  if (g) {
    // Down, or to the very first row: the gap's first rows; up: its last ones.
    const forward = dir > 0 || dir === -Infinity;
    await fill(g, forward, !forward);
    return move(dir, true);
  }
  if (!Number.isFinite(dir)) {
    i = dir > 0 ? rows.length - 1 : 0;
  } else if (i < 0) {
    // Nothing visible is selected: start from the nearest visible row.
    i = dir > 0 ? rows.findIndex((r) => Number(r.dataset.seq) > S.selected) : -1;
    if (i < 0) i = dir > 0 ? 0 : rows.length - 1;
  } else {
    i = Math.max(0, Math.min(rows.length - 1, i + dir));
  }
  openDrawer();
  inspect(Number(rows[i].dataset.seq), { focus: true });
}

// ---- tabs

function showTab(name) {
  S.tab = name;
  for (const b of document.querySelectorAll("[role=tab][data-tab]")) {
    const on = b.dataset.tab === name;
    b.setAttribute("aria-selected", on ? "true" : "false");
    const panel = document.getElementById(b.getAttribute("aria-controls"));
    if (panel) panel.hidden = !on;
  }
  writeHash();
}

// ---- live updates

// following reports whether the timeline shows its last rows, so that new ones should scroll in.
function following() {
  const el = rowsEl();
  return el.scrollHeight - el.scrollTop - el.clientHeight < 40;
}

// applyMessage brings the page up to a live socket message: fragments, seq, status and pace.
function applyMessage(msg) {
  if (hold(msg)) return; // returning to the head: after its parts
  const atHead = following();
  let added = [];
  for (const f of msg.fragments || []) {
    // Away from the head the page shows an earlier event: only the timeline grows.
    if (away() && f.swap !== "append") continue;
    added = added.concat(applyFragment(f));
  }
  if (typeof msg.seq === "number" && msg.seq > S.seq) {
    S.seq = msg.seq;
    body.dataset.seq = String(S.seq);
  }
  if (typeof msg.status === "string" && msg.status) {
    const failedNow = msg.status === "failed" && S.status !== "failed";
    S.status = msg.status;
    body.dataset.status = msg.status;
    if (isFinal(S.status)) fixPace();
    if (failedNow && !S.selected) inspectError();
  }
  if (typeof msg.pace_ms === "number" && msg.pace_ms !== S.paceMS && S.paceWanted === null) {
    // Another page changed the run's pace.
    S.paceMS = msg.pace_ms;
    showPace(S.paceMS);
  }
  syncFilterInputs();
  applyFilters(added);
  countLive(added);
  if (added.length > 0 && fold() && filtering() && !holds(filterQuery())) {
    // The list filtered by the page no longer holds every row: the server filters it now.
    applyFilters().then(() => { if (atHead) rowsEl().scrollTop = rowsEl().scrollHeight; });
  }
  showFilterCount();
  onNews(added);
  if (S.selected) select(S.selected, { load: false }); // a folded selection stays folded
  const btn = document.getElementById("follow");
  if (added.length > 0 && atHead) rowsEl().scrollTop = rowsEl().scrollHeight;
  // "New events" is for a run still going on: once it ends, nothing new arrives to follow.
  if (btn) btn.hidden = atHead || isFinal(S.status) || (added.length === 0 && btn.hidden);
}

// sendPace sets the run's pace to ms. One request at a time, the latest value last, so the
// server ends at what the slider shows however fast the keys or the mouse move it.
async function sendPace(ms) {
  if (isFinal(S.status)) return;
  const busy = S.paceWanted !== null;
  S.paceWanted = ms;
  if (busy) return;
  while (S.paceWanted !== null) {
    const want = S.paceWanted;
    const r = await postJSON("/api/runs/" + encodeURIComponent(S.runId) + "/pace", { pace_ms: want });
    showError(document.getElementById("form-error"), r.ok ? "" : (r.data.error || "could not change the pace"));
    if (r.ok) S.paceMS = want;
    if (!r.ok || S.paceWanted === want) S.paceWanted = null;
  }
  showPace(S.paceMS);
}

// fixPace disables the pace slider: the run is over, its pace is what it was.
function fixPace() {
  const input = document.getElementById("pace");
  if (input) input.disabled = true;
}

// inspectError selects the event that shows why the run failed, if the header names one.
function inspectError() {
  const jump = document.querySelector("[data-testid=jump-to-error]");
  if (jump) inspect(Number(jump.dataset.seq));
}

// ---- events

function onGraphActivate(target) {
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

function isTyping(el) {
  return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
}

function onKey(ev) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (isTyping(ev.target)) {
    if (ev.key === "Escape") ev.target.blur();
    return;
  }
  const inGraph = ev.target.closest && ev.target.closest("#graph");
  const inTimeline = ev.target.closest && ev.target.closest("#timeline-rows");
  switch (ev.key) {
    case "j": move(1); break;
    case "k": move(-1); break;
    case "ArrowDown": if (!inTimeline) return; move(1); break;
    case "ArrowUp": if (!inTimeline) return; move(-1); break;
    // In the timeline Home and End move the selection; elsewhere they travel, like ← and →.
    case "Home": if (inTimeline) move(-Infinity); else step(-Infinity); break;
    case "End": if (inTimeline) move(Infinity); else step(Infinity); break;
    case "ArrowLeft": step(-1); break;
    case "ArrowRight": step(1); break;
    case "/": {
      const t = document.getElementById("filter-text");
      if (S.tab !== "timeline") showTab("timeline");
      if (t) t.focus();
      break;
    }
    case "Enter":
    case " ":
      if (inGraph && onGraphActivate(ev.target)) break;
      if (ev.key === "Enter" && !ev.target.closest("button, a") && S.selected) { openDrawer(); inspect(S.selected); break; }
      return;
    // Esc closes the inspector's drawer first, then clears the filters.
    case "Escape": if (!closeDrawer()) setFilters({ agent: "", kinds: [], failed: false, text: "" }); break;
    default: return;
  }
  ev.preventDefault();
}

// onClick handles the page's clicks: links to events, tabs, the tree, rows, "New events".
function onClick(ev) {
  const link = ev.target.closest(".seq-link");
  if (link) {
    // A jump shows its row: clear the filters that hide it.
    revealRow(rowOf(link.dataset.seq));
    openDrawer();
    inspect(Number(link.dataset.seq));
    return;
  }
  const only = ev.target.closest("[data-filter-agent]");
  if (only) { setFilters({ agent: only.dataset.filterAgent }); return; }
  const tab = ev.target.closest("[role=tab][data-tab]");
  if (tab) { showTab(tab.dataset.tab); return; }
  if (ev.target.closest("#first-error")) { firstError(); return; }
  if (ev.target.closest("#timeline-rows .gap")) return; // rows.js loads it
  if (ev.target.closest("#graph")) { onGraphActivate(ev.target); return; }
  const row = ev.target.closest("#timeline-rows .row");
  if (row) { openDrawer(); inspect(Number(row.dataset.seq)); return; }
  if (ev.target.closest("#follow")) {
    rowsEl().scrollTop = rowsEl().scrollHeight;
    ev.target.closest("#follow").hidden = true;
  }
}

// decide sends the decision of the paused run's form (the button pressed says which) and, once
// the server resumes the run, goes back to following it live.
async function decide(ev) {
  const form = ev.target.closest("form.decision");
  if (!form) return;
  ev.preventDefault();
  const approve = ev.submitter ? ev.submitter.value === "true" : true;
  const comment = form.querySelector("[name=comment]").value;
  const buttons = form.querySelectorAll("button");
  buttons.forEach((b) => { b.disabled = true; });
  const r = await postJSON("/api/runs/" + encodeURIComponent(S.runId) + "/resume", { approve, comment });
  showError(form.querySelector(".form-error"), r.ok ? "" : (r.data.error || "could not resume the run"));
  if (!r.ok) {
    buttons.forEach((b) => { b.disabled = false; });
    return;
  }
  form.querySelector(".form-error").textContent = "";
  form.dataset.sent = approve ? "approved" : "rejected";
  S.resumeNow();
}

// onRows is told of the rows a gap or a reload put in the list: it filters them, dims those
// after the event the page shows, and marks the selection.
function onRows(rows) {
  applyFilters(rows);
  dim(rows);
  const sel = rowOf(S.selected);
  if (sel && rows.includes(sel)) {
    sel.classList.add("selected");
    sel.setAttribute("aria-current", "true");
  }
}

// initRun wires the run page and, while the run goes on, follows it live.
export function initRun() {
  readHash();
  syncFilterInputs();
  initRows(S.runId, filterQuery, onRows);
  applyFilters();
  showTab(S.tab);
  // Time travel: each step selects and inspects its event. A page opened at an event (?at=)
  // inspects it unless the address names another.
  const at = Number(body.dataset.at) || 0;
  initTravel(S.runId, at, () => S.seq, (seq) => inspect(seq), applyMessage);
  if (S.selected) {
    inspect(S.selected);
  } else if (at) {
    inspect(at);
  } else if (S.status === "failed") {
    inspectError();
  } else if (!isFinal(S.status) || !complete()) {
    // Joining a live run: follow its head, as if one had watched from the start. A big run's
    // page holds its newest rows: it opens on them.
    rowsEl().scrollTop = rowsEl().scrollHeight;
  }
  initGraph();
  initSequence();
  initLayout();
  setupPace(sendPace);
  if (isFinal(S.status)) fixPace(); // the run may have ended just as the page was rendered
  const dl = document.getElementById("download-json");
  if (dl) dl.href = withToken(dl.getAttribute("href")); // a no-op without a token

  document.getElementById("run-again").addEventListener("click", (ev) => {
    startRun(body.dataset.flow || "", body.dataset.input || "", document.getElementById("form-error"), ev.currentTarget);
  });
  if (!isFinal(S.status)) watchTyping();
  document.getElementById("replay").addEventListener("click", (ev) => {
    postRun("/api/runs/" + encodeURIComponent(body.dataset.runId) + "/replay", {}, document.getElementById("form-error"), ev.currentTarget);
  });
  document.addEventListener("click", onClick);
  document.addEventListener("submit", decide);
  document.addEventListener("change", (ev) => {
    if (ev.target.id === "filter-agent") setFilters({ agent: ev.target.value });
    if (ev.target.closest("#filter-kind")) {
      setFilters({ kinds: Array.from(document.querySelectorAll("#filter-kind input:checked")).map((c) => c.value) });
    }
    if (ev.target.id === "filter-failed") setFilters({ failed: ev.target.checked });
  });
  document.addEventListener("input", (ev) => {
    if (ev.target.id === "filter-text") setFilters({ text: ev.target.value });
  });
  document.addEventListener("keydown", onKey);
  rowsEl().addEventListener("scroll", () => {
    const btn = document.getElementById("follow");
    if (btn && following()) btn.hidden = true;
  });
  window.addEventListener("hashchange", () => {
    const before = S.selected;
    readHash();
    syncFilterInputs();
    applyFilters();
    showTab(S.tab);
    if (S.selected && S.selected !== before) inspect(S.selected);
  });

  const mayResume = () => S.status === "interrupted";
  if (!isFinal(S.status) || mayResume()) {
    runClock(() => isFinal(S.status), mayResume);
    S.resumeNow = follow(S.runId, () => S.seq, () => isFinal(S.status), mayResume, applyMessage);
  }
}

// watchTyping shows the replies being streamed, token by token, from the run's typing socket
// until it closes (the run ended); each reply reaches the timeline once complete.
function watchTyping() {
  const box = document.getElementById("typing");
  if (!box || !("WebSocket" in window)) return;
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  let ws;
  try {
    ws = new WebSocket(withToken(proto + "//" + location.host + "/runs/" + encodeURIComponent(S.runId) + "/typing"));
  } catch (e) { return; }
  ws.onmessage = (msg) => {
    let replies = [];
    try { replies = JSON.parse(msg.data); } catch (e) { return; }
    box.replaceChildren(...replies.map((r) => {
      const row = document.createElement("p");
      row.className = "typing-reply";
      row.dataset.testid = "typing-reply";
      row.dataset.agent = r.agent;
      const who = document.createElement("strong");
      who.textContent = r.agent + " ";
      const text = document.createElement("span");
      text.textContent = r.text; // text, never markup
      row.append(who, text);
      return row;
    }));
    box.hidden = replies.length === 0;
  };
  ws.onclose = () => { box.replaceChildren(); box.hidden = true; };
}
