import assert from "node:assert/strict";
import { beforeEach, describe, test } from "node:test";

import { reset } from "./dom.js";
import { Q, barLabel, barLabelIn, firstAtLeast, layout, take, timeAt } from "../sequence.js";

// A supervisor run as the Sequence view sees it, one entry per event (seq = index + 1, t in ms):
// what starts or ends there. A burst (events 7 and 8, half a microsecond apart) and long model
// calls (events 2-3 and 9-10) test the time axis; events that draw nothing (4, 14) are on the
// axis only while they are the head.
const LANES = [{ agent: "supervisor", colour: 0, depth: 0 }, { agent: "math_agent", colour: 1, depth: 1 }];
const EVENTS = [
  { t: 0, start: { id: 1, lane: 0, kind: "agent" } },
  { t: 1, start: { id: 2, lane: 0, kind: "model" } },
  { t: 900, end: { id: 2, tokens: 120 } },
  { t: 900.5 },
  { t: 901, end: { id: 1 }, arrow: { id: 1, kind: "transfer", order: 1, from: 0, to: 1 } },
  { t: 901.001, start: { id: 3, lane: 1, kind: "agent" } },
  { t: 902, start: { id: 4, lane: 1, kind: "tool", name: "add" } },
  { t: 902.0005, end: { id: 4, failed: true } },
  { t: 903, start: { id: 5, lane: 1, kind: "model" } },
  { t: 2000, end: { id: 5, tokens: 80 } },
  { t: 2001, end: { id: 3 }, arrow: { id: 2, kind: "transfer", order: 2, from: 1, to: 0 } },
  { t: 2001.5, start: { id: 6, lane: 0, kind: "agent" } },
  { t: 2002, start: { id: 7, lane: 0, kind: "model" } },
  { t: 2500 },
];

// state returns the run as of event n: its lanes, and its bars and arrows by id, as
// web.SeqBar and web.SeqArrow write them ([id, lane, kind, name, seq, end, t0, t1, tokens,
// failed, parent] and [id, kind, order, from, to, seq, t, mode, failed]).
function state(n) {
  const bars = new Map(), arrows = new Map();
  EVENTS.slice(0, n).forEach((e, i) => {
    const seq = i + 1;
    if (e.start) bars.set(e.start.id, [e.start.id, e.start.lane, e.start.kind, e.start.name || "", seq, 0, e.t, 0, 0, false, 0]);
    if (e.end) {
      const b = bars.get(e.end.id).slice();
      Object.assign(b, { 5: seq, 7: e.t, 8: e.end.tokens || 0, 9: Boolean(e.end.failed) });
      bars.set(e.end.id, b);
    }
    if (e.arrow) {
      const a = e.arrow;
      arrows.set(a.id, [a.id, a.kind, a.order, a.from, a.to, seq, e.t, "llm", false]);
    }
  });
  const lanes = LANES.filter((_, i) => [...bars.values()].some((b) => b[1] >= i));
  return { lanes, bars, arrows, head: n, now: EVENTS[n - 1].t };
}

// full is the whole Sequence as of event n; delta the one a live update from m to n sends: the
// bars new or changed since m, the arrows new since m.
function full(n) {
  const s = state(n);
  return { full: true, head: n, now: s.now, lanes: s.lanes, bars: [...s.bars.values()], arrows: [...s.arrows.values()] };
}
function delta(m, n) {
  const before = state(m), after = state(n);
  const bars = [...after.bars.values()].filter((b) => JSON.stringify(before.bars.get(b[0])) !== JSON.stringify(b));
  const arrows = [...after.arrows.values()].filter((a) => !before.arrows.has(a[0]));
  return { full: false, head: n, now: after.now, lanes: after.lanes, bars, arrows };
}

// give hands s to the view as the #seq-data fragment would.
const give = (s) => take({ dataset: { json: JSON.stringify(s) } });

// index is what a redraw reads: the time axis, the bars by lane and kind with their reach, the
// arrows in time order.
function index() {
  return {
    ticks: Q.ticks.seqs.map((seq, i) => [seq, Q.ticks.xs[i], Q.ticks.ts[i]]),
    groups: Q.order.map((k) => {
      const g = Q.groups.get(k);
      return [k, g.bars.map((b) => [b.id, b.a, b.z, b.end, b.failed]), g.a, g.reach];
    }),
    arrows: Q.sorted.map((a) => [a.id, a.x]),
  };
}

// assertRedrawn checks that the steps the view notes as changed (a redraw that shows any of them
// draws again) cover every bar and arrow of delta d, and the head, where open bars end.
function assertRedrawn(d) {
  const c = Q.changed;
  assert.ok(c, "a delta notes what it changed");
  const step = (seq) => Q.ticks.xs[Q.ticks.index.get(seq)];
  const head = step(Q.head);
  const within = (what, lo, hi) => assert.ok(c.lo <= lo && hi <= c.hi, what + " [" + lo + ", " + hi + "] outside the changed steps [" + c.lo + ", " + c.hi + "]");
  for (const [id, , , , seq, end] of d.bars) within("bar " + id, step(seq), end ? step(end) : head);
  for (const [id, , , , , seq] of d.arrows) within("arrow " + id, step(seq), step(seq));
  within("the head", head, head);
}

// laidOut returns the index of a layout of the whole run as of event n.
function laidOut(n) {
  give(full(n));
  layout();
  return index();
}

beforeEach(reset);

describe("a live delta leaves the index as a layout of the whole run would", () => {
  for (const [name, from, steps] of [
    ["one event at a time", 1, [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]],
    ["several events at a time", 2, [4, 7, 10, 14]],
    ["from an event that draws nothing", 4, [6, 13]],
    ["from the middle of a call", 9, [10, 14]],
  ]) {
    test(name, () => {
      const want = new Map(steps.map((n) => [n, laidOut(n)]));
      give(full(from));
      layout();
      let m = from;
      for (const n of steps) {
        const d = delta(m, n);
        Q.changed = null; // as a draw leaves it
        give(d);
        assert.notEqual(Q.ticks, null, "the delta from " + m + " to " + n + " should extend the index, not drop it");
        assert.deepEqual(index(), want.get(n), "after the delta from " + m + " to " + n);
        assertRedrawn(d);
        m = n;
      }
    });
  }
});

test("a delta in which an agent joins before known lanes drops the index, to be laid out again", () => {
  give(full(7));
  layout();
  const s = delta(7, 9);
  s.lanes = [LANES[1], LANES[0]];
  give(s);
  assert.equal(Q.ticks, null);
});

test("a fragment is taken in once", () => {
  const el = { dataset: { json: JSON.stringify(full(3)) } };
  take(el);
  layout();
  const before = index();
  el.dataset.json = JSON.stringify(full(14));
  take(el);
  assert.deepEqual(index(), before);
});

test("the time axis: each event at least a step after the one before, a long call long", () => {
  give(full(14));
  layout();
  const { xs, ts } = Q.ticks;
  for (let i = 1; i < xs.length; i++) {
    assert.equal(xs[i] - xs[i - 1], Math.max(1, (ts[i] - ts[i - 1]) / 50), "between events " + Q.ticks.seqs[i - 1] + " and " + Q.ticks.seqs[i]);
  }
  const step = (seq) => xs[Q.ticks.index.get(seq)];
  assert.equal(step(8) - step(7), 1, "a burst half a microsecond long takes one step");
  assert.ok(step(10) - step(9) > 20, "a model call of a second takes 50 ms a step");
  assert.equal(Q.ticks.index.has(4), false, "an event that draws nothing is not on the axis");
  assert.equal(Q.ticks.index.has(14), true, "unless it is the head");
});

test("timeAt reads the time back from a position, between events in proportion", () => {
  give(full(3));
  layout();
  Q.zoom = 2; // px per step
  const { xs, ts } = Q.ticks;
  assert.equal(timeAt(xs[0] * 2), ts[0]);
  assert.equal(timeAt(xs[2] * 2), ts[2]);
  assert.equal(timeAt((xs[1] + xs[2])), (ts[1] + ts[2]) / 2);
  assert.equal(timeAt(1e9), ts[ts.length - 1], "past the end: the last event's time");
});

describe("firstAtLeast", () => {
  for (const [arr, v, want] of [
    [[], 1, 0],
    [[1, 3, 3, 5], 0, 0],
    [[1, 3, 3, 5], 3, 1],
    [[1, 3, 3, 5], 4, 3],
    [[1, 3, 3, 5], 6, 4],
  ]) {
    test(JSON.stringify(arr) + " >= " + v, () => assert.equal(firstAtLeast(arr, v), want));
  }
  test("by a key, and by a comparison", () => {
    const objs = [{ x: 1 }, { x: 4 }, { x: 9 }];
    assert.equal(firstAtLeast(objs, 4, (o) => o.x), 1);
    assert.equal(firstAtLeast(objs, { x: 5 }, null, (p, q) => p.x - q.x), 2);
  });
});

test("a call's bar is labelled with what fits: name and duration, the name, or nothing", () => {
  assert.equal(barLabel("search", "41 ms", 200), "search · 41 ms");
  assert.equal(barLabel("search", "41 ms", 40), "search");
  assert.equal(barLabel("search", "41 ms", 20), "");
});

test("barLabelIn: a bar's label is for its part in view, at that part's start, never under the names", () => {
  // The view is 1000 to 1600 px of the time area.
  assert.deepEqual(barLabelIn("search", "41 ms", 1100, 1300, 1000, 1600), { x: 1103, text: "search · 41 ms" });
  assert.deepEqual(barLabelIn("search", "41 ms", 800, 1200, 1000, 1600), { x: 1003, text: "search · 41 ms" });
  assert.deepEqual(barLabelIn("search", "41 ms", 800, 1040, 1000, 1600), { x: 1003, text: "search" });
  assert.equal(barLabelIn("search", "41 ms", 800, 1010, 1000, 1600), null);
  assert.equal(barLabelIn("search", "41 ms", 1590, 1900, 1000, 1600), null);
  assert.equal(barLabelIn("search", "41 ms", 100, 900, 1000, 1600), null);
});
