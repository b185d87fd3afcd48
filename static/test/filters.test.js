import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import "./dom.js";
import { countLive, filterQuery } from "../filters.js";
import { S } from "../runstate.js";

beforeEach(() => Object.assign(S, { agent: "", kinds: [], failed: false, text: "", counts: null }));

test("filterQuery: the filters as GET /runs/:id/rows takes them, only those set", () => {
  assert.equal(filterQuery().toString(), "");
  Object.assign(S, { agent: "math agent", kinds: ["tool", "transfer"], failed: true, text: "a&b" });
  assert.equal(filterQuery().toString(), "agent=math+agent&kind=tool%2Ctransfer&failed=1&q=a%26b");
});

test("filterQuery: a search of spaces only is no search", () => {
  S.text = "   ";
  assert.equal(filterQuery().has("q"), false);
});

test("countLive adds the rows that arrived after the server's count, and the shown ones to its matches", () => {
  S.counts = { matches: 3, events: 10, head: 10 };
  const row = (seq, hidden) => ({ dataset: { seq: String(seq) }, hidden });
  // Row 9 was counted already (it is at or before the count's head); 11 and 13 are new, and
  // only 11 passes the filters.
  countLive([row(9, false), row(11, false), row(13, true)]);
  assert.deepEqual(S.counts, { matches: 4, events: 12, head: 13 });
  countLive([row(13, false)]);
  assert.deepEqual(S.counts, { matches: 4, events: 12, head: 13 }, "a row counted once is not counted again");
});

test("countLive without a server's count (the page holds every row) counts nothing", () => {
  countLive([{ dataset: { seq: "1" }, hidden: false }]);
  assert.equal(S.counts, null);
});
