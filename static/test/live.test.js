import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, mock, test } from "node:test";

import { reset } from "./dom.js";
import { clock, follow } from "../live.js";

test("clock: mm:ss.d, and h:mm:ss.d from an hour on", () => {
  for (const [ms, want] of [
    [0, "00:00.0"],
    [99, "00:00.0"],
    [1_234, "00:01.2"],
    [61_050, "01:01.0"],
    [3_599_999, "59:59.9"],
    [3_600_000, "1:00:00.0"],
    [36_061_500, "10:01:01.5"],
  ]) {
    assert.equal(clock(ms), want, String(ms));
  }
});

// A clock the test moves by hand (tick), standing in for setTimeout and clearTimeout while a test
// runs: Node's own mock timers changed their API between Node 18 and 20, and Debian's Node may be
// either.
const clockwork = {
  now: 0,
  next: 1,
  timers: new Map(), // id -> {at, fn}
  setTimeout(fn, ms) {
    const id = clockwork.next++;
    clockwork.timers.set(id, { at: clockwork.now + Math.max(0, ms || 0), fn });
    return id;
  },
  clearTimeout(id) { clockwork.timers.delete(id); },
};

// tick moves the clock on by ms, running the timers that come due, in order.
function tick(ms) {
  const end = clockwork.now + ms;
  for (;;) {
    let due = null;
    for (const [id, t] of clockwork.timers) if (t.at <= end && (!due || t.at < due[1].at)) due = [id, t];
    if (!due) break;
    clockwork.timers.delete(due[0]);
    clockwork.now = due[1].at;
    due[1].fn();
  }
  clockwork.now = end;
}

// FakeSocket records the sockets the page opens; a test plays the server through them.
class FakeSocket {
  static opened = [];
  constructor(url) {
    this.url = url;
    this.closed = false;
    FakeSocket.opened.push(this);
  }
  close() { this.closed = true; }
}
globalThis.WebSocket = FakeSocket;

describe("follow", () => {
  let seq, over, resumable, got;
  const last = () => FakeSocket.opened[FakeSocket.opened.length - 1];
  const opened = () => FakeSocket.opened.length;
  const start = () => follow("r-1", () => seq, () => over, () => resumable, (m) => got.push(m));

  beforeEach(() => {
    reset();
    FakeSocket.opened = [];
    seq = 0;
    over = false;
    resumable = false;
    got = [];
    clockwork.timers.clear();
    mock.method(globalThis, "setTimeout", clockwork.setTimeout);
    mock.method(globalThis, "clearTimeout", clockwork.clearTimeout);
    mock.method(Math, "random", () => 0.5); // no jitter: backoffs of exactly 500 ms, 1 s, 2 s...
  });
  afterEach(() => mock.restoreAll());

  test("opens the run's live socket from the last seq applied and hands on each message", () => {
    seq = 7;
    start();
    assert.equal(last().url, "ws://127.0.0.1:7070/runs/r-1/live?after=7");
    assert.equal(document.body.dataset.live, "connecting");
    last().onopen();
    assert.equal(document.body.dataset.live, "open");
    last().onmessage({ data: JSON.stringify({ seq: 8, fragments: [] }) });
    last().onmessage({ data: "not json" });
    assert.deepEqual(got, [{ seq: 8, fragments: [] }]);
  });

  test("after a drop it reconnects from the last seq applied, backing off", () => {
    start();
    seq = 5;
    last().onclose({ code: 1006 });
    assert.equal(document.body.dataset.live, "reconnecting");
    tick(499);
    assert.equal(opened(), 1);
    tick(1);
    assert.equal(opened(), 2);
    assert.equal(last().url, "ws://127.0.0.1:7070/runs/r-1/live?after=5");

    last().onclose({ code: 1006 }); // down again: twice as long
    tick(999);
    assert.equal(opened(), 2);
    tick(1);
    assert.equal(opened(), 3);

    last().onmessage({ data: "{}" }); // a message: the connection works again
    last().onclose({ code: 1006 });
    tick(500);
    assert.equal(opened(), 4, "a message resets the backoff");
  });

  test("the backoff stops growing at 10 s", () => {
    start();
    for (let i = 0; i < 12; i++) {
      last().onclose({ code: 1006 });
      tick(10_000);
    }
    assert.equal(opened(), 13);
    last().onclose({ code: 1006 });
    tick(9_999);
    assert.equal(opened(), 13);
    tick(1);
    assert.equal(opened(), 14);
  });

  test("cut for being slow, it comes back at once from where it stood", () => {
    start();
    last().onclose({ code: 1006 });
    tick(500);
    last().onclose({ code: 1006 });
    tick(1000); // backoff is now 2 s
    seq = 40;
    const ws = last();
    ws.onmessage({ data: JSON.stringify({ error: "too slow", resume_after: 40 }) });
    assert.equal(ws.closed, true, "the page closes the socket the server cut");
    assert.deepEqual(got, [], "the server's error is not a live message");
    ws.onclose({ code: 1006 });
    tick(500);
    assert.equal(last().url, "ws://127.0.0.1:7070/runs/r-1/live?after=40");
    assert.equal(opened(), 4);
  });

  test("a 4000 close (told where to resume) also comes back at once", () => {
    start();
    last().onclose({ code: 1006 });
    tick(500);
    last().onclose({ code: 4000 });
    tick(500);
    assert.equal(opened(), 3);
  });

  test("a run that is over and closed normally is not followed any more", () => {
    start();
    over = true;
    last().onclose({ code: 1000 });
    assert.equal(document.body.dataset.live, "closed");
    tick(60_000);
    assert.equal(opened(), 1);
  });

  test("a run over but not closed normally is reconnected to", () => {
    start();
    over = true;
    last().onclose({ code: 1006 });
    tick(500);
    assert.equal(opened(), 2);
  });

  test("an interrupted run is looked at every 3 s, or at once when the page resumed it", () => {
    const now = start();
    now(); // not waiting: nothing to do
    assert.equal(opened(), 1);
    over = true;
    resumable = true;
    last().onclose({ code: 1000 });
    assert.equal(document.body.dataset.live, "waiting");
    tick(2_999);
    assert.equal(opened(), 1);
    tick(1);
    assert.equal(opened(), 2);

    last().onclose({ code: 1000 });
    now();
    assert.equal(opened(), 3, "now looks at once");
    tick(3_000);
    assert.equal(opened(), 3, "and cancels the look it replaced");
  });
});
