// The run page's layout: splitters that resize its panels (pointer or keys, remembered in
// localStorage, reset by a double-click), and on a narrow screen the inspector's drawer.

const STEP = 2;     // percent per arrow key press
const MIN = 20, MAX = 80;
const key = (id) => "baton." + id;

// initLayout wires the splitters and the drawer's close button.
export function initLayout() {
  for (const el of document.querySelectorAll(".splitter[role=separator]")) setupSplitter(el);
  const close = document.getElementById("drawer-close");
  if (close) close.addEventListener("click", closeDrawer);
}

// setupSplitter makes separator el move the boundary it stands on. Its value, in percent of the
// run page's main area, is the share of the panels before it; it is set as the CSS variable
// --{el.id} on that area.
function setupSplitter(el) {
  const vertical = el.getAttribute("aria-orientation") === "vertical";
  const area = el.parentElement;
  const set = (v, keep) => {
    v = Math.round(Math.max(MIN, Math.min(MAX, v)));
    el.setAttribute("aria-valuenow", String(v));
    area.style.setProperty("--" + el.id, v + "%");
    if (keep) localStorage.setItem(key(el.id), String(v));
  };
  const saved = Number(localStorage.getItem(key(el.id)));
  if (saved) set(saved, false);

  el.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0) return;
    ev.preventDefault();
    el.setPointerCapture(ev.pointerId);
    el.classList.add("dragging");
    const box = area.getBoundingClientRect();
    const at = (e) => vertical
      ? (e.clientX - box.left) / box.width * 100
      : (e.clientY - box.top) / box.height * 100;
    const move = (e) => set(at(e), false);
    const up = (e) => {
      set(at(e), true);
      el.classList.remove("dragging");
      el.removeEventListener("pointermove", move);
      el.removeEventListener("pointerup", up);
      el.removeEventListener("pointercancel", up);
    };
    el.addEventListener("pointermove", move);
    el.addEventListener("pointerup", up);
    el.addEventListener("pointercancel", up);
  });
  el.addEventListener("dblclick", () => {
    localStorage.removeItem(key(el.id));
    area.style.removeProperty("--" + el.id);
    el.setAttribute("aria-valuenow", el.dataset.default || "50");
  });
  el.addEventListener("keydown", (ev) => {
    const now = Number(el.getAttribute("aria-valuenow"));
    const less = vertical ? "ArrowLeft" : "ArrowUp", more = vertical ? "ArrowRight" : "ArrowDown";
    let v;
    switch (ev.key) {
      case less: v = now - STEP; break;
      case more: v = now + STEP; break;
      case "Home": v = MIN; break;
      case "End": v = MAX; break;
      default: return;
    }
    // The page's own keys (time travel, the timeline's) must not see it.
    ev.preventDefault();
    ev.stopPropagation();
    set(v, true);
  });
}

// openDrawer shows the inspector; only a narrow screen draws it as a drawer (app.css).
export function openDrawer() { document.body.classList.add("drawer-open"); }

// closeDrawer hides the inspector's drawer; it reports whether it was open on a narrow screen,
// where Esc closes it before doing anything else.
export function closeDrawer() {
  const open = document.body.classList.contains("drawer-open") && narrow();
  document.body.classList.remove("drawer-open");
  return open;
}

const narrow = () => window.matchMedia("(max-width: 900px)").matches;
