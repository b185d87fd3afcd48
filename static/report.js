// The report's client. Everything it shows is HTML the server rendered in advance, escaped,
// packed in the file's report-pack elements (gzipped JSON in base64, opened when first needed):
// the timeline's rows, every inspection and agent summary, the tree, header and session as of the
// events the scrubber can show, and the sequence view's data. It moves the selection, filters the
// timeline, steps through time and puts an inspection in; which rows pass the filters, the tree's
// pan and zoom and the sequence view are modules it shares with the run page. A page opened from
// file:// cannot load modules, so the report inlines this one with those it imports as one script
// (templates.reportScript).

import { activateGraph, initGraph } from "./graph.js";
import { isTyping, keyAction, zoomView } from "./keymap.js";
import { hideUnmatched, markMatches, revealing, showCount, syncInputs, watchInputs } from "./rowfilter.js";
import { initSequence, markSequence, onSequence, sequenceState } from "./sequence.js";
import { initWaterfall, markWaterfall } from "./waterfall.js";

(function () {
  "use strict";
  const body = document.body;
  const head = Number(body.dataset.seq) || 0;
  const S = {
    agent: "", kinds: [], failed: false, text: "",
    selected: 0, // the selected row's seq
    shown: "",   // what the inspector shows or is opening: "seq:N" or "agent:NAME"
    at: head,    // the event the scrubber shows
    frame: head, // the event the tree, header and session are drawn as of
  };
  const rowsEl = document.getElementById("timeline-rows");
  const panel = document.getElementById("inspector");
  const allRows = () => Array.from(rowsEl.children);
  const visibleRows = () => allRows().filter((r) => !r.hidden);
  const rowOf = (seq) => document.getElementById("ev-" + seq);

  // ---- packs

  const packs = new Map(); // "kind:key" -> its pack element
  const frames = [];       // the seqs the scrubber has a frame for, ascending
  for (const el of document.querySelectorAll("script.report-pack")) {
    let keys = [];
    try { keys = JSON.parse(el.dataset.keys || "[]"); } catch (e) { /* a damaged pack opens nothing */ }
    for (const k of keys) packs.set(el.dataset.kind + ":" + k, el);
    if (el.dataset.kind === "frame") for (const k of keys) frames.push(Number(k));
  }
  frames.sort((a, b) => a - b);
  const opened = new Map(); // pack element -> the promise of its contents

  function open(el) {
    if (!opened.has(el)) {
      opened.set(el, (async () => {
        const bin = atob(el.textContent.trim());
        const bytes = new Uint8Array(bin.length);
        for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
        const text = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
        return JSON.parse(text);
      })());
    }
    return opened.get(el);
  }

  // unpack returns what the packs hold under kind and key, or undefined.
  async function unpack(kind, key) {
    const el = packs.get(kind + ":" + key);
    return el ? (await open(el))[key] : undefined;
  }

  // fromHTML parses server-rendered HTML, in which all trace text is escaped.
  function fromHTML(html) {
    const tpl = document.createElement("template");
    tpl.innerHTML = html;
    return tpl.content;
  }

  // ---- filters: every row is in the list, so the page filters them all itself

  function applyFilters() {
    const rows = allRows();
    showCount(S, hideUnmatched(rows, S), rows.length);
    markMatches(document.getElementById("timeline-rows"), S);
    markGraph();
  }

  function setFilters(f) {
    Object.assign(S, f);
    syncInputs(S);
    applyFilters();
  }

  // revealRow clears the filters that hide row, so that a jump to it shows it.
  function revealRow(row) {
    const f = revealing(row, S);
    if (f) setFilters(f);
  }

  function markGraph(summarised) {
    const graph = document.getElementById("graph");
    if (!graph) return;
    const agent = summarised || S.agent;
    for (const el of graph.querySelectorAll(".selected")) el.classList.remove("selected");
    for (const n of graph.querySelectorAll("[data-agent]")) if (agent && n.dataset.agent === agent) n.classList.add("selected");
    for (const t of graph.querySelectorAll(".transfer")) if (S.selected && Number(t.dataset.seq) === S.selected) t.classList.add("selected");
  }

  // ---- selection and inspector

  // show puts what the packs hold for kind and key in the inspector, unless something else was
  // asked for while its pack opened.
  async function show(kind, key) {
    const want = kind + ":" + key;
    S.shown = want;
    let html;
    try { html = await unpack(kind, key); } catch (e) { html = null; }
    if (S.shown !== want) return;
    if (typeof html !== "string") {
      const p = document.createElement("p");
      p.className = "error";
      p.textContent = "This report holds no inspection of " + (kind === "agent" ? key : "#" + key) + ".";
      panel.replaceChildren(p);
      return;
    }
    panel.replaceChildren(fromHTML(html));
    panel.scrollTop = 0;
  }

  function inspect(seq, focus) {
    if (!seq) return;
    S.selected = seq;
    for (const r of rowsEl.querySelectorAll(".row.selected")) { r.classList.remove("selected"); r.removeAttribute("aria-current"); }
    const row = rowOf(seq);
    if (row) {
      row.classList.add("selected");
      row.setAttribute("aria-current", "true");
      if (!row.hidden) row.scrollIntoView({ block: "nearest" });
      if (focus) row.focus({ preventScroll: true });
    }
    markGraph();
    markSequence(seq);
    markWaterfall(seq);
    show("inspection", String(seq));
    writeHash();
  }

  function move(dir) {
    const rows = visibleRows();
    if (rows.length === 0) return;
    let i = rows.findIndex((r) => Number(r.dataset.seq) === S.selected);
    if (!Number.isFinite(dir)) i = dir > 0 ? rows.length - 1 : 0;
    else if (i < 0) i = dir > 0 ? 0 : rows.length - 1;
    else i = Math.max(0, Math.min(rows.length - 1, i + dir));
    inspect(Number(rows[i].dataset.seq), true);
  }

  function showTab(name) {
    for (const b of document.querySelectorAll("[role=tab][data-tab]")) {
      const on = b.dataset.tab === name;
      b.setAttribute("aria-selected", on ? "true" : "false");
      const p = document.getElementById(b.getAttribute("aria-controls"));
      if (p) p.hidden = !on;
    }
  }

  // ---- time travel: the page as of event seq, drawn from the frame of the latest event up to it

  function frameAt(seq) {
    let lo = 0, hi = frames.length - 1, found = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (frames[mid] <= seq) { found = frames[mid]; lo = mid + 1; } else hi = mid - 1;
    }
    return found;
  }

  async function travel(seq) {
    if (head === 0) return;
    seq = Math.max(1, Math.min(head, seq));
    S.at = seq;
    const f = frameAt(seq);
    label(seq, f);
    if (f && f !== S.frame) {
      let frags;
      try { frags = await unpack("frame", String(f)); } catch (e) { frags = null; }
      if (S.at !== seq) return; // a newer step was asked for meanwhile
      for (const fr of frags || []) {
        const target = document.getElementById(fr.target);
        if (target) target.replaceWith(fromHTML(fr.html));
      }
      if (frags) S.frame = f;
    }
    const away = seq < head;
    document.getElementById("follow-head").hidden = !away;
    body.toggleAttribute("data-at", away);
    if (away) body.dataset.at = String(seq);
    for (const r of allRows()) r.classList.toggle("future", away && Number(r.dataset.seq) > seq);
    inspect(seq);
  }

  function label(seq, frame) {
    const range = document.getElementById("scrub-range");
    if (Number(range.value) !== seq) range.value = String(seq);
    document.querySelector("[data-testid=scrub-seq]").textContent = String(seq);
    const row = rowOf(seq);
    // Between two frames the tree shows the earlier one: say so.
    document.querySelector("[data-testid=scrub-kind]").textContent =
      (row ? row.dataset.kind || "" : "") + (frame && frame !== seq ? " (tree as of #" + frame + ")" : "");
  }

  function writeHash() {
    const p = new URLSearchParams();
    if (S.at < head) p.set("at", String(S.at));
    if (S.selected && S.selected !== S.at) p.set("seq", String(S.selected));
    const h = p.toString();
    history.replaceState(null, "", h ? "#" + h : location.pathname);
  }

  // ---- events

  function onGraph(target) {
    if (activateGraph(target)) return true;
    const edge = target.closest(".transfer, .transfer-badge, .at-arrow.seen");
    if (edge && Number(edge.dataset.seq) > 0) { inspect(Number(edge.dataset.seq)); return true; }
    const node = target.closest(".node");
    if (node) { markGraph(node.dataset.agent); show("agent", node.dataset.agent || ""); return true; }
    return false;
  }

  document.addEventListener("click", (ev) => {
    const link = ev.target.closest(".seq-link");
    if (link) { revealRow(rowOf(link.dataset.seq)); inspect(Number(link.dataset.seq)); return; }
    const only = ev.target.closest("[data-filter-agent]");
    if (only) { setFilters({ agent: only.dataset.filterAgent }); return; }
    const tab = ev.target.closest("[role=tab][data-tab]");
    if (tab) { showTab(tab.dataset.tab); return; }
    if (ev.target.closest("#first-error")) {
      const row = rowsEl.querySelector('.row[data-failed="true"]');
      if (row) { revealRow(row); inspect(Number(row.dataset.seq)); } else ev.target.textContent = "No error";
      return;
    }
    if (ev.target.closest("#follow-head")) { travel(head); return; }
    if (ev.target.closest("#graph")) { onGraph(ev.target); return; }
    const row = ev.target.closest("#timeline-rows .row");
    if (row) inspect(Number(row.dataset.seq));
  });

  document.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    // In a field the keys are the field's (the scrubber's own arrows step it, through "input").
    if (isTyping(t)) { if (ev.key === "Escape") t.blur(); return; }
    const action = keyAction(ev.key, Boolean(t.closest && t.closest("#timeline-rows")));
    if (!action) return;
    const [what, n] = action;
    switch (what) {
      case "move": move(n); break;
      case "step": travel(n === -Infinity ? 1 : n === Infinity ? head : S.at + n); break;
      case "search": showTab("timeline"); document.getElementById("filter-text").focus(); break;
      case "activate":
        if (t.closest && t.closest("#graph") && onGraph(t)) break;
        return;
      case "zoom": if (!zoomView(t, n)) return; break;
      case "actual": return; // the tree's own (graph.js)
      case "escape": setFilters({ agent: "", kinds: [], failed: false, text: "" }); break;
    }
    ev.preventDefault();
  });

  watchInputs(setFilters);
  document.addEventListener("input", (ev) => {
    if (ev.target.id === "scrub-range") travel(Number(ev.target.value));
  });

  // ---- start: the rows first, then where the address says (#at=N, #seq=N)

  initGraph(keyAction);
  initSequence();
  initWaterfall(onSequence, sequenceState);
  (async () => {
    for (const el of document.querySelectorAll('script.report-pack[data-kind="rows"]')) {
      const rows = await open(el);
      for (const k of Object.keys(rows)) rowsEl.append(fromHTML(rows[k]));
    }
    applyFilters();
    await goToHash();
    body.dataset.ready = "true";
    window.addEventListener("hashchange", goToHash);
    // The sequence view's data, in its place: sequence.js takes it in as it lands.
    let seq;
    try { seq = await unpack("sequence", "0"); } catch (e) { seq = null; }
    const slot = document.getElementById("seq-data");
    if (typeof seq === "string" && slot) slot.replaceWith(fromHTML(seq));
  })();

  // goToHash goes where the address says: #at=N the page as of event N, #seq=N that event
  // inspected.
  async function goToHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    const at = Number(p.get("at")) || 0;
    if (at) await travel(at);
    const seq = Number(p.get("seq")) || 0;
    if (seq) inspect(seq);
  }
})();
