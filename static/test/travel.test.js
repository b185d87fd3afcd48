import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { Element, add, go, reset } from "./dom.js";
import { away, hold, initTravel, step } from "../travel.js";

// The server, as GET /runs/:id/at/:seq answers: each request waits until the test answers it.
let requests;
globalThis.fetch = (url) => new Promise((resolve) => {
  requests.push({
    url,
    answer: (status, body) => resolve({ ok: status === 200, status, json: async () => body }),
  });
});

// settle lets the page take in the answers given so far.
const settle = () => new Promise((resolve) => setImmediate(resolve));

let head, stepped, applied, errLine;
beforeEach(() => {
  reset();
  go("/runs/r-1");
  requests = [];
  head = 10;
  stepped = [];
  applied = [];
  errLine = add(new Element("p", { id: "form-error", hidden: true }));
  initTravel("r-1", 0, () => head, (seq) => stepped.push(seq), (msg) => applied.push(msg));
});

// answer answers the oldest request still waiting.
async function answer(status = 200, body = { fragments: [] }) {
  requests.shift().answer(status, body);
  await settle();
}

test("a step back asks for the run as of that event and puts the page there", async () => {
  step(-1);
  assert.equal(requests[0].url, "/runs/r-1/at/9");
  await answer();
  assert.equal(away(), true);
  assert.deepEqual(stepped, [9]);
  assert.equal(location.search, "?at=9", "the address opens the page there again");
  assert.equal(document.body.dataset.at, "9");

  step(-Infinity);
  assert.equal(requests[0].url, "/runs/r-1/at/1");
  await answer();
  step(-1);
  assert.equal(requests[0].url, "/runs/r-1/at/1", "no step goes before the first event");
  await answer();
  step(Infinity);
  await answer();
  assert.equal(away(), false);
  assert.equal(location.search, "");
});

test("at the head, a step forward stays there without asking the server", () => {
  step(1);
  step(Infinity);
  assert.deepEqual(requests, []);
  assert.equal(away(), false);
  assert.deepEqual(stepped, [10, 10]);
});

test("steps taken before an answer go on from the step asked for, and older answers are dropped", async () => {
  step(-1);
  step(-1);
  step(-1);
  assert.deepEqual(requests.map((r) => r.url), ["/runs/r-1/at/9", "/runs/r-1/at/8", "/runs/r-1/at/7"]);
  await answer();
  await answer();
  assert.deepEqual(stepped, [], "the answers for 9 and 8 came after 7 was asked for");
  await answer();
  assert.deepEqual(stepped, [7]);
  step(Infinity);
  await answer();
});

test("live messages that arrive while returning to the head wait for its parts, then apply in order", async () => {
  step(-2);
  await answer();
  assert.equal(hold({ seq: 11 }), false, "away from the head, messages are not held: only the timeline takes them");
  step(Infinity);
  assert.equal(requests[0].url, "/runs/r-1/at/10");
  assert.equal(hold({ seq: 11 }), true);
  assert.equal(hold({ seq: 12 }), true);
  assert.deepEqual(applied, []);
  await answer();
  assert.deepEqual(applied, [{ seq: 11 }, { seq: 12 }]);
  assert.equal(hold({ seq: 13 }), false, "back at the head, messages apply at once");
  assert.equal(away(), false);
});

test("a step the server refuses says why, stays where it was and lets held messages through", async () => {
  step(-3);
  await answer();
  step(Infinity);
  hold({ seq: 11 });
  await answer(400, { error: "seq 10 is past the run's last event" });
  assert.equal(errLine.hidden, false);
  assert.equal(errLine.textContent, "time travel: seq 10 is past the run's last event");
  assert.equal(away(), true, "the page stays at event 7");
  assert.deepEqual(applied, [{ seq: 11 }]);
});

test("a page opened at an event starts there; one past the head starts at the head", () => {
  initTravel("r-1", 4, () => head, () => {}, () => {});
  assert.equal(away(), true);
  initTravel("r-1", 10, () => head, () => {}, () => {});
  assert.equal(away(), false);
});

test("a run without events does not travel", () => {
  head = 0;
  step(-1);
  step(Infinity);
  assert.deepEqual(requests, []);
});
