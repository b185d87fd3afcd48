// Baton's client: no framework, no build step. The server renders every piece of HTML; this
// script only swaps in the server's fragments, filters and selects timeline rows, fetches the
// inspector and posts run controls. Text from traces only ever reaches the page inside
// server-rendered (escaped) HTML or through textContent.
"use strict";

(() => {
  const body = document.body;
  const tokenMeta = document.querySelector('meta[name="baton-token"]');
  const token = tokenMeta ? tokenMeta.content : "";
  const FIT_KEY = "baton.fit";

  // withToken adds ?token= (or &token=) to a same-origin URL when the page has a token.
  function withToken(url) {
    if (!token) return url;
    return url + (url.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token);
  }

  // postJSON posts data as JSON and returns {ok, status, data}; data is the parsed reply or {}.
  async function postJSON(url, data) {
    let res;
    try {
      res = await fetch(withToken(url), {
        method: "POST",
        headers: { "Content-Type": "application/json", "Accept": "application/json" },
        body: JSON.stringify(data),
      });
    } catch (e) {
      return { ok: false, status: 0, data: { error: "cannot reach the server" } };
    }
    let reply = {};
    try { reply = await res.json(); } catch (e) { /* an empty or non-JSON body */ }
    return { ok: res.ok, status: res.status, data: reply || {} };
  }

  function showError(el, msg) {
    if (!el) return;
    el.textContent = msg || "";
    el.hidden = !msg;
  }

  function pace() {
    const input = document.getElementById("pace");
    return input ? Number(input.value) || 0 : 0;
  }

  // setupPace shows the slider's value as it moves and calls onChange when it is released. The
  // server renders it at the run's pace (or its default), so what it shows is what runs.
  function setupPace(onChange) {
    const input = document.getElementById("pace");
    const out = document.getElementById("pace-value");
    if (!input) return;
    const show = () => { if (out) out.textContent = input.value + " ms"; };
    input.addEventListener("input", show);
    input.addEventListener("change", () => { if (onChange) onChange(Number(input.value)); });
  }

  // startRun starts a run of flow and navigates to its page, or shows the API's error in errEl.
  async function startRun(flow, input, errEl, button) {
    showError(errEl, "");
    if (button) button.disabled = true;
    const r = await postJSON("/api/runs", { flow: flow, input: input, pace_ms: pace() });
    if (button) button.disabled = false;
    if (r.ok && r.data && typeof r.data.url === "string" && r.data.url.startsWith("/")) {
      location.assign(withToken(r.data.url));
      return;
    }
    showError(errEl, (r.data && r.data.error) || "could not start the run (HTTP " + r.status + ")");
  }

  // ---------------------------------------------------------------- index page

  function initIndex() {
    setupPace(null);
    document.addEventListener("submit", (ev) => {
      const form = ev.target.closest("form.run-form");
      if (!form) return;
      ev.preventDefault();
      const input = form.querySelector("textarea");
      startRun(form.dataset.flow, input ? input.value : "", form.querySelector(".form-error"),
        form.querySelector("button[type=submit]"));
    });
  }

  // ---------------------------------------------------------------- run page

  const S = {
    runId: body.dataset.runId || "",
    seq: Number(body.dataset.seq) || 0,
    status: body.dataset.status || "running",
    agent: "", kind: "", text: "",
    selected: 0,   // seq of the selected timeline row
    inspected: 0,  // seq shown in the inspector
    tab: "timeline",
    backoff: 0,
    ws: null,
    fetch: null,
  };

  const isFinal = (status) => status !== "" && status !== "running";
  // How often the page of a run that ended interrupted looks whether it was resumed.
  const RESUME_POLL_MS = 3000;
  const rowsEl = () => document.getElementById("timeline-rows");
  const allRows = () => Array.from(rowsEl().children);
  const visibleRows = () => allRows().filter((r) => !r.hidden);
  const rowOf = (seq) => document.getElementById("ev-" + seq);

  // ---- URL: #seq=12&agent=math_agent&kind=transfer&q=text&tab=session

  function readHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    S.selected = Number(p.get("seq")) || 0;
    S.agent = p.get("agent") || "";
    S.kind = p.get("kind") || "";
    S.text = p.get("q") || "";
    S.tab = p.get("tab") === "session" ? "session" : "timeline";
  }

  function writeHash() {
    const p = new URLSearchParams();
    if (S.selected) p.set("seq", String(S.selected));
    if (S.agent) p.set("agent", S.agent);
    if (S.kind) p.set("kind", S.kind);
    if (S.text) p.set("q", S.text);
    if (S.tab !== "timeline") p.set("tab", S.tab);
    const h = p.toString();
    history.replaceState(null, "", h ? "#" + h : location.pathname + location.search);
  }

  // ---- filters

  function matches(row) {
    if (S.agent && row.dataset.agent !== S.agent) return false;
    if (S.kind && row.dataset.group !== S.kind) return false;
    if (S.text && !row.textContent.toLowerCase().includes(S.text.toLowerCase())) return false;
    return true;
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
    const k = document.getElementById("filter-kind");
    if (k) k.value = S.kind;
    const t = document.getElementById("filter-text");
    if (t && t.value !== S.text) t.value = S.text;
  }

  function applyFilters(rows) {
    for (const r of rows || allRows()) r.hidden = !matches(r);
    const count = document.getElementById("filter-count");
    if (count) {
      const all = allRows().length;
      const shown = visibleRows().length;
      count.textContent = S.agent || S.kind || S.text ? shown + " of " + all : "";
    }
    markGraph();
  }

  function setFilters(f) {
    Object.assign(S, f);
    syncFilterInputs();
    applyFilters();
    writeHash();
  }

  // markGraph highlights what is selected in the tree: the filtered agent, the selected event.
  function markGraph() {
    const graph = document.getElementById("graph");
    if (!graph) return;
    for (const el of graph.querySelectorAll(".selected")) el.classList.remove("selected");
    for (const n of graph.querySelectorAll("[data-agent]")) {
      if (S.agent && n.dataset.agent === S.agent) n.classList.add("selected");
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
      if (opts && opts.scroll) row.scrollIntoView({ block: "nearest" });
      if (opts && opts.focus) row.focus({ preventScroll: true });
    }
    markGraph();
    writeHash();
  }

  async function inspect(seq) {
    if (!seq) return;
    select(seq, { scroll: true });
    S.inspected = seq;
    const panel = document.getElementById("inspector");
    if (S.fetch) S.fetch.abort();
    const ctl = new AbortController();
    S.fetch = ctl;
    const url = "/runs/" + encodeURIComponent(S.runId) + "/inspector?seq=" + seq;
    try {
      const res = await fetch(withToken(url), { signal: ctl.signal, headers: { "Accept": "text/html" } });
      const text = await res.text();
      if (S.inspected !== seq) return;
      if (!res.ok) {
        let msg = "HTTP " + res.status;
        try { msg = JSON.parse(text).error || msg; } catch (e) { /* not JSON */ }
        panel.replaceChildren(errorLine("Event #" + seq + ": " + msg));
        return;
      }
      // The inspector is server-rendered HTML in which all trace text is escaped.
      const tpl = document.createElement("template");
      tpl.innerHTML = text;
      panel.replaceChildren(tpl.content);
      panel.scrollTop = 0;
    } catch (e) {
      if (e.name !== "AbortError") panel.replaceChildren(errorLine("Event #" + seq + ": cannot reach the server"));
    }
  }

  function errorLine(msg) {
    const p = document.createElement("p");
    p.className = "error";
    p.textContent = msg;
    return p;
  }

  function move(dir) {
    const rows = visibleRows();
    if (rows.length === 0) return;
    let i = rows.findIndex((r) => Number(r.dataset.seq) === S.selected);
    if (i < 0) {
      // Nothing visible is selected: start from the nearest visible row.
      i = dir > 0 ? rows.findIndex((r) => Number(r.dataset.seq) > S.selected) : -1;
      if (i < 0) i = dir > 0 ? 0 : rows.length - 1;
    } else {
      i = Math.max(0, Math.min(rows.length - 1, i + dir));
    }
    select(Number(rows[i].dataset.seq), { scroll: true, focus: true });
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

  function following() {
    const el = rowsEl();
    return el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  }

  function applyFragment(f) {
    const target = document.getElementById(f.target);
    if (!target || typeof f.html !== "string") return [];
    // Fragments are server-rendered HTML in which all trace text is escaped.
    const tpl = document.createElement("template");
    tpl.innerHTML = f.html;
    if (f.swap === "append") {
      const added = [];
      for (const el of Array.from(tpl.content.children)) {
        const old = el.id ? document.getElementById(el.id) : null;
        if (old) old.replaceWith(el); else target.appendChild(el);
        added.push(el);
      }
      return added;
    }
    target.replaceWith(tpl.content);
    return [];
  }

  function applyMessage(msg) {
    const follow = following();
    let added = [];
    for (const f of msg.fragments || []) added = added.concat(applyFragment(f));
    if (typeof msg.seq === "number" && msg.seq > S.seq) {
      S.seq = msg.seq;
      body.dataset.seq = String(S.seq);
    }
    if (typeof msg.status === "string" && msg.status) {
      S.status = msg.status;
      body.dataset.status = msg.status;
    }
    syncFilterInputs();
    applyFilters(added);
    if (S.selected) select(S.selected, {});
    const btn = document.getElementById("follow");
    if (added.length > 0 && follow) rowsEl().scrollTop = rowsEl().scrollHeight;
    // "New events" is for a run still going on: once it ends, nothing new arrives to follow.
    if (btn) btn.hidden = follow || isFinal(S.status) || (added.length === 0 && btn.hidden);
  }

  function connect() {
    if (!S.runId) return;
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const url = withToken(proto + "//" + location.host + "/runs/" + encodeURIComponent(S.runId) +
      "/live?after=" + S.seq);
    let ws;
    try { ws = new WebSocket(url); } catch (e) { reconnect(); return; }
    S.ws = ws;
    body.dataset.live = "connecting";
    ws.onopen = () => { body.dataset.live = "open"; };
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch (e) { return; }
      if (msg.error) {
        // The server dropped us (e.g. too slow): reconnect from what we applied.
        ws.close();
        return;
      }
      S.backoff = 0;
      applyMessage(msg);
    };
    ws.onclose = (ev) => {
      S.ws = null;
      if (isFinal(S.status) && ev.code === 1000) {
        if (S.status === "interrupted") {
          // The app that runs it may resume it in the same trace: look again now and then.
          body.dataset.live = "waiting";
          setTimeout(connect, RESUME_POLL_MS);
          return;
        }
        body.dataset.live = "closed";
        return;
      }
      reconnect();
    };
  }

  function reconnect() {
    body.dataset.live = "reconnecting";
    const delay = Math.min(10000, 500 * Math.pow(2, S.backoff)) * (0.8 + Math.random() * 0.4);
    S.backoff = Math.min(S.backoff + 1, 8);
    setTimeout(connect, delay);
  }

  // ---- elapsed clock while running

  function clock(ms) {
    const tenths = Math.floor(ms / 100);
    const h = Math.floor(tenths / 36000), m = Math.floor(tenths / 600) % 60;
    const s = Math.floor(tenths / 10) % 60, t = tenths % 10;
    const pad = (n) => String(n).padStart(2, "0");
    return (h > 0 ? h + ":" + pad(m) : pad(m)) + ":" + pad(s) + "." + t;
  }

  function tick() {
    const el = document.getElementById("elapsed");
    if (!el || isFinal(S.status) || el.dataset.ended) return;
    const started = Date.parse(el.dataset.started || "");
    if (!Number.isNaN(started) && Date.now() >= started) el.textContent = clock(Date.now() - started);
  }

  // ---- graph fit

  function setupFit() {
    const box = document.getElementById("graph-scroll");
    const btn = document.getElementById("fit-toggle");
    if (!box || !btn) return;
    const set = (fit) => {
      box.classList.toggle("fit", fit);
      btn.setAttribute("aria-pressed", fit ? "true" : "false");
      btn.textContent = fit ? "Fit" : "1:1";
      // At 1:1 a wide tree pans: start with its root (drawn centred on top) in view.
      if (!fit) box.scrollLeft = (box.scrollWidth - box.clientWidth) / 2;
    };
    let fit = localStorage.getItem(FIT_KEY);
    if (fit === null) {
      // Fit unless that would shrink the tree's 15px text below about 10px.
      const g = document.getElementById("graph");
      const w = g ? Number(g.dataset.width) : 0;
      const h = g ? Number(g.dataset.height) : 0;
      const scale = Math.min(w ? box.clientWidth / w : 1, h ? box.clientHeight / h : 1);
      fit = scale > 0.65 ? "1" : "0";
    }
    set(fit === "1");
    btn.addEventListener("click", () => {
      const next = !box.classList.contains("fit");
      localStorage.setItem(FIT_KEY, next ? "1" : "0");
      set(next);
    });
  }

  // ---- events

  function onGraphActivate(target) {
    const edge = target.closest(".transfer, .transfer-badge, .at-arrow.seen");
    if (edge && Number(edge.dataset.seq) > 0) {
      inspect(Number(edge.dataset.seq));
      return true;
    }
    const node = target.closest(".node");
    if (node) {
      const agent = node.dataset.agent || "";
      setFilters({ agent: S.agent === agent ? "" : agent });
      if (Number(node.dataset.seq) > 0) inspect(Number(node.dataset.seq));
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
    switch (ev.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "/": {
        const t = document.getElementById("filter-text");
        if (S.tab !== "timeline") showTab("timeline");
        if (t) t.focus();
        break;
      }
      case "Enter":
      case " ":
        if (inGraph && onGraphActivate(ev.target)) break;
        if (ev.key === "Enter" && !ev.target.closest("button, a") && S.selected) { inspect(S.selected); break; }
        return;
      case "Escape": setFilters({ agent: "", kind: "", text: "" }); break;
      default: return;
    }
    ev.preventDefault();
  }

  function initRun() {
    readHash();
    syncFilterInputs();
    applyFilters();
    showTab(S.tab);
    if (S.selected) {
      select(S.selected, { scroll: true });
      inspect(S.selected);
    }
    setupFit();
    setupPace(async (ms) => {
      if (isFinal(S.status)) return;
      const r = await postJSON("/api/runs/" + encodeURIComponent(S.runId) + "/pace", { pace_ms: ms });
      showError(document.getElementById("form-error"), r.ok ? "" : (r.data.error || "could not change the pace"));
    });
    const dl = document.getElementById("download-json");
    if (dl && token) dl.href = withToken(dl.getAttribute("href"));

    document.getElementById("run-again").addEventListener("click", (ev) => {
      startRun(body.dataset.flow || "", body.dataset.input || "", document.getElementById("form-error"), ev.currentTarget);
    });
    document.addEventListener("click", (ev) => {
      const link = ev.target.closest(".seq-link");
      if (link) { inspect(Number(link.dataset.seq)); return; }
      const tab = ev.target.closest("[role=tab][data-tab]");
      if (tab) { showTab(tab.dataset.tab); return; }
      if (ev.target.closest("#graph")) { onGraphActivate(ev.target); return; }
      const row = ev.target.closest("#timeline-rows .row");
      if (row) { inspect(Number(row.dataset.seq)); return; }
      if (ev.target.closest("#follow")) {
        rowsEl().scrollTop = rowsEl().scrollHeight;
        ev.target.closest("#follow").hidden = true;
      }
    });
    document.addEventListener("change", (ev) => {
      if (ev.target.id === "filter-agent") setFilters({ agent: ev.target.value });
      if (ev.target.id === "filter-kind") setFilters({ kind: ev.target.value });
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

    if (!isFinal(S.status) || S.status === "interrupted") {
      setInterval(tick, 100);
      connect();
    }
  }

  if (body.dataset.page === "index") initIndex();
  if (body.dataset.page === "run") initRun();
})();
