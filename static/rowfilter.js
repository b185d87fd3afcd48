// The timeline's filters as the run page (filters.js) and the report (report.js) both apply them:
// filters f are {agent, kinds, failed, text}; which rows pass them, the inputs that show them, the
// count and "no match" under them, and the filters that show a hidden row. It keeps no state and
// imports nothing, so that the report can inline it (templates.reportScript).

// searchText is f's search as matches takes it: trimmed and lower-cased.
export const searchText = (f) => f.text.trim().toLowerCase();

// matches reports whether row passes f; text is searchText(f), made once for a pass over rows.
// Rows carry their whole content, lower-cased, in data-search: a search reads attributes, never
// layout, so it stays fast over 10,000 rows. A message that repeats a call's reply is folded into
// that call's row unless messages are asked for by kind.
export function matches(row, f, text) {
  if (f.agent && row.dataset.agent !== f.agent) return false;
  if (f.kinds.length ? !f.kinds.includes(row.dataset.group) : row.dataset.echoOf) return false;
  if (f.failed && row.dataset.failed !== "true") return false;
  if (text && !(row.dataset.search || "").includes(text)) return false;
  return true;
}

export const isFiltering = (f) => Boolean(f.agent || f.kinds.length || f.failed || f.text);

// hideUnmatched hides each of rows that does not pass f, shows the others and returns how many
// it shows.
export function hideUnmatched(rows, f) {
  const text = searchText(f);
  let shown = 0;
  for (const r of rows) {
    r.hidden = !matches(r, f, text);
    if (!r.hidden) shown++;
  }
  return shown;
}

// MARKS is the most search matches marked at once: a search as broad as "a" in a long run
// marks the first of them.
const MARKS = 2000;

// markMatches marks f's search where it shows in the shown rows of list (their summaries and
// agent names), with the CSS Custom Highlight API: no markup is added, so rows stay as the server
// sent them. It returns how many it marked; none where the browser lacks the API.
export function markMatches(list, f) {
  const marks = globalThis.CSS && globalThis.CSS.highlights;
  if (!marks || typeof Highlight === "undefined") return 0;
  marks.delete("search");
  const text = searchText(f);
  if (!text || !list) return 0;
  const ranges = [];
  for (const el of list.querySelectorAll(".row:not([hidden]) .row-summary, .row:not([hidden]) .chip-text")) {
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n && ranges.length < MARKS; n = walk.nextNode()) {
      const lower = n.data.toLowerCase();
      for (let i = lower.indexOf(text); i >= 0 && ranges.length < MARKS; i = lower.indexOf(text, i + text.length)) {
        const r = new Range();
        r.setStart(n, i);
        r.setEnd(n, i + text.length);
        ranges.push(r);
      }
    }
    if (ranges.length >= MARKS) break;
  }
  marks.set("search", new Highlight(...ranges));
  return ranges.length;
}

// revealing returns the filters that show row (an element, in the list or not), or null when f
// already does: a jump to a row clears the filters that hide it.
export function revealing(row, f) {
  if (!row || matches(row, f, searchText(f))) return null;
  return { agent: "", kinds: row.dataset.echoOf ? ["message"] : [], failed: false, text: "" };
}

// syncInputs shows f in the filter inputs, adding to the agent select an agent it lacks
// (one filtered on from the address or an agent summary before the select knew it).
export function syncInputs(f) {
  const a = document.getElementById("filter-agent");
  if (a) {
    if (f.agent && !Array.from(a.options).some((o) => o.value === f.agent)) {
      const o = document.createElement("option");
      o.value = f.agent;
      o.textContent = f.agent;
      a.appendChild(o);
    }
    a.value = f.agent;
  }
  for (const c of document.querySelectorAll("#filter-kind input")) c.checked = f.kinds.includes(c.value);
  const failed = document.getElementById("filter-failed");
  if (failed) failed.checked = f.failed;
  const t = document.getElementById("filter-text");
  if (t && t.value !== f.text) t.value = f.text;
}

// showCount says how many (shown) of total events pass f, and says so plainly when none do.
export function showCount(f, shown, total) {
  const count = document.getElementById("filter-count");
  const empty = document.getElementById("filter-empty");
  const on = isFiltering(f);
  if (count) count.textContent = on ? shown + " of " + total + " events" : "";
  if (empty) {
    empty.hidden = !on || shown > 0;
    const q = f.text.trim();
    empty.textContent = q
      ? "No event matches \u201c" + q + "\u201d with these filters."
      : "No event matches these filters.";
  }
}

// watchInputs calls set with the change each edit of the filters' inputs makes to them.
export function watchInputs(set) {
  document.addEventListener("change", (ev) => {
    const t = ev.target;
    if (t.id === "filter-agent") set({ agent: t.value });
    else if (t.closest && t.closest("#filter-kind")) {
      set({ kinds: Array.from(document.querySelectorAll("#filter-kind input:checked")).map((c) => c.value) });
    } else if (t.id === "filter-failed") set({ failed: t.checked });
  });
  document.addEventListener("input", (ev) => {
    if (ev.target.id === "filter-text") set({ text: ev.target.value });
  });
}
