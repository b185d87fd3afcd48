// Times the Waterfall view's layout (waterfallRows and criticalPath, static/waterfall.js) on
// runs of 10,000 and 100,000 bars: a chain of visits, each with a model call and two tool calls.
// Prints min / median / max of 7 rounds. Run: node static/bench/waterfall.js
// (Not a test: node --test static/test/ leaves it out, and the binary does not embed it.)

import { criticalPath, waterfallRows } from "../waterfall.js";

function bars(visits) {
  const out = [];
  let id = 0, t = 0;
  for (let v = 0; v < visits; v++) {
    const agent = "agent_" + (v % 20), visit = id++;
    out.push({ id: visit, agent, kind: "agent", name: "", seq: id * 3, end: id * 3 + 1, t0: t, t1: t + 42, parent: -1 });
    out.push({ id: id++, agent, kind: "model", name: "m" + v, seq: id * 3, end: id * 3 + 1, t0: t + 0.1, t1: t + 40, parent: visit });
    out.push({ id: id++, agent, kind: "tool", name: "search", seq: id * 3, end: id * 3 + 1, t0: t + 40.1, t1: t + 41, parent: visit });
    out.push({ id: id++, agent, kind: "tool", name: "add", seq: id * 3, end: id * 3 + 1, t0: t + 40.1, t1: t + 40.5, parent: visit });
    t += 42;
  }
  return out;
}

for (const visits of [2500, 25000]) {
  const b = bars(visits), times = [];
  for (let i = 0; i < 7; i++) {
    const start = performance.now();
    criticalPath(waterfallRows(b, t1(b)));
    times.push(performance.now() - start);
  }
  times.sort((x, y) => x - y);
  console.log(`${b.length} bars: ${times[0].toFixed(1)} / ${times[3].toFixed(1)} / ${times[6].toFixed(1)} ms (min / median / max of 7)`);
}

function t1(b) { return b.reduce((m, x) => Math.max(m, x.t1), 0); }
