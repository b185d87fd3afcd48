import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { Element, add, go, select } from "./dom.js";

// The run page as the server renders it: runstate.js reads the body and the slider as it loads.
Object.assign(document.body.dataset, { runId: "r-1", seq: "42", status: "failed" });
add(new Element("input", { id: "pace", value: "600" }));
go("/runs/r-1");
const { S, isFinal, readHash, showTab, writeHash } = await import("../runstate.js");

const blank = { selected: 0, agent: "", kinds: [], failed: false, text: "", tab: "timeline" };
const state = () => ({ selected: S.selected, agent: S.agent, kinds: S.kinds, failed: S.failed, text: S.text, tab: S.tab });

beforeEach(() => {
  Object.assign(S, blank);
  go("/runs/r-1");
});

test("the state starts from the page the server rendered", () => {
  assert.equal(S.runId, "r-1");
  assert.equal(S.seq, 42);
  assert.equal(S.status, "failed");
  assert.equal(S.paceMS, 600);
});

test("isFinal: every status but running (or none) is final", () => {
  for (const s of ["completed", "failed", "interrupted", "canceled"]) assert.equal(isFinal(s), true, s);
  for (const s of ["running", ""]) assert.equal(isFinal(s), false, JSON.stringify(s));
});

test("readHash reads the filters, the selection and the tab from the address", () => {
  go("/runs/r-1#seq=12&agent=math_agent&kind=transfer,tool&failed=1&q=two%20words&tab=session");
  readHash();
  assert.deepEqual(state(), { selected: 12, agent: "math_agent", kinds: ["transfer", "tool"], failed: true, text: "two words", tab: "session" });
});

test("readHash takes what it does not know as unset", () => {
  go("/runs/r-1#seq=x&kind=,&failed=yes&tab=elsewhere");
  readHash();
  assert.deepEqual(state(), blank);
});

test("writeHash keeps only what is set, and readHash reads it back", () => {
  Object.assign(S, { selected: 7, kinds: ["model"], text: "a&b=c #d" });
  writeHash();
  assert.equal(location.hash, "#seq=7&kind=model&q=a%26b%3Dc+%23d");
  Object.assign(S, blank);
  readHash();
  assert.deepEqual(state(), { ...blank, selected: 7, kinds: ["model"], text: "a&b=c #d" });
});

test("writeHash with nothing set leaves the address without a hash, its query kept", () => {
  go("/runs/r-1?at=5#seq=3");
  writeHash();
  assert.equal(location.hash, "");
  assert.equal(location.search, "?at=5");
});

test("showTab shows one panel, marks its tab and keeps it in the address", () => {
  const panels = { timeline: add(new Element("div", { id: "timeline-panel" })), session: add(new Element("div", { id: "session-panel" })) };
  const tabs = Object.keys(panels).map((name) => {
    const b = new Element("button", { dataset: { tab: name } });
    b.setAttribute("aria-controls", name + "-panel");
    return b;
  });
  select("[role=tab][data-tab]", tabs);

  showTab("session");
  assert.deepEqual(tabs.map((b) => b.getAttribute("aria-selected")), ["false", "true"]);
  assert.deepEqual([panels.timeline.hidden, panels.session.hidden], [true, false]);
  assert.equal(location.hash, "#tab=session");

  showTab("timeline");
  assert.deepEqual([panels.timeline.hidden, panels.session.hidden], [false, true]);
  assert.equal(location.hash, "");
});
