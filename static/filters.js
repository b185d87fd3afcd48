// The timeline's filters on the run page: applied by the page to the rows it holds (rowfilter.js)
// or, when it does not hold every row, by the server (rows.js); their count and "no match"; and
// the jumps that clear them (a link to a hidden row, "First error").

import { showError } from "./common.js";
import { openDrawer } from "./layout.js";
import { hideUnmatched, isFiltering, markMatches, revealing, showCount, syncInputs } from "./rowfilter.js";
import { complete, first, holds, reload } from "./rows.js";
import { S, allRows, rowsEl, writeHash } from "./runstate.js";
import { inspect, markGraph } from "./selection.js";

export const filtering = () => isFiltering(S);

// filterQuery returns the filters as GET /runs/:id/rows takes them.
export function filterQuery() {
  const q = new URLSearchParams();
  if (S.agent) q.set("agent", S.agent);
  if (S.kinds.length) q.set("kind", S.kinds.join(","));
  if (S.failed) q.set("failed", "1");
  if (S.text.trim()) q.set("q", S.text);
  return q;
}

export const syncFilterInputs = () => syncInputs(S);

// applyFilters hides the rows that do not pass the filters: rows, or with none the whole list
// after the filters changed. A list that does not hold every row is reloaded with the rows that
// pass them, found by the server over the whole run; the promise resolves once it is.
export function applyFilters(rows) {
  let done = Promise.resolve();
  if (!rows && !complete() && !holds(filterQuery())) {
    done = reload().then((counts) => {
      if (counts) S.counts = counts;
      showFilterCount();
      markMatches(document.getElementById("timeline-rows"), S);
    }).catch((e) => { if (e.name !== "AbortError") showError(document.getElementById("form-error"), "timeline: " + e.message); });
  }
  hideUnmatched(rows || allRows(), S);
  markMatches(document.getElementById("timeline-rows"), S);
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
  const all = allRows();
  let shown = all.filter((r) => !r.hidden).length, total = all.length;
  if (!complete() && S.counts) ({ matches: shown, events: total } = S.counts);
  showCount(S, shown, total);
}

// revealRow clears the filters that hide row (an element, in the list or not), so that a jump
// to it shows it; the promise resolves once the list is filtered again.
export function revealRow(row) {
  const f = revealing(row, S);
  return f ? setFilters(f) : Promise.resolve();
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
