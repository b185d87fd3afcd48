import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { MAX_ZOOM, axisTicks, criticalPath, duration, durationAt, rowName, ticksIn, waterfallRows, zoomView } from "../waterfall.js";

// bar is a bar as sequence.js keeps it; seq defaults to its id, a bar ends (end > 0) unless
// open is set.
function bar(id, agent, kind, t0, t1, parent = -1, name = "", open = false) {
  return { id, agent, kind, name, seq: id * 10, end: open ? 0 : id * 10 + 1, t0, t1: open ? t0 : t1, tokens: 0, failed: false, parent };
}

const shape = (rows) => rows.map((n) => "  ".repeat(n.depth) + n.bar.id);

describe("waterfallRows", () => {
  test("calls nest in their visit, an AgentTool's visit in the call that ran it, siblings by start", () => {
    const bars = [
      bar(1, "supervisor", "agent", 0, 100),
      bar(3, "supervisor", "tool", 50, 90, 1, "research_agent"), // the AgentTool call
      bar(2, "supervisor", "model", 1, 50, 1),
      bar(4, "research_agent", "agent", 51, 89),                // ran by call 3
      bar(5, "research_agent", "model", 52, 88, 4),
      bar(6, "math_agent", "agent", 100, 200),
      bar(7, "math_agent", "tool", 120, 130, 6, "research_agent"), // a tool of that name, but the visit began before
    ];
    assert.deepEqual(shape(waterfallRows(bars, 200)), ["1", "  2", "  3", "    4", "      5", "6", "  7"]);
  });

  test("an open bar runs to now", () => {
    const rows = waterfallRows([bar(1, "a", "agent", 10, 0, -1, "", true)], 250);
    assert.equal(rows[0].a, 10);
    assert.equal(rows[0].z, 250);
  });

  test("two visits that each start inside the other's AgentTool call do not loop", () => {
    const bars = [
      bar(1, "a", "agent", 0, 10), bar(2, "a", "tool", 0, 10, 1, "b"),
      bar(3, "b", "agent", 0, 10), bar(4, "b", "tool", 0, 10, 3, "a"),
    ];
    const rows = waterfallRows(bars, 10);
    assert.equal(rows.length, 4, "every bar has one row");
    assert.ok(rows.some((n) => n.depth === 0), "something is a root");
  });
});

describe("criticalPath", () => {
  const ids = (bars, now) => [...criticalPath(waterfallRows(bars, now))].sort((x, y) => x - y);

  test("handoffs in a row are all on it", () => {
    const bars = [bar(1, "supervisor", "agent", 0, 100), bar(2, "research", "agent", 100, 300), bar(3, "supervisor", "agent", 300, 320)];
    assert.deepEqual(ids(bars, 320), [1, 2, 3]);
  });

  test("of work run side by side, only what ended last is on it", () => {
    const bars = [
      bar(1, "a", "agent", 0, 100),
      bar(2, "a", "tool", 10, 60, 1, "fast"),
      bar(3, "a", "tool", 10, 90, 1, "slow"),
      bar(4, "a", "model", 90, 100, 1),
      bar(5, "a", "model", 0, 10, 1),
    ];
    assert.deepEqual(ids(bars, 100), [1, 3, 4, 5]);
  });

  test("of parallel branches, the longer", () => {
    const bars = [bar(1, "p1", "agent", 0, 50), bar(2, "p2", "agent", 0, 80), bar(3, "p2", "model", 5, 79, 2)];
    assert.deepEqual(ids(bars, 80), [2, 3]);
  });

  test("no bars, no path", () => {
    assert.equal(criticalPath([]).size, 0);
  });
});

describe("axisTicks", () => {
  test("a round step, linear, never past the axis", () => {
    const ticks = axisTicks(919, 800);
    assert.deepEqual(ticks.map((t) => t.label), ["0", "200 ms", "400 ms", "600 ms", "800 ms"]);
    for (const t of ticks) assert.ok(Math.abs(t.x - t.t / 919 * 800) < 1e-9, "x is proportional to t");
    assert.ok(ticks.at(-1).x <= 800);
    for (let i = 2; i < ticks.length; i++) {
      assert.ok(Math.abs((ticks[i].x - ticks[i - 1].x) - (ticks[1].x - ticks[0].x)) < 1e-9, "evenly spaced");
    }
  });

  test("seconds and fractions of a millisecond", () => {
    assert.deepEqual(axisTicks(12500, 600).map((t) => t.label), ["0", "2 s", "4 s", "6 s", "8 s", "10 s", "12 s"]);
    assert.deepEqual(axisTicks(0.9, 900).map((t) => t.label), ["0", "0.1 ms", "0.2 ms", "0.3 ms", "0.4 ms", "0.5 ms", "0.6 ms", "0.7 ms", "0.8 ms", "0.9 ms"]);
  });

  test("ticks at least minPx apart", () => {
    for (const [span, px] of [[1, 300], [37, 900], [3600000, 1200], [5, 100]]) {
      const t = axisTicks(span, px);
      if (t.length > 1) assert.ok(t[1].x - t[0].x >= 90 - 1e-9, `${span} ms over ${px} px: ${t[1].x - t[0].x}`);
    }
  });
});

test("duration", () => {
  assert.equal(duration(0.25), "0.25 ms");
  assert.equal(duration(812.4), "812 ms");
  assert.equal(duration(1500), "1.5 s");
  assert.equal(duration(125000), "2 min 5 s");
});

describe("ticksIn", () => {
  test("a zoomed axis lays out the ticks in view only, at the same x as the whole axis's", () => {
    const k = 800 / 919 * 10; // the axis of axisTicks(919, 800), zoomed ten times
    const ticks = ticksIn(300, 400, k);
    assert.ok(ticks.length >= 2);
    for (const t of ticks) {
      assert.ok(t.t >= 300 && t.t <= 400, `${t.t} ms is in view`);
      assert.ok(Math.abs(t.x - t.t * k) < 1e-9, "x is proportional to t");
    }
    assert.ok(ticks[1].x - ticks[0].x >= 90 - 1e-9, "at least minPx apart");
    assert.deepEqual(ticks.map((t) => t.label).slice(0, 2), ["300 ms", "320 ms"]);
  });

  test("nothing for an empty range or scale", () => {
    assert.deepEqual(ticksIn(5, 4, 1), []);
    assert.deepEqual(ticksIn(0, 10, 0), []);
  });
});

describe("zoomView", () => {
  const LABEL_W = 190, span = 1000, fitK = 0.8; // 800 px of time area fit the run

  test("zooming in keeps the time under the pointer in place", () => {
    const at = LABEL_W + 400; // 500 ms, at fit
    const v = zoomView({ k: fitK, left: 0 }, 2, at, fitK, span);
    assert.equal(v.k, 1.6);
    assert.equal(v.fitted, false);
    assert.ok(Math.abs((v.left + at - LABEL_W) / v.k - 500) < 1e-9, "500 ms is still under the pointer");
  });

  test("zooming out stops at the whole run, scrolled back to its start", () => {
    const v = zoomView({ k: 4, left: 2000 }, 1 / 100, LABEL_W + 10, fitK, span);
    assert.deepEqual(v, { k: fitK, left: 0, fitted: true });
  });

  test("the scroll stays within the canvas, the zoom within MAX_ZOOM", () => {
    const end = zoomView({ k: fitK, left: 0 }, 3, LABEL_W + 800, fitK, span); // the run's end at the right edge
    assert.ok(end.left <= span * (end.k - fitK) + 1e-9, "not past the end");
    assert.ok(Math.abs(end.left - span * (end.k - fitK)) < 1e-9, "the end stays at the right edge");
    const most = zoomView({ k: fitK, left: 0 }, 1e9, LABEL_W, fitK, span);
    assert.equal(most.k, fitK * MAX_ZOOM);
    assert.equal(most.left, 0, "the start stays at the left edge");
    const label = zoomView({ k: fitK, left: 0 }, 2, 20, fitK, span);
    assert.equal(label.left, 0, "a pointer over the names zooms about the time area's start");
  });
});

test("rowName: a model call by the model it named", () => {
  assert.equal(rowName({ kind: "model", name: "gpt-4o-mini", agent: "a" }), "model gpt-4o-mini");
  assert.equal(rowName({ kind: "model", name: "", agent: "a" }), "model");
  assert.equal(rowName({ kind: "tool", name: "get_weather", agent: "a" }), "get_weather");
  assert.equal(rowName({ kind: "agent", name: "", agent: "a" }), "a");
});

describe("durationAt", () => {
  // The view is 190 to 800 px of the canvas (the names column covers 0 to 190 px of the scroller).
  const v0 = 190, v1 = 800, tw = 40;
  test("right of the bar when it ends in view with room after it", () => {
    assert.deepEqual(durationAt(300, 100, tw, v0, v1), { x: 404, anchor: "start", inside: false });
  });
  test("never under the names: a bar that ends under them has no label, one that runs past them has it in its part in view", () => {
    assert.equal(durationAt(100, 80, tw, v0, v1), null); // ends at 180, under the names
    assert.deepEqual(durationAt(100, 100, tw, v0, v1), { x: 204, anchor: "start", inside: false }); // ends just in view
    assert.deepEqual(durationAt(100, 200, tw, v0, v1), { x: 304, anchor: "start", inside: false }); // ends in view
    assert.deepEqual(durationAt(0, 2000, tw, v0, v1), { x: 193, anchor: "start", inside: true }); // spans the view
  });
  test("at the view's right end: inside the part in view, else left of the bar, else none", () => {
    assert.deepEqual(durationAt(700, 500, tw, v0, v1), { x: 703, anchor: "start", inside: true });
    assert.deepEqual(durationAt(780, 500, tw, v0, v1), { x: 776, anchor: "end", inside: false });
    assert.deepEqual(durationAt(205, 590, tw, v0, v1), { x: 208, anchor: "start", inside: true });
    assert.equal(durationAt(760, 20, tw, 750, v1), null); // no room right, inside or left
    assert.equal(durationAt(200, 598, 600, v0, v1), null);
  });
  test("every label it places lies wholly in view", () => {
    for (let x = -500; x < 1200; x += 37) for (let w = 2; w < 1500; w += 53) {
      const p = durationAt(x, w, tw, v0, v1);
      if (!p) continue;
      const left = p.anchor === "end" ? p.x - tw : p.x;
      assert.ok(left >= v0 && left + tw <= v1, `bar ${x}+${w}: label at ${left}..${left + tw}`);
    }
  });
});
