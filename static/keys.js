// The run page's keys: j/k and, in the timeline, the arrows, Home and End move the selection;
// elsewhere ←/→, Home and End travel in time; / searches, Enter inspects, Esc closes the drawer,
// then clears the filters.

import { setFilters } from "./filters.js";
import { closeDrawer, openDrawer } from "./layout.js";
import { S, showTab } from "./runstate.js";
import { inspect, move, onGraphActivate } from "./selection.js";
import { step } from "./travel.js";

// isTyping reports whether el takes text, where keys are the field's own.
export function isTyping(el) {
  return Boolean(el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName)));
}

// keyAction returns what key does outside fields, in the timeline's rows or elsewhere, as
// [what, n]: ["move", n] moves the selection n visible rows (-Infinity, Infinity: to the first,
// the last), ["step", n] travels n events in time (likewise), ["search"] focuses the search,
// ["activate"] activates the focused element or inspects the selection, ["escape"] closes the
// drawer or clears the filters; null for a key the page leaves alone.
export function keyAction(key, inTimeline) {
  switch (key) {
    case "j": return ["move", 1];
    case "k": return ["move", -1];
    case "ArrowDown": return inTimeline ? ["move", 1] : null;
    case "ArrowUp": return inTimeline ? ["move", -1] : null;
    // In the timeline Home and End move the selection; elsewhere they travel, like ← and →.
    case "Home": return inTimeline ? ["move", -Infinity] : ["step", -Infinity];
    case "End": return inTimeline ? ["move", Infinity] : ["step", Infinity];
    case "ArrowLeft": return ["step", -1];
    case "ArrowRight": return ["step", 1];
    case "/": return ["search"];
    case "Enter": case " ": return ["activate"];
    case "Escape": return ["escape"];
    default: return null;
  }
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
    // Esc closes the inspector's drawer first, then clears the filters.
    case "escape": if (!closeDrawer()) setFilters({ agent: "", kinds: [], failed: false, text: "" }); break;
  }
  ev.preventDefault();
}
