// The run page's keys: j/k and, in the timeline, the arrows, Home and End move the selection;
// elsewhere ←/→, Home and End travel in time; / searches, Enter inspects, Esc closes the drawer,
// then clears the filters.

import { setFilters } from "./filters.js";
import { closeDrawer, openDrawer } from "./layout.js";
import { S, showTab } from "./runstate.js";
import { inspect, move, onGraphActivate } from "./selection.js";
import { step } from "./travel.js";

// isTyping reports whether el takes text, where keys are the field's own.
function isTyping(el) {
  return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
}

// onKey handles the page's keys, outside fields (Esc leaves one).
export function onKey(ev) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (isTyping(ev.target)) {
    if (ev.key === "Escape") ev.target.blur();
    return;
  }
  const inGraph = ev.target.closest && ev.target.closest("#graph");
  const inTimeline = ev.target.closest && ev.target.closest("#timeline-rows");
  switch (ev.key) {
    case "j": move(1); break;
    case "k": move(-1); break;
    case "ArrowDown": if (!inTimeline) return; move(1); break;
    case "ArrowUp": if (!inTimeline) return; move(-1); break;
    // In the timeline Home and End move the selection; elsewhere they travel, like ← and →.
    case "Home": if (inTimeline) move(-Infinity); else step(-Infinity); break;
    case "End": if (inTimeline) move(Infinity); else step(Infinity); break;
    case "ArrowLeft": step(-1); break;
    case "ArrowRight": step(1); break;
    case "/": {
      const t = document.getElementById("filter-text");
      if (S.tab !== "timeline") showTab("timeline");
      if (t) t.focus();
      break;
    }
    case "Enter":
    case " ":
      if (inGraph && onGraphActivate(ev.target)) break;
      if (ev.key === "Enter" && !ev.target.closest("button, a") && S.selected) { openDrawer(); inspect(S.selected); break; }
      return;
    // Esc closes the inspector's drawer first, then clears the filters.
    case "Escape": if (!closeDrawer()) setFilters({ agent: "", kinds: [], failed: false, text: "" }); break;
    default: return;
  }
  ev.preventDefault();
}
