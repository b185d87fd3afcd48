// The run page's state: the run as the page knows it, the filters and the selection, the tab,
// and the address (#seq=12&agent=math_agent&kind=transfer,tool&failed=1&q=text&tab=session)
// that keeps them; and the timeline's rows, as the modules of the page find them.

import { pace } from "./common.js";

export const S = {
  runId: document.body.dataset.runId || "",
  seq: Number(document.body.dataset.seq) || 0,
  status: document.body.dataset.status || "running",
  agent: "", kinds: [], failed: false, text: "",
  selected: 0,   // seq of the selected timeline row
  inspected: 0,  // seq shown in the inspector
  summaryDue: null, // the timer of an agent summary's next live refresh (see refreshAgentSummary)
  tab: "timeline",
  paceMS: pace(),   // the run's pace as the server last told it
  paceWanted: null, // a pace this page is sending or will send next
  fetch: null,      // the inspector's request in flight
  counts: null,     // {matches, events, head}: the server's count of the filters' matches, for a
                    // timeline that does not hold every row (rows.js)
  resumeNow: () => {}, // looks at once whether the run was resumed (set while following it)
};

export const isFinal = (status) => status !== "" && status !== "running";
export const rowsEl = () => document.getElementById("timeline-rows");
export const allRows = () => Array.from(rowsEl().querySelectorAll(":scope > .row"));
export const visibleRows = () => allRows().filter((r) => !r.hidden);
export const rowOf = (seq) => document.getElementById("ev-" + seq);

// readHash sets the filters, the selection and the tab from the address.
export function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  S.selected = Number(p.get("seq")) || 0;
  S.agent = p.get("agent") || "";
  S.kinds = (p.get("kind") || "").split(",").filter(Boolean);
  S.failed = p.get("failed") === "1";
  S.text = p.get("q") || "";
  S.tab = p.get("tab") === "session" ? "session" : "timeline";
}

// writeHash puts the filters, the selection and the tab in the address, replacing the entry.
export function writeHash() {
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

// showTab shows the timeline or the session panel.
export function showTab(name) {
  S.tab = name;
  for (const b of document.querySelectorAll("[role=tab][data-tab]")) {
    const on = b.dataset.tab === name;
    b.setAttribute("aria-selected", on ? "true" : "false");
    const panel = document.getElementById(b.getAttribute("aria-controls"));
    if (panel) panel.hidden = !on;
  }
  writeHash();
}
