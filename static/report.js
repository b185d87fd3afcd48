// The report's client: a classic script inlined in the file (modules cannot load from file://).
// Everything it shows is HTML the server rendered in advance, escaped, in the file's <template>
// elements: it only moves the selection, filters the timeline and clones an inspection in.
(function () {
  "use strict";
  const S = { agent: "", kind: "", text: "", selected: 0 };
  const rowsEl = document.getElementById("timeline-rows");
  const panel = document.getElementById("inspector");
  const held = document.getElementById("report-inspections");
  const allRows = () => Array.from(rowsEl.children);
  const visibleRows = () => allRows().filter((r) => !r.hidden);

  // show puts the inspection held under attr=value in the inspector.
  function show(attr, value) {
    const tpl = Array.from(held.children).find((t) => t.getAttribute(attr) === value);
    if (!tpl) return;
    panel.replaceChildren(tpl.content.cloneNode(true));
    panel.scrollTop = 0;
  }

  function markGraph(agent) {
    const graph = document.getElementById("graph");
    if (!graph) return;
    for (const el of graph.querySelectorAll(".selected")) el.classList.remove("selected");
    for (const n of graph.querySelectorAll("[data-agent]")) if (agent && n.dataset.agent === agent) n.classList.add("selected");
    for (const t of graph.querySelectorAll(".transfer")) if (S.selected && Number(t.dataset.seq) === S.selected) t.classList.add("selected");
  }

  function inspect(seq, focus) {
    if (!seq) return;
    S.selected = seq;
    for (const r of rowsEl.querySelectorAll(".row.selected")) { r.classList.remove("selected"); r.removeAttribute("aria-current"); }
    const row = document.getElementById("ev-" + seq);
    if (row) {
      row.classList.add("selected");
      row.setAttribute("aria-current", "true");
      if (!row.hidden) row.scrollIntoView({ block: "nearest" });
      if (focus) row.focus({ preventScroll: true });
    }
    markGraph(S.agent);
    show("data-seq", String(seq));
    history.replaceState(null, "", "#seq=" + seq);
  }

  function applyFilters() {
    const q = S.text.toLowerCase();
    for (const r of allRows()) {
      r.hidden = (S.agent && r.dataset.agent !== S.agent) || (S.kind && r.dataset.group !== S.kind) ||
        (q && !r.textContent.toLowerCase().includes(q));
    }
    const count = document.getElementById("filter-count");
    if (count) count.textContent = S.agent || S.kind || S.text ? visibleRows().length + " of " + allRows().length : "";
    markGraph(S.agent);
  }

  function setFilters(f) {
    Object.assign(S, f);
    document.getElementById("filter-agent").value = S.agent;
    document.getElementById("filter-kind").value = S.kind;
    document.getElementById("filter-text").value = S.text;
    applyFilters();
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

  function onGraph(target) {
    const edge = target.closest(".transfer, .transfer-badge, .at-arrow.seen");
    if (edge && Number(edge.dataset.seq) > 0) { inspect(Number(edge.dataset.seq)); return true; }
    const node = target.closest(".node");
    if (node) { markGraph(node.dataset.agent); show("data-agent", node.dataset.agent || ""); return true; }
    return false;
  }

  document.addEventListener("click", (ev) => {
    const link = ev.target.closest(".seq-link");
    if (link) {
      const row = document.getElementById("ev-" + link.dataset.seq);
      if (row && row.hidden) setFilters({ agent: "", kind: "", text: "" });
      inspect(Number(link.dataset.seq));
      return;
    }
    const only = ev.target.closest("[data-filter-agent]");
    if (only) { setFilters({ agent: only.dataset.filterAgent }); return; }
    const tab = ev.target.closest("[role=tab][data-tab]");
    if (tab) { showTab(tab.dataset.tab); return; }
    if (ev.target.closest("#graph")) { onGraph(ev.target); return; }
    const row = ev.target.closest("#timeline-rows .row");
    if (row) inspect(Number(row.dataset.seq));
  });

  document.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    if (t && /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)) { if (ev.key === "Escape") t.blur(); return; }
    const inTimeline = t.closest && t.closest("#timeline-rows");
    switch (ev.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "ArrowDown": if (!inTimeline) return; move(1); break;
      case "ArrowUp": if (!inTimeline) return; move(-1); break;
      case "Home": if (!inTimeline) return; move(-Infinity); break;
      case "End": if (!inTimeline) return; move(Infinity); break;
      case "/": showTab("timeline"); document.getElementById("filter-text").focus(); break;
      case "Enter": case " ":
        if (t.closest && t.closest("#graph") && onGraph(t)) break;
        return;
      case "Escape": setFilters({ agent: "", kind: "", text: "" }); break;
      default: return;
    }
    ev.preventDefault();
  });

  document.getElementById("filter-agent").addEventListener("change", (ev) => setFilters({ agent: ev.target.value }));
  document.getElementById("filter-kind").addEventListener("change", (ev) => setFilters({ kind: ev.target.value }));
  document.getElementById("filter-text").addEventListener("input", (ev) => setFilters({ text: ev.target.value }));

  const at = Number(new URLSearchParams(location.hash.slice(1)).get("seq"));
  if (at) inspect(at);
})();
