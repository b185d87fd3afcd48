// What each key means on the run page and in the report, alike: a table with no imports, so that
// the report (which inlines the modules it imports, templates.reportScript) reads the same one.

// isTyping reports whether el takes text, where keys are the field's own.
export function isTyping(el) {
  return Boolean(el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName)));
}

// keyAction returns what key does outside fields, in the timeline's rows or elsewhere, as
// [what, n]: ["move", n] moves the selection n visible rows (-Infinity, Infinity: to the first,
// the last), ["step", n] travels n events in time (likewise), ["search"] focuses the search,
// ["activate"] activates the focused element or inspects the selection, ["escape"] closes the
// drawer or clears the filters, ["zoom", n] zooms the focused view (the tree, Sequence,
// Waterfall) in (1), out (-1) or to fit (0: Fit in every view, as "reset zoom" fits in most
// tools), ["actual"] shows the tree 1:1 (its own: the time views have no natural size); null for
// a key the page leaves alone.
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
    case "+": case "=": return ["zoom", 1];
    case "-": case "_": return ["zoom", -1];
    case "0": return ["zoom", 0];
    case "1": return ["actual"];
    default: return null;
  }
}

// zoomView asks the time view that holds el (its [data-zoom-view] panel) to zoom by n (see
// keyAction): a "baton:zoom" event the view listens for. False when el is in none.
export function zoomView(el, n) {
  const view = el && el.closest && el.closest("[data-zoom-view]");
  if (!view) return false;
  view.dispatchEvent(new CustomEvent("baton:zoom", { detail: n }));
  return true;
}
