// The agent tree's view: pan and zoom, and the expansion of bundled transfers. The server draws
// the tree 1:1 in CSS pixels (graph.templ); this module only sizes the SVG to a zoom, scrolls the
// panel and toggles classes, so that the state survives the live updates that replace #graph.
//
// The tree opens fitted to the panel, whole. Below the zoom at which its smallest text is legible
// (#graph's data-min-zoom) it is an overview: every agent's box and name, names and badges drawn
// larger, the small print left out (app.css). Drag pans; Ctrl+wheel, the buttons and + / -
// zoom, 0 fits and 1 shows it 1:1 (what the keys mean is keymap.js's, handed to initGraph). A collapsed team's badge opens its card of agents, which the drawing grows to
// hold; Maximise gives the agents panel the whole page.

const LEAST = 0.4; // the furthest one may zoom out by hand, unless Fit went further
const FLOOR = 0.05; // the furthest Fit goes
const NAME_PX = 11.5; // an agent's name on screen in the overview (its font is 15px at 1:1)
const MOST = 2.5;
const STEP = 1.25; // one press of + or -

const V = {
  zoom: 1,
  fit: true,          // follow the panel's size and the tree's growth, as Fit does
  all: false,         // every bundle expanded
  open: new Set(),    // bundles expanded one by one, by data-bundle
  teams: new Set(),   // the collapsed team whose card is open (one at most), by data-team
};

const box = () => document.getElementById("graph-scroll");
const svg = () => box()?.querySelector("#graph svg");
const graph = () => document.getElementById("graph");

// legible is the least zoom at which the tree's text stays readable.
function legible() {
  return Number(graph()?.dataset.minZoom) || 1;
}

// size returns the tree's drawing size at 1:1, grown to hold the open team cards.
function size() {
  const g = graph();
  let w = Number(g?.dataset.width) || 0, h = Number(g?.dataset.height) || 0;
  for (const c of g?.querySelectorAll(".team-card.open") || []) {
    w = Math.max(w, Number(c.dataset.right) || 0);
    h = Math.max(h, Number(c.dataset.bottom) || 0);
  }
  return { w, h };
}

// fitZoom is the zoom that shows the whole tree in the panel, at most 1:1.
function fitZoom() {
  const b = box(), { w, h } = size();
  if (!b || !w || !h) return 1;
  // A hidden panel (another view tab shown) has no size: keep the zoom it had.
  if (!b.clientWidth || !b.clientHeight) return V.zoom;
  const pad = 16; // the panel's padding, both sides, and a pixel of rounding
  return Math.max(FLOOR, Math.min(1, (b.clientWidth - pad) / w, (b.clientHeight - pad) / h));
}

// apply sizes the SVG to zoom z and shows the level; below the legible zoom, as an overview.
function apply(z) {
  V.zoom = z;
  const s = svg(), { w, h } = size();
  if (s && w && h) {
    s.setAttribute("viewBox", `0 0 ${w} ${h}`);
    s.setAttribute("width", String(Math.floor(w * z)));
    s.setAttribute("height", String(Math.floor(h * z)));
  }
  const b = box();
  if (b) {
    const over = z < legible() - 1e-3;
    b.classList.toggle("overview", over);
    b.style.setProperty("--ov", over ? String(legible() / z) : "1");
    b.style.setProperty("--ovn", over ? String(Math.max(1, NAME_PX / (15 * z))) : "1");
  }
  const out = document.getElementById("zoom-level");
  if (out) out.textContent = Math.round(z * 100) + "%";
  requestAnimationFrame(drawMinimap);
  const el = graph();
  if (el) el.dataset.zoom = String(z);
}

// zoomAt zooms to z keeping the drawing's point under (cx, cy), client coordinates, in place.
function zoomAt(z, cx, cy) {
  const s = svg();
  if (!s) return;
  // Zooming out never zooms in, even from below the hand's limit (where Fit may have gone).
  z = Math.min(MOST, Math.max(Math.min(LEAST, legible(), fitZoom(), V.zoom), z));
  const before = s.getBoundingClientRect();
  const px = (cx - before.left) / V.zoom, py = (cy - before.top) / V.zoom;
  unfit();
  apply(z);
  const after = s.getBoundingClientRect();
  const b = box();
  b.scrollLeft += after.left + px * z - cx;
  b.scrollTop += after.top + py * z - cy;
}

// zoomBy zooms by factor k about the panel's centre.
function zoomBy(k) {
  const r = box().getBoundingClientRect();
  zoomAt(V.zoom * k, r.left + r.width / 2, r.top + r.height / 2);
}

// fit shows the tree as it opens: fitted, or at the legible zoom with its root in view. The
// panel's data-fit-for is the size the fit was for: where the panel is as tall as the tree (a
// narrow page), a fit changes that size and the ResizeObserver fits again, a few times, until a
// fit is for the size it leaves; the tree stands still from then on.
function fit() {
  V.fit = true;
  const b = box(), at = b ? b.clientWidth + "x" + b.clientHeight : "";
  apply(fitZoom());
  showRoot();
  if (b) b.dataset.fitFor = at;
}

// unfit notes that the reader moved or zoomed the tree: it stays as they leave it, and no fit is
// left to settle (data-fit-for goes with it).
function unfit() {
  V.fit = false;
  delete box()?.dataset.fitFor;
}

// reset shows the tree 1:1 with its root in view.
function reset() {
  unfit();
  apply(1);
  showRoot();
}

// showRoot scrolls the panel to the top, centred on the first root agent.
function showRoot() {
  const b = box(), s = svg();
  const root = s?.querySelector(".node .node-box");
  b.scrollTop = 0;
  if (!root) return;
  const r = root.getBoundingClientRect(), p = b.getBoundingClientRect();
  b.scrollLeft += r.left + r.width / 2 - (p.left + p.width / 2);
}

// MINI is the longer side of the minimap, in CSS pixels.
const MINI = 160;

// drawMinimap shows the whole tree in small, its agents' boxes and the part of it in view,
// while the tree is larger than the panel; it hides it otherwise.
function drawMinimap() {
  const m = document.getElementById("minimap"), b = box(), { w, h } = size();
  if (!m || !b || !w || !h) return;
  const big = w * V.zoom > b.clientWidth + 1 || h * V.zoom > b.clientHeight + 1;
  const show = big && b.checkVisibility();
  m.toggleAttribute("hidden", !show); // an SVG element has no hidden property
  if (!show) return;
  const k = MINI / Math.max(w, h);
  m.setAttribute("width", String(Math.round(w * k)));
  m.setAttribute("height", String(Math.round(h * k)));
  m.setAttribute("viewBox", `0 0 ${w} ${h}`);
  const ns = "http://www.w3.org/2000/svg";
  const rect = (x, y, rw, rh, cls) => {
    const r = document.createElementNS(ns, "rect");
    for (const [a, v] of [["x", x], ["y", y], ["width", rw], ["height", rh], ["class", cls]]) r.setAttribute(a, String(v));
    return r;
  };
  const parts = [];
  for (const n of graph().querySelectorAll("#graph svg > .node")) {
    const t = /translate\(([-\d.]+)[ ,]+([-\d.]+)\)/.exec(n.getAttribute("transform") || "");
    const r = n.querySelector(".node-box");
    if (t && r) parts.push(rect(t[1], t[2], r.getAttribute("width"), r.getAttribute("height"), "mini-node"));
  }
  // The panel's view, in the drawing's units.
  parts.push(rect(b.scrollLeft / V.zoom, b.scrollTop / V.zoom, b.clientWidth / V.zoom, b.clientHeight / V.zoom, "mini-view"));
  m.replaceChildren(...parts);
}

// panTo scrolls the panel so that the minimap's point under the pointer event ev is in the
// middle of the view.
function panTo(ev) {
  const m = document.getElementById("minimap"), b = box(), { w } = size();
  const r = m.getBoundingClientRect(), k = r.width / w;
  unfit();
  b.scrollLeft = (ev.clientX - r.left) / k * V.zoom - b.clientWidth / 2;
  b.scrollTop = (ev.clientY - r.top) / k * V.zoom - b.clientHeight / 2;
}

// refresh re-applies the view to a #graph the server just replaced.
function refresh() {
  // A fitted tree keeps fitting as it grows, its root in view; one the reader zoomed or moved
  // stays as they left it.
  showTeams();
  if (V.fit) fit(); else apply(V.zoom);
  showBundles();
}

// showTeams opens the cards of the teams the reader opened, and says so on their badges.
function showTeams() {
  const b = box();
  for (const c of b.querySelectorAll(".team-card")) c.classList.toggle("open", V.teams.has(c.dataset.team));
  for (const t of b.querySelectorAll(".team-badge")) t.setAttribute("aria-expanded", V.teams.has(t.dataset.team) ? "true" : "false");
}

// toggleTeam opens or closes the card of the team lead leads, closing any other: two cards may
// be laid out in the same free room (web.Graph's team layout), and would cover each other. A
// fitted tree fits again, card and all.
function toggleTeam(lead) {
  const open = !V.teams.has(lead);
  V.teams.clear();
  if (open) V.teams.add(lead);
  showTeams();
  if (V.fit) fit(); else apply(V.zoom);
}

// setMax gives the agents panel the whole page, or puts it back.
function setMax(on) {
  document.body.classList.toggle("tree-max", on);
  document.getElementById("tree-max")?.setAttribute("aria-pressed", on ? "true" : "false");
}

// showBundles marks the expanded bundles' elements and offers the toggle when there are any.
function showBundles() {
  const b = box();
  b.classList.toggle("expanded", V.all);
  for (const el of b.querySelectorAll("[data-bundle]")) el.classList.toggle("open", V.open.has(el.dataset.bundle));
  const btn = document.getElementById("expand-transfers");
  if (btn) {
    btn.hidden = !b.querySelector(".transfer-bundle");
    btn.setAttribute("aria-pressed", V.all ? "true" : "false");
  }
}

// activateGraph handles the activation (click, Enter, Space) of target if it is the tree's own
// control, a bundle's count, which expands that bundle; it reports whether it did.
export function activateGraph(target) {
  const team = target.closest && target.closest(".team-badge");
  if (team) {
    toggleTeam(team.dataset.team);
    return true;
  }
  const badge = target.closest && target.closest(".bundle-badge");
  if (!badge) return false;
  V.open.add(badge.dataset.bundle);
  showBundles();
  // Focus the newest of its edges, drawn where the count was.
  const edges = Array.from(box().querySelectorAll(".transfer.in-bundle")).filter((e) => e.dataset.bundle === badge.dataset.bundle);
  if (edges.length) edges[edges.length - 1].focus({ preventScroll: true });
  return true;
}

// setupPan pans the panel while the pointer drags it; a drag is not a click.
function setupPan(b) {
  let drag = null;
  b.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0 || ev.pointerType === "touch") return;
    if (ev.target === b && (ev.offsetX >= b.clientWidth || ev.offsetY >= b.clientHeight)) {
      unfit(); // a scrollbar: the browser moves the tree
      return;
    }
    drag = { x: ev.clientX, y: ev.clientY, left: b.scrollLeft, top: b.scrollTop, moved: false, id: ev.pointerId };
  });
  b.addEventListener("pointermove", (ev) => {
    if (!drag || ev.pointerId !== drag.id) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 5) return;
    if (!drag.moved) {
      drag.moved = true;
      unfit();
      b.classList.add("panning");
      b.setPointerCapture(ev.pointerId);
    }
    b.scrollLeft = drag.left - dx;
    b.scrollTop = drag.top - dy;
  });
  const end = () => {
    if (!drag) return;
    if (drag.moved) {
      b.classList.remove("panning");
      // The click that ends a drag selects nothing.
      const swallow = (e) => { e.stopPropagation(); e.preventDefault(); };
      b.addEventListener("click", swallow, { capture: true, once: true });
      setTimeout(() => b.removeEventListener("click", swallow, { capture: true }), 0);
    }
    drag = null;
  };
  b.addEventListener("pointerup", end);
  b.addEventListener("pointercancel", end);
  b.addEventListener("wheel", (ev) => {
    if (!ev.ctrlKey && !ev.metaKey) { unfit(); return; } // a plain wheel scrolls
    ev.preventDefault();
    zoomAt(V.zoom * Math.exp(-ev.deltaY * 0.002), ev.clientX, ev.clientY);
  }, { passive: false });
}

// onKey zooms the focused tree as keyAction (keymap.js's) says: in, out, Fit (0), 1:1 (1).
function onKey(ev, keyAction) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (!ev.target.closest || !ev.target.closest("#graph-scroll, .graph-zoom")) return;
  if (ev.key.startsWith("Arrow") || ev.key.startsWith("Page")) unfit(); // the browser scrolls
  const [what, n] = keyAction(ev.key, false) || [];
  if (what === "zoom") {
    if (n === 0) fit(); else zoomBy(n > 0 ? STEP : 1 / STEP);
  } else if (what === "actual") reset();
  else return;
  ev.preventDefault();
}

// initGraph wires the tree's view; the run page and the report call it once, with keymap.js's
// keyAction (handed in: the report inlines this module, which imports nothing).
export function initGraph(keyAction) {
  const b = box();
  if (!b) return;
  V.all = b.classList.contains("expanded"); // a report opens with every transfer drawn
  fit();
  showBundles();
  setupPan(b);
  document.getElementById("zoom-in")?.addEventListener("click", () => zoomBy(STEP));
  document.getElementById("zoom-out")?.addEventListener("click", () => zoomBy(1 / STEP));
  document.getElementById("zoom-fit")?.addEventListener("click", fit);
  document.getElementById("zoom-reset")?.addEventListener("click", reset);
  document.getElementById("tree-max")?.addEventListener("click", () => setMax(!document.body.classList.contains("tree-max")));
  document.getElementById("expand-transfers")?.addEventListener("click", () => {
    V.all = !V.all;
    if (!V.all) V.open.clear();
    showBundles();
  });
  document.addEventListener("keydown", (ev) => onKey(ev, keyAction));
  // Live updates and time travel replace #graph: keep the view.
  new MutationObserver(refresh).observe(b, { childList: true });
  // A panel that changes size keeps a fitted tree fitted.
  new ResizeObserver(() => { if (V.fit) fit(); else drawMinimap(); }).observe(b);
  b.addEventListener("scroll", () => requestAnimationFrame(drawMinimap), { passive: true });
  const mini = document.getElementById("minimap");
  mini?.addEventListener("pointerdown", (ev) => {
    ev.preventDefault();
    mini.setPointerCapture(ev.pointerId);
    panTo(ev);
    const move = (e) => panTo(e);
    mini.addEventListener("pointermove", move);
    mini.addEventListener("pointerup", () => mini.removeEventListener("pointermove", move), { once: true });
  });
}
