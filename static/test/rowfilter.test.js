import assert from "node:assert/strict";
import { beforeEach, describe, test } from "node:test";

import { Element, add, reset, select } from "./dom.js";
import { hideUnmatched, isFiltering, matches, revealing, searchText, showCount, syncInputs } from "../rowfilter.js";

const none = { agent: "", kinds: [], failed: false, text: "" };
const filters = (f) => ({ ...none, ...f });

// row is a timeline row as the server renders it: its data-* attributes.
const row = (seq, data) => ({ dataset: { seq: String(seq), ...data }, hidden: false });

const rows = () => [
  row(1, { agent: "supervisor", group: "agent", search: "run.started supervisor" }),
  row(2, { agent: "supervisor", group: "model", search: "what is 2 + 2? ask math_agent" }),
  row(3, { agent: "supervisor", group: "message", echoOf: "2", search: "ask math_agent" }),
  row(4, { agent: "supervisor", group: "transfer", search: "transfer_to_agent math_agent" }),
  row(5, { agent: "math_agent", group: "tool", failed: "true", search: "add: division by zero" }),
  row(6, { agent: "math_agent", group: "model", search: "the answer is 4" }),
];

const seqs = (rs) => rs.filter((r) => !r.hidden).map((r) => Number(r.dataset.seq));

describe("matches", () => {
  for (const [name, f, want] of [
    ["no filters: every row but a message folded into its call", none, [1, 2, 4, 5, 6]],
    ["agent", filters({ agent: "math_agent" }), [5, 6]],
    ["one kind", filters({ kinds: ["model"] }), [2, 6]],
    ["several kinds at once", filters({ kinds: ["transfer", "tool"] }), [4, 5]],
    ["the message kind shows the folded messages", filters({ kinds: ["message"] }), [3]],
    ["failed only", filters({ failed: true }), [5]],
    ["search, case and spaces aside", filters({ text: "  ASK Math_Agent " }), [2]],
    ["search in a folded message only when messages are asked for", filters({ kinds: ["message"], text: "ask" }), [3]],
    ["filters narrow together", filters({ agent: "supervisor", kinds: ["model", "transfer"], text: "math" }), [2, 4]],
    ["a search nothing matches", filters({ text: "no such text" }), []],
  ]) {
    test(name, () => {
      const rs = rows();
      const text = searchText(f);
      assert.deepEqual(rs.filter((r) => matches(r, f, text)).map((r) => Number(r.dataset.seq)), want);
    });
  }

  test("a row without search text matches no search", () => {
    assert.equal(matches(row(7, { agent: "a", group: "agent" }), filters({ text: "a" }), "a"), false);
  });
});

test("hideUnmatched hides the rows that do not pass, shows the others and counts them", () => {
  const rs = rows();
  rs[3].hidden = true; // shown again: it passes
  assert.equal(hideUnmatched(rs, filters({ agent: "supervisor" })), 3);
  assert.deepEqual(seqs(rs), [1, 2, 4]);
  assert.equal(hideUnmatched(rs, none), 5);
  assert.deepEqual(seqs(rs), [1, 2, 4, 5, 6]);
});

test("isFiltering is true when any filter is set", () => {
  assert.equal(isFiltering(none), false);
  for (const f of [{ agent: "a" }, { kinds: ["tool"] }, { failed: true }, { text: "x" }]) {
    assert.equal(isFiltering(filters(f)), true, JSON.stringify(f));
  }
});

describe("revealing", () => {
  test("nothing to clear for a row the filters show, or no row", () => {
    assert.equal(revealing(rows()[1], filters({ kinds: ["model"] })), null);
    assert.equal(revealing(null, filters({ kinds: ["model"] })), null);
  });
  test("a hidden row clears every filter", () => {
    assert.deepEqual(revealing(rows()[4], filters({ agent: "supervisor", kinds: ["model"], text: "ask" })), none);
  });
  test("a folded message is shown by asking for messages", () => {
    assert.deepEqual(revealing(rows()[2], none), filters({ kinds: ["message"] }));
  });
});

describe("showCount", () => {
  let count, empty;
  beforeEach(() => {
    reset();
    count = add(new Element("span", { id: "filter-count" }));
    empty = add(new Element("p", { id: "filter-empty", hidden: true }));
  });
  test("says nothing without filters", () => {
    showCount(none, 6, 6);
    assert.equal(count.textContent, "");
    assert.equal(empty.hidden, true);
  });
  test("counts the matches", () => {
    showCount(filters({ kinds: ["model"] }), 2, 6);
    assert.equal(count.textContent, "2 of 6 events");
    assert.equal(empty.hidden, true);
  });
  test("says plainly when nothing matches, quoting the search", () => {
    showCount(filters({ text: " zero " }), 0, 6);
    assert.equal(count.textContent, "0 of 6 events");
    assert.equal(empty.hidden, false);
    assert.equal(empty.textContent, "No event matches \u201czero\u201d with these filters.");
    showCount(filters({ failed: true }), 0, 6);
    assert.equal(empty.textContent, "No event matches these filters.");
  });
});

test("syncInputs shows the filters in the inputs, adding an agent the select lacks", () => {
  reset();
  const agent = add(new Element("select", { id: "filter-agent" }));
  agent.append(new Element("option", { value: "" }), new Element("option", { value: "supervisor" }));
  const kinds = ["model", "tool", "transfer"].map((k) => new Element("input", { value: k, checked: k === "tool" }));
  select("#filter-kind input", kinds);
  const failed = add(new Element("input", { id: "filter-failed" }));
  const text = add(new Element("input", { id: "filter-text", value: "old" }));

  syncInputs(filters({ agent: "math_agent", kinds: ["model", "transfer"], failed: true, text: "sum" }));
  assert.deepEqual(agent.options.map((o) => o.value), ["", "supervisor", "math_agent"]);
  assert.equal(agent.options[2].textContent, "math_agent");
  assert.equal(agent.value, "math_agent");
  assert.deepEqual(kinds.map((k) => k.checked), [true, false, true]);
  assert.equal(failed.checked, true);
  assert.equal(text.value, "sum");

  syncInputs(filters({ agent: "supervisor" }));
  assert.equal(agent.options.length, 3, "an agent the select has is not added again");
  assert.equal(agent.value, "supervisor");
  assert.deepEqual(kinds.map((k) => k.checked), [false, false, false]);
  assert.equal(text.value, "");
});
