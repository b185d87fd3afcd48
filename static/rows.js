// The timeline's rows of a big run: the page opens with the newest rows only, and gaps
// (li.gap, data-after and data-before: the rows between those seqs, exclusive, before 0 meaning
// to the newest) stand for the rest. A gap loads when it scrolls into view or is pressed, or
// when a jump needs one of its rows; rows come from GET /runs/:id/rows, as server-rendered HTML.
// Filters over a list with gaps are applied by the server over the whole run: the list is then
// reloaded with the newest rows that pass them, and its gaps hold only rows that pass them too.
// Rows that arrive live are appended; past CAP rows, the oldest fold back into a gap (fold).

import { withToken } from "./common.js";

const LIMIT = 400;   // rows per request, as many as the page opens with
const AROUND = 100;  // rows loaded before the one a jump goes to
const CAP = 2 * LIMIT; // rows the list holds before fold puts its oldest back into a gap

const W = {
  runId: "",
  query: () => new URLSearchParams(), // the filters, as rowsRoute takes them
  onRows: () => {},   // told of the rows put in the list
  key: "",            // the filters the server applied to the list's rows ("": none)
  reloading: null,    // the reload in flight: a promise, else null
  ctl: null,          // its AbortController
  observer: null,
};

const loading = new WeakMap(); // gap -> its load in flight

const list = () => document.getElementById("timeline-rows");
const gaps = () => Array.from(list().querySelectorAll(":scope > .gap"));

// initRows wires the gaps of the list; query returns the filters' parameters, onRows(rows) is
// called with the rows each load puts in the list.
export function initRows(runId, query, onRows) {
  Object.assign(W, { runId, query, onRows });
  if ("IntersectionObserver" in window) {
    W.observer = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (!e.isIntersecting || !e.target.isConnected) continue;
        // A gap met scrolling up loads its last rows, one met scrolling down its first.
        const up = e.rootBounds && e.boundingClientRect.top < e.rootBounds.top + e.rootBounds.height / 2;
        fill(e.target, !up, up);
      }
    }, { root: list(), rootMargin: "300px 0px" });
  }
  for (const g of gaps()) W.observer?.observe(g);
  list().addEventListener("click", (ev) => {
    const g = ev.target.closest(".gap");
    if (g) fill(g, false, true);
  });
}

// complete reports whether the list holds every row of the run, so that the page can filter it
// by itself.
export function complete() { return W.key === "" && gaps().length === 0 && !W.reloading; }

// holds reports whether the list's rows are those that pass filters q (URLSearchParams).
export function holds(q) { return W.key === q.toString(); }

// gapOf returns the gap that stands for event seq, or null.
export function gapOf(seq) {
  return gaps().find((g) => Number(g.dataset.after) < seq && (Number(g.dataset.before) === 0 || seq < Number(g.dataset.before))) || null;
}

// gapNext returns the gap right before (dir < 0) or after row, or null.
export function gapNext(row, dir) {
  let el = dir < 0 ? row.previousElementSibling : row.nextElementSibling;
  while (el && el.hidden) el = dir < 0 ? el.previousElementSibling : el.nextElementSibling;
  return el && el.classList.contains("gap") ? el : null;
}

// ensure loads the rows around event seq when a gap stands for it, after any reload in flight.
export async function ensure(seq) {
  if (W.reloading) await W.reloading.catch(() => {});
  // A load of the gap already in flight may or may not bring seq: look again after it.
  for (let tries = 0; tries < 3; tries++) {
    const g = gapOf(seq);
    if (!g) return;
    await fill(g, true, false, Math.max(Number(g.dataset.after), seq - AROUND - 1));
  }
}

// fill loads rows of gap g, the first ones forward (from seq from, by default its start), else
// its last ones, keeping the rows under the gap where they are on screen when anchored. While a
// load of g is in flight, it returns that one.
export function fill(g, forward, anchored, from) {
  if (!loading.has(g)) loading.set(g, load(g, forward, anchored, from).finally(() => loading.delete(g)));
  return loading.get(g);
}

async function load(g, forward, anchored, from) {
  const after = Number(g.dataset.after), before = Number(g.dataset.before);
  const q = W.query();
  q.set("after", String(forward && from !== undefined ? from : after));
  if (before) q.set("before", String(before));
  q.set("dir", forward ? "forward" : "backward");
  q.set("limit", String(LIMIT));
  let ans;
  try {
    ans = await get(q);
  } catch (e) {
    showGapError(g, e.message);
    return;
  }
  if (!g.isConnected) return; // a reload replaced the list meanwhile
  const start = forward && from !== undefined ? from : after;
  const reached = ans.reached;
  const parts = [];
  if (forward) {
    if (start > after) parts.push(...gap(after, start + 1));
    parts.push(...rowsOf(ans.html));
    if (reached !== before) parts.push(...gap(reached, before));
  } else {
    if (reached !== after) parts.push(...gap(after, reached));
    parts.push(...rowsOf(ans.html));
  }
  const next = g.nextElementSibling;
  const top = next && anchored ? next.getBoundingClientRect().top : 0;
  g.replaceWith(...parts);
  if (next && anchored) list().scrollTop += next.getBoundingClientRect().top - top;
  settle(parts);
}

// reload replaces the list with the newest rows that pass the filters, over the whole run, and
// resolves to the answer's figures ({matches, events, head}); the newest rows that arrived live
// meanwhile stay.
export function reload() {
  if (W.ctl) W.ctl.abort();
  const ctl = new AbortController();
  W.ctl = ctl;
  const q = W.query();
  const key = q.toString();
  q.set("dir", "backward");
  q.set("limit", String(LIMIT));
  q.set("count", "1");
  const p = get(q, ctl.signal).then((ans) => {
    if (W.ctl !== ctl) return null;
    const el = list();
    const later = Array.from(el.querySelectorAll(":scope > .row")).filter((r) => Number(r.dataset.seq) > ans.head);
    const rows = rowsOf(ans.html, true);
    // Backward, the search reached the run's first event (0) or stopped at seq reached.
    const parts = ans.reached > 0 ? [...gap(0, ans.reached), ...rows] : rows;
    el.replaceChildren(...parts, ...later);
    W.key = key;
    settle(parts);
    return { matches: ans.matches, events: ans.events, head: ans.head };
  }).finally(() => {
    if (W.ctl === ctl) { W.ctl = null; W.reloading = null; }
  });
  W.reloading = p;
  return p;
}

// fold puts the oldest rows back into a gap when rows that arrived live have grown the list past
// CAP rows: it keeps the newest LIMIT rows, and never folds a row less than LIMIT rows above the
// first one on screen, so a reader's rows stay and the new gap is far from view (a gap in view
// loads). The gap joins the gaps before the folded rows and says how many rows it folded. It
// returns whether it folded any.
export function fold() {
  const el = list();
  if (el.childElementCount <= CAP) return false;
  const rows = Array.from(el.querySelectorAll(":scope > .row"));
  if (rows.length <= CAP) return false;
  const top = el.getBoundingClientRect().top;
  // above(n): the rows before index n + LIMIT that are shown are all above the list's view.
  const above = (n) => {
    for (let i = n + LIMIT - 1; i >= 0; i--) {
      if (!rows[i].hidden) return rows[i].getBoundingClientRect().bottom <= top;
    }
    return true;
  };
  let n = 0, most = rows.length - LIMIT;
  while (n < most) {
    const mid = Math.ceil((n + most) / 2);
    if (above(mid)) n = mid; else most = mid - 1;
  }
  if (n < LIMIT / 4) return false; // not worth a gap yet
  const kept = rows[n];
  const anchor = rows.slice(n).find((r) => !r.hidden);
  const at = anchor ? anchor.getBoundingClientRect().top : 0;
  // Everything before the first kept row goes, gaps included: one gap stands for it all.
  const head = el.firstElementChild;
  const after = head.classList.contains("gap") ? Number(head.dataset.after) : Number(rows[0].dataset.seq) - 1;
  let folded = n;
  while (el.firstElementChild !== kept) {
    folded += Number(el.firstElementChild.dataset.folded) || 0;
    el.firstElementChild.remove();
  }
  const parts = gap(after, Number(kept.dataset.seq), folded);
  el.prepend(...parts);
  if (anchor) el.scrollTop += anchor.getBoundingClientRect().top - at;
  settle(parts);
  return true;
}

// first returns the first row of the run that passes the filters params names (as
// GET /runs/:id/rows takes them), as an element not in the page, or null when none does.
export async function first(params) {
  const q = new URLSearchParams(params);
  q.set("dir", "forward");
  q.set("limit", "1");
  const rows = rowsOf((await get(q)).html, true);
  return rows[0] || null;
}

async function get(q, signal) {
  const res = await fetch(withToken("/runs/" + encodeURIComponent(W.runId) + "/rows?" + q.toString()),
    { signal, headers: { "Accept": "application/json" } });
  const ans = await res.json();
  if (!res.ok) throw new Error(ans.error || "HTTP " + res.status);
  return ans;
}

// settle tells the page of the rows just put in the list and watches the new gaps.
function settle(parts) {
  const rows = [];
  for (const el of parts) {
    if (el.classList.contains("gap")) W.observer?.observe(el);
    else rows.push(el);
  }
  W.onRows(rows);
}

// rowsOf parses rows the server rendered (all trace text escaped), leaving out those the page
// already has unless all: rows that arrived live are as new.
function rowsOf(html, all) {
  const tpl = document.createElement("template");
  tpl.innerHTML = html;
  return Array.from(tpl.content.children).filter((r) => all || !document.getElementById(r.id));
}

// gap returns a gap for the rows between after and before, as the server renders one (with
// folded, the count of rows fold put in it), in a list that is empty when there is no seq
// between them.
function gap(after, before, folded) {
  if (before !== 0 && before <= after + 1) return [];
  const li = document.createElement("li");
  li.className = "gap";
  li.dataset.testid = "timeline-gap";
  li.dataset.after = String(after);
  li.dataset.before = String(before);
  const b = document.createElement("button");
  b.type = "button";
  b.className = "small";
  b.textContent = before ? "Show events #" + (after + 1) + "\u2013#" + (before - 1) : "Show events after #" + after;
  if (folded) {
    li.dataset.folded = String(folded);
    b.textContent += " (" + folded + " folded)";
  }
  li.append(b);
  return [li];
}

function showGapError(g, msg) {
  const b = g.querySelector("button");
  if (b) b.textContent = "Could not load these events (" + msg + "): try again";
}
