// The timeline's filters: agent, kinds, failed only and the search, applied by the page to the
// rows it holds or, when it does not hold every row, by the server (rows.js); their count and
// "no match"; and the jumps that clear them (a link to a hidden row, "First error").

import { showError } from "./common.js";
import { openDrawer } from "./layout.js";
import { complete, first, holds, reload } from "./rows.js";
import { S, allRows, rowsEl, writeHash } from "./runstate.js";
import { inspect, markGraph } from "./selection.js";

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

export const filtering = () => S.agent || S.kinds.length || S.failed || S.text;

// filterQuery returns the filters as GET /runs/:id/rows takes them.
export function filterQuery() {
  const q = new URLSearchParams();
  if (S.agent) q.set("agent", S.agent);
  if (S.kinds.length) q.set("kind", S.kinds.join(","));
  if (S.failed) q.set("failed", "1");
  if (S.text.trim()) q.set("q", S.text);
  return q;
}

export function syncFilterInputs() {
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
export function applyFilters(rows) {
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
export function countLive(added) {
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
export function showFilterCount() {
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
export function revealRow(row) {
  if (!row || matches(row, S.text.trim().toLowerCase())) return Promise.resolve();
  return setFilters({ agent: "", kinds: row.dataset.echoOf ? ["message"] : [], failed: false, text: "" });
}

// firstError inspects the run's first failed row, whatever the filters: the list's, or the
// server's when the list does not hold every row.
export async function firstError() {
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

export function setFilters(f) {
  Object.assign(S, f);
  syncFilterInputs();
  const done = applyFilters();
  writeHash();
  return done;
}
