// The run page: its live updates (the socket's fragments, status and pace), the run controls,
// clicks and the wiring of its parts, kept current by the live socket (live.js). The state and
// the address are runstate.js's, the filters filters.js's, the selection and the inspector
// selection.js's, the keys keys.js's; the tree's pan and zoom are graph.js's.

import { postJSON, postRun, setupPace, showError, showPace, splitBreakpoints, startRun, withToken } from "./common.js";
import { applyFilters, countLive, filterQuery, filtering, firstError, revealRow, setFilters, showFilterCount, syncFilterInputs } from "./filters.js";
import { initGraph } from "./graph.js";
import { onKey } from "./keys.js";
import { keyAction } from "./keymap.js";
import { initLayout, openDrawer } from "./layout.js";
import { applyFragment, follow, runClock } from "./live.js";
import { complete, fold, holds, initRows } from "./rows.js";
import { watchInputs } from "./rowfilter.js";
import { S, isFinal, readHash, rowOf, rowsEl, showTab } from "./runstate.js";
import { inspect, inspectError, onGraphActivate, refreshAgentSummary, select } from "./selection.js";
import { initSequence, onSequence, sequenceState } from "./sequence.js";
import { initWaterfall } from "./waterfall.js";
import { away, dim, hold, initTravel, onNews, restep } from "./travel.js";
import { watchTyping } from "./typing.js";

const body = document.body;

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
    const changed = msg.status !== S.status;
    S.status = msg.status;
    body.dataset.status = msg.status;
    if (isFinal(S.status)) fixPace();
    showReplay();
    if (failedNow && !S.selected) inspectError();
    // Away from the head the header keeps the run's own status: redraw it where the page stands.
    if (changed && away()) restep();
  }
  if (typeof msg.pace_ms === "number" && msg.pace_ms !== S.paceMS && S.paceWanted === null) {
    // Another page changed the run's pace.
    S.paceMS = msg.pace_ms;
    showPace(S.paceMS);
  }
  syncFilterInputs();
  applyFilters(added);
  countLive(added);
  // Following, the new rows are the ones on screen before the list folds: however many came,
  // it then keeps only the newest.
  if (added.length > 0 && atHead) rowsEl().scrollTop = rowsEl().scrollHeight;
  if (added.length > 0 && fold() && filtering() && !holds(filterQuery())) {
    // The list filtered by the page no longer holds every row: the server filters it now.
    applyFilters().then(() => { if (atHead) rowsEl().scrollTop = rowsEl().scrollHeight; });
  }
  showFilterCount();
  if (added.length > 0 && !away()) refreshAgentSummary();
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

// showReplay enables Replay once the run has ended: there is nothing to replay before.
function showReplay() {
  const btn = document.getElementById("replay");
  if (btn) btn.disabled = !isFinal(S.status);
  const turn = document.getElementById("next-turn");
  if (turn) turn.hidden = !isFinal(S.status) || S.status === "interrupted"; // that one waits for a decision
}

// ---- events

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
  if (tab) { openTab(tab.dataset.tab); return; }
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

// continueHeld sends the held run's form: how it goes on (the button pressed says which) and
// what the person edited first. The page learns that it went on from the run's events.
async function continueHeld(ev) {
  const form = ev.target.closest("form.held");
  if (!form) return;
  ev.preventDefault();
  const errEl = form.querySelector(".form-error");
  const req = { action: ev.submitter ? ev.submitter.value : "continue", by: "page" };
  const stepTo = form.querySelector("[name=step]")?.value;
  if (req.action === "step" && stepTo) req.step = stepTo;
  if (req.action !== "abort") {
    try {
      Object.assign(req, heldEdits(form));
    } catch (e) {
      showError(errEl, e.message);
      return;
    }
  }
  const buttons = form.querySelectorAll("button");
  buttons.forEach((b) => { b.disabled = true; });
  const r = await postJSON("/api/runs/" + encodeURIComponent(S.runId) + "/continue", req);
  showError(errEl, r.ok ? "" : (r.data.error || "could not continue the run"));
  if (!r.ok) buttons.forEach((b) => { b.disabled = false; });
}

// heldEdits returns what the person changed in the held run's form: the deciding reply (its
// text, its transfer's target), the result given in a held tool's place, the session value and
// the input of the held model call; it throws on input or a value that is no JSON.
export function heldEdits(form) {
  const out = {};
  const original = form.dataset.reply ? JSON.parse(form.dataset.reply) : null;
  const text = form.querySelector("[name=reply]");
  const to = form.querySelector("[name=transfer_to]");
  if (original && text) {
    const reply = JSON.parse(form.dataset.reply);
    reply.content = text.value;
    const target = to ? to.value.trim() : "";
    if (to && target !== to.defaultValue) {
      for (const tc of reply.tool_calls || []) {
        if (tc.name === "transfer_to_agent") tc.arguments = JSON.stringify({ agent_name: target });
      }
    }
    if (JSON.stringify(reply) !== JSON.stringify(original)) out.reply = reply;
  }
  const result = form.querySelector("[name=result]");
  if (result && result.value !== "") out.result = result.value;
  const value = form.querySelector("[name=value]");
  if (value && value.value !== value.defaultValue) {
    try {
      out.value = JSON.parse(value.value);
    } catch (e) {
      throw new Error("Session value is not JSON: " + e.message);
    }
  }
  const input = form.querySelector("[name=input]");
  if (input && input.value !== input.defaultValue) {
    let list;
    try {
      list = JSON.parse(input.value);
    } catch (e) {
      throw new Error("Input is not JSON: " + e.message);
    }
    if (!Array.isArray(list)) throw new Error("Input must be a JSON list of messages.");
    out.input = list;
  }
  return out;
}

// setBreakpoints sends the run's breakpoint list, which holds from its next moment on.
async function setBreakpoints(ev) {
  const form = ev.target.closest("form.breakpoints");
  if (!form) return;
  ev.preventDefault();
  await sendBreakpoints(form);
}

// breakHere adds the breakpoint of a "Break here" button (an inspector's) to the run's list, and
// sends the list.
async function breakHere(ev) {
  const btn = ev.target.closest("button[data-break]");
  const form = document.querySelector("form.breakpoints");
  if (!btn || !form) return;
  const input = form.querySelector("[name=breakpoints]");
  input.value = addBreakpoint(input.value, btn.dataset.break);
  await sendBreakpoints(form);
}

// addBreakpoint returns the list written in value with spec added, once.
function addBreakpoint(value, spec) {
  const list = splitBreakpoints(value);
  if (!list.includes(spec)) list.push(spec);
  return list.join(", ");
}

async function sendBreakpoints(form) {
  const errEl = form.querySelector(".form-error");
  const breakpoints = splitBreakpoints(form.querySelector("[name=breakpoints]").value);
  const req = { breakpoints };
  const next = form.querySelector("[name=next_runs]");
  if (next) req.next_runs = next.checked;
  const r = await postJSON("/api/runs/" + encodeURIComponent(S.runId) + "/breakpoints", req);
  showError(errEl, r.ok ? "" : (r.data.error || "could not set the breakpoints"));
  if (r.ok) form.dataset.set = breakpoints.join(",");
}

// fork sends the inspector's fork form: a new run of this one's flow, the inspected model call
// answered as the form says; the page then goes to the fork's.
function fork(ev) {
  const form = ev.target.closest("form.fork");
  if (!form) return;
  ev.preventDefault();
  const req = { at: Number(form.dataset.at) };
  const reply = form.querySelector("[name=reply]").value.trim();
  const to = form.querySelector("[name=transfer_to]").value;
  if (reply) req.reply = reply;
  if (to) req.transfer_to = to;
  const model = form.querySelector("[name=model]"); // offered when the server has more than one
  if (model) req.model = model.value;
  if (!reply && !to) {
    showError(form.querySelector(".form-error"), "Say what the call answers instead: a reply, a transfer, or both.");
    return;
  }
  const url = "/api/runs/" + encodeURIComponent(S.runId) + "/fork";
  if (form.dataset.app) {
    forkApp(form, url, req);
    return;
  }
  postRun(url, req, form.querySelector(".form-error"), form.querySelector("button"), "Fork");
}

// forkApp asks for the command that makes an app's next run the fork (Baton cannot run the
// app), and shows it in the form to copy.
async function forkApp(form, url, req) {
  const errEl = form.querySelector(".form-error");
  const out = form.querySelector(".fork-command");
  const r = await postJSON(url, req);
  showError(errEl, r.ok ? "" : "Fork: " + ((r.data && r.data.error) || "HTTP " + r.status));
  out.textContent = r.ok && r.data ? r.data.command : "";
  out.hidden = !r.ok;
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
  openTab(S.tab);
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
  initGraph(keyAction);
  // Registered before initSequence shows the view the page was left on.
  document.addEventListener("baton:view", (ev) => { if (ev.detail !== "tree") loadSequence(); });
  initSequence();
  initWaterfall(onSequence, sequenceState);
  initLayout();
  setupPace(sendPace);
  if (isFinal(S.status)) fixPace(); // the run may have ended just as the page was rendered
  const dl = document.getElementById("download-json");
  if (dl) dl.href = withToken(dl.getAttribute("href")); // a no-op without a token

  // Run again and Replay are there only where the server runs the run's flow; what they could
  // not do shows under the header, saying which of them failed.
  document.getElementById("run-again")?.addEventListener("click", (ev) => {
    startRun(body.dataset.flow || "", body.dataset.input || "", document.getElementById("form-error"), ev.currentTarget, "", "Run again");
  });
  document.getElementById("replay")?.addEventListener("click", (ev) => {
    postRun("/api/runs/" + encodeURIComponent(body.dataset.runId) + "/replay", {}, document.getElementById("form-error"), ev.currentTarget, "Replay");
  });
  showReplay(); // the run may have ended just as the page was rendered
  if (!isFinal(S.status)) watchTyping(S.runId);
  document.addEventListener("click", onClick);
  document.addEventListener("submit", decide);
  document.addEventListener("submit", fork);
  document.addEventListener("submit", continueHeld);
  document.addEventListener("click", breakHere);
  document.addEventListener("submit", setBreakpoints);
  document.getElementById("next-turn")?.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const input = ev.currentTarget.elements.input.value;
    postRun("/api/runs/" + encodeURIComponent(body.dataset.runId) + "/turn", { input: input },
      document.getElementById("form-error"), ev.currentTarget.querySelector("button"), "Continue the conversation");
  });
  watchInputs(setFilters);
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
    openTab(S.tab);
    if (S.selected && S.selected !== before) inspect(S.selected);
  });

  const mayResume = () => S.status === "interrupted";
  if (!isFinal(S.status) || mayResume()) {
    runClock(() => isFinal(S.status), mayResume);
    S.resumeNow = follow(S.runId, () => S.seq, () => isFinal(S.status), mayResume, applyMessage);
  }
}

// openTab shows the timeline or the session panel, and the session panel's histories the page of
// a large finished run leaves out, fetched when it is first shown.
function openTab(name) {
  showTab(name);
  if (name === "session") loadHistories();
}

// loadHistories fetches, once, the session panel's histories that the page of a large finished
// run leaves out (its #session-histories names where: templates.PageOptions.HistoriesSrc) and
// puts them in its place. A step in time that brought them first leaves nothing to fetch.
async function loadHistories() {
  const slot = document.getElementById("session-histories");
  const src = slot && slot.dataset.src;
  if (!src || slot.dataset.loading) return;
  slot.dataset.loading = "1";
  const note = slot.querySelector(".empty");
  try {
    const res = await fetch(withToken(src), { headers: { "Accept": "text/html" } });
    if (!res.ok) throw new Error("what each agent was fed: " + res.status + " " + (await res.text()).slice(0, 200));
    const tpl = document.createElement("template");
    tpl.innerHTML = (await res.text()).trim();
    if (document.getElementById("session-histories") === slot && tpl.content.firstElementChild) slot.replaceWith(tpl.content.firstElementChild);
  } catch (e) {
    delete slot.dataset.loading; // the next showing of the tab tries again
    if (note) note.textContent = "Could not load " + (e.message || String(e));
  }
}

// loadSequence fetches, once, the Sequence and Waterfall views' data that the page of a large
// finished run leaves out (its #seq-data names where: templates.PageOptions.SequenceSrc) and puts
// it in place, where sequence.js takes it in as it lands. A step in time that brought whole data
// first leaves nothing to fetch.
async function loadSequence() {
  const slot = document.getElementById("seq-data");
  const src = slot && slot.dataset.src;
  if (!src || slot.dataset.loading) return;
  slot.dataset.loading = "1";
  try {
    const res = await fetch(withToken(src), { headers: { "Accept": "text/html" } });
    if (!res.ok) throw new Error("the sequence data: " + res.status + " " + (await res.text()).slice(0, 200));
    const tpl = document.createElement("template");
    tpl.innerHTML = (await res.text()).trim();
    const now = document.getElementById("seq-data");
    if (now === slot && tpl.content.firstElementChild) slot.replaceWith(tpl.content.firstElementChild);
  } catch (e) {
    delete slot.dataset.loading; // the next showing of the view tries again
    showError(document.getElementById("form-error"), "Could not load " + (e.message || String(e)));
  }
}
