// Time travel on the run page: the scrubber and the keys put the page as of one event of the run.
// The server renders the parts (header, outcome, tree, session) as of that event, the same
// fragments the live socket swaps (GET /runs/:id/at/:seq); the timeline keeps the whole run and
// dims the events after the one shown. Away from the newest event the page stays where it is:
// the live socket's rows still arrive, its other parts wait until Follow returns to the head.

import { withToken } from "./common.js";
import { applyFragment } from "./live.js";

const T = {
  runId: "",
  at: 0,            // the event shown; 0 at the head (following the run)
  head: () => 0,    // the run's newest event the page has
  onStep: () => {}, // called with the event stepped to
  want: 0,          // the newest step asked for: older answers are dropped
  held: null,       // live messages held while returning to the head, else null
  apply: () => {},  // applies a live message (run.js)
};

const range = () => document.getElementById("scrub-range");

// away reports whether the page shows an event before the head: live parts must not replace
// what it shows.
export const away = () => T.at !== 0;

// travelAt returns the event the page shows, 0 at the head.
export const travelAt = () => T.at;

// hold reports whether a live message must wait (the page is returning to the head), keeping it.
export function hold(msg) {
  if (T.held === null) return false;
  T.held.push(msg);
  return true;
}

// initTravel wires the scrubber. head returns the newest seq the page has, onStep(seq) is told
// of each step (to select its row), apply applies a live message; at is where the page opened
// (body[data-at], 0 for the head).
export function initTravel(runId, at, head, onStep, apply) {
  Object.assign(T, { runId, head, onStep, apply });
  T.at = at > 0 && at < head() ? at : 0;
  const r = range();
  if (r) r.addEventListener("input", () => go(Number(r.value)));
  const btn = document.getElementById("follow-head");
  if (btn) btn.addEventListener("click", () => go(head()));
  show(T.at || head());
}

// onNews updates the scrubber for a live message: its end moves on, and so does its thumb at the
// head; the new rows are in the future while away.
export function onNews(added) {
  const h = T.head();
  const r = range();
  if (r) {
    r.max = String(Math.max(1, h));
    r.disabled = h === 0;
  }
  // The scrubber's and the header's "of M".
  for (const el of document.querySelectorAll(".head-seq")) el.textContent = String(h);
  if (T.at === 0 && !T.want) label(h);
  else for (const row of added) row.classList.add("future");
}

// restep redraws the page where it stands, away from the head: the header says the run's own
// status and outcome, which a live message just changed.
export function restep() {
  if (T.at !== 0 && !T.want && T.held === null) go(T.at, true);
}

// dim marks the rows the timeline just loaded that come after the event the page shows.
export function dim(rows) {
  const shown = T.want || T.at;
  for (const row of rows) {
    row.classList.toggle("future", T.at !== 0 && Number(row.dataset.seq) > T.at);
    if (Number(row.dataset.seq) === shown) label(shown);
  }
}

// step moves dir events from the one shown or asked for (Infinity: the head, -Infinity: the
// first).
export function step(dir) {
  const h = T.head();
  if (h === 0) return;
  const from = T.want || T.at || h;
  go(Math.max(1, Math.min(h, Number.isFinite(dir) ? from + dir : (dir > 0 ? h : 1))));
}

// go puts the page as of event seq; the head means following the run again. again redraws the
// event the page shows, leaving the selection where the reader put it.
async function go(seq, again) {
  const h = T.head();
  const toHead = seq >= h;
  if (toHead && T.at === 0 && T.held === null) { T.want = 0; show(h); T.onStep(h); return; }
  T.want = seq;
  label(seq);
  // Returning to the head: its parts come from this answer, live messages after it.
  if (toHead && T.held === null) T.held = [];
  let ans;
  try {
    const res = await fetch(withToken("/runs/" + encodeURIComponent(T.runId) + "/at/" + seq), { headers: { "Accept": "application/json" } });
    ans = await res.json();
    if (!res.ok) throw new Error(ans.error || "HTTP " + res.status);
  } catch (e) {
    if (T.want === seq) fail(e.message || "cannot reach the server");
    return;
  }
  if (T.want !== seq) return; // a newer step was asked for meanwhile
  for (const f of ans.fragments || []) applyFragment(f);
  T.at = toHead ? 0 : seq;
  T.want = 0;
  show(seq);
  if (!again) T.onStep(seq);
  if (toHead) release();
}

// release applies the live messages held while returning to the head.
function release() {
  const held = T.held || [];
  T.held = null;
  for (const m of held) T.apply(m);
}

// fail says why a step failed; the page stays at the event it showed, and live messages held for
// a return to the head are let through.
function fail(msg) {
  const err = document.getElementById("form-error");
  if (err) { err.textContent = "time travel: " + msg; err.hidden = false; }
  T.want = 0;
  label(T.at || T.head());
  release();
}

// label puts the scrubber's thumb and label on event seq.
function label(seq) {
  const r = range();
  if (r && Number(r.value) !== seq) r.value = String(seq);
  const row = document.getElementById("ev-" + seq);
  const n = document.querySelector("[data-testid=scrub-seq]");
  const kind = document.querySelector("[data-testid=scrub-kind]");
  // A big run's timeline may not have loaded the row yet: dim names its kind once it has.
  if (kind && (row || !n || n.textContent !== String(seq))) kind.textContent = row ? row.dataset.kind || "" : "";
  if (n) n.textContent = String(seq);
}

// show puts the scrubber, the timeline's dimming and the address on event seq, once the page
// shows it.
function show(seq) {
  const isHead = seq >= T.head();
  label(seq);
  const btn = document.getElementById("follow-head");
  if (btn) btn.hidden = isHead;
  document.body.toggleAttribute("data-at", !isHead);
  if (!isHead) document.body.dataset.at = String(seq);
  const rows = document.getElementById("timeline-rows");
  if (rows) for (const el of rows.children) el.classList.toggle("future", !isHead && Number(el.dataset.seq) > seq);
  // The address opens the page here again (?at=), or at the head.
  const q = new URLSearchParams(location.search);
  if (isHead) q.delete("at"); else q.set("at", String(seq));
  const s = q.toString();
  history.replaceState(null, "", location.pathname + (s ? "?" + s : "") + location.hash);
}
