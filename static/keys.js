// The run page's keys: j/k and, in the timeline, the arrows, Home and End move the selection;
// elsewhere ←/→, Home and End travel in time; / searches, Enter inspects, Esc closes the drawer,
// then clears the filters. What each key means is keymap.js's, which the report shares.

import { setFilters } from "./filters.js";
import { closeDrawer, openDrawer } from "./layout.js";
import { S, showTab } from "./runstate.js";
import { inspect, move, onGraphActivate } from "./selection.js";
import { isTyping, keyAction, zoomView } from "./keymap.js";
import { step } from "./travel.js";

// onKey handles the page's keys, outside fields (Esc leaves one).
export function onKey(ev) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (isTyping(ev.target)) {
    if (ev.key === "Escape") ev.target.blur();
    return;
  }
  const inGraph = ev.target.closest && ev.target.closest("#graph");
  const inTimeline = ev.target.closest && ev.target.closest("#timeline-rows");
  const action = keyAction(ev.key, Boolean(inTimeline));
  if (!action) return;
  const [what, n] = action;
  switch (what) {
    case "move": move(n); break;
    case "step": step(n); break;
    case "search": {
      const t = document.getElementById("filter-text");
      if (S.tab !== "timeline") showTab("timeline");
      if (t) t.focus();
      break;
    }
    case "activate":
      if (inGraph && onGraphActivate(ev.target)) break;
      if (ev.key === "Enter" && !ev.target.closest("button, a") && S.selected) { openDrawer(); inspect(S.selected); break; }
      return;
    // A time view zooms itself (sequence.js, waterfall.js listen); the tree has its own keys.
    case "zoom": if (!zoomView(ev.target, n)) return; break;
    case "actual": return; // the tree's own (graph.js)
    // Esc closes the inspector's drawer first, then clears the filters.
    case "escape": if (!closeDrawer()) setFilters({ agent: "", kinds: [], failed: false, text: "" }); break;
  }
  ev.preventDefault();
}
