import assert from "node:assert/strict";
import { test } from "node:test";

import "./dom.js";
import { moveIndex } from "../selection.js";

// The visible rows' seqs: the filters hide the others.
const seqs = [2, 4, 7, 9];

for (const [name, selected, dir, want] of [
  ["j goes to the next row", 4, 1, 2],
  ["k goes to the previous row", 7, -1, 1],
  ["j stays on the last row", 9, 1, 3],
  ["k stays on the first row", 2, -1, 0],
  ["a jump of several rows stops at the edge", 4, 10, 3],
  ["the first row (Home)", 7, -Infinity, 0],
  ["the last row (End)", 4, Infinity, 3],
  ["Home and End whatever is selected", 0, Infinity, 3],
  ["with nothing selected, j starts at the first row", 0, 1, 0],
  ["with nothing selected, k starts at the last row", 0, -1, 3],
  ["with a hidden row selected, j goes to the nearest row after it", 5, 1, 2],
  ["with a hidden row selected after every visible one, j goes to the first", 12, 1, 0],
]) {
  test(name, () => assert.equal(moveIndex(seqs, selected, dir), want));
}

test("a single visible row is every move's answer", () => {
  for (const dir of [1, -1, Infinity, -Infinity]) assert.equal(moveIndex([5], 5, dir), 0, String(dir));
});
