import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { Element, add, select } from "./dom.js";

// A page served with a token: common.js reads it as it loads.
select('meta[name="baton-token"]', [new Element("meta", { content: "t/k+n" })]);
const { postJSON, postRun, showError, splitBreakpoints, withToken } = await import("../common.js");

test("withToken adds the page's token to a URL, encoded, after its query if any", () => {
  assert.equal(withToken("/api/runs"), "/api/runs?token=t%2Fk%2Bn");
  assert.equal(withToken("/runs/r-1/rows?dir=forward"), "/runs/r-1/rows?dir=forward&token=t%2Fk%2Bn");
});

test("withToken puts the token before a URL's fragment, and never twice", () => {
  assert.equal(withToken("/runs/r-1#seq=3"), "/runs/r-1?token=t%2Fk%2Bn#seq=3");
  assert.equal(withToken("/?q=abc&token=t%2Fk%2Bn"), "/?q=abc&token=t%2Fk%2Bn");
  assert.equal(withToken(withToken("ws://127.0.0.1:7070/runs/r-1/live")), "ws://127.0.0.1:7070/runs/r-1/live?token=t%2Fk%2Bn");
});

// The server: fetch answers with reply, or fails as an unreachable server does when reply is null.
let sent, reply;
globalThis.fetch = async (url, init) => {
  sent.push({ url, init });
  if (reply === null) throw new TypeError("Failed to fetch");
  return { ok: reply.status < 300, status: reply.status, json: async () => JSON.parse(reply.body) };
};
let assigned;
globalThis.location.assign = (url) => assigned.push(url);

beforeEach(() => {
  sent = [];
  assigned = [];
});

test("postJSON posts JSON with the token and returns the parsed answer", async () => {
  reply = { status: 201, body: '{"id":"r-2"}' };
  assert.deepEqual(await postJSON("/api/runs", { flow: "supervisor" }), { ok: true, status: 201, data: { id: "r-2" } });
  assert.equal(sent[0].url, "/api/runs?token=t%2Fk%2Bn");
  assert.equal(sent[0].init.method, "POST");
  assert.equal(sent[0].init.body, '{"flow":"supervisor"}');
  assert.equal(sent[0].init.headers["Content-Type"], "application/json");
});

test("postJSON: a body that is not JSON is an empty answer, an unreachable server an error", async () => {
  reply = { status: 502, body: "<html>bad gateway</html>" };
  assert.deepEqual(await postJSON("/x", {}), { ok: false, status: 502, data: {} });
  reply = null;
  assert.deepEqual(await postJSON("/x", {}), { ok: false, status: 0, data: { error: "cannot reach the server" } });
});

test("postRun goes to the new run's page, on this server only", async () => {
  add(new Element("input", { id: "pace", value: "250" }));
  const errEl = new Element("p");
  const button = new Element("button");
  reply = { status: 201, body: '{"url":"/runs/r-3"}' };
  await postRun("/api/runs", { flow: "supervisor" }, errEl, button, "Run again");
  assert.deepEqual(assigned, ["/runs/r-3?token=t%2Fk%2Bn"]);
  assert.equal(JSON.parse(sent[0].init.body).pace_ms, 250, "the slider's pace goes with the request");
  assert.equal(button.disabled, false);

  for (const url of ["https://elsewhere.example/runs/r-3", "javascript:alert(1)", 42]) {
    reply = { status: 201, body: JSON.stringify({ url }) };
    await postRun("/api/runs", {}, errEl, null, "");
    assert.deepEqual(assigned, ["/runs/r-3?token=t%2Fk%2Bn"], "not followed: " + url);
  }
});

test("postRun says what went wrong, after the control's name", async () => {
  const errEl = new Element("p", { hidden: true });
  reply = { status: 400, body: '{"error":"unknown flow \\"nope\\""}' };
  await postRun("/api/runs", { flow: "nope" }, errEl, null, "Replay");
  assert.equal(errEl.hidden, false);
  assert.equal(errEl.textContent, 'Replay: unknown flow "nope"');
  reply = { status: 500, body: "{}" };
  await postRun("/api/runs", {}, errEl, null, "");
  assert.equal(errEl.textContent, "could not start the run (HTTP 500)");
});

test("showError shows a message, and hides the line for none", () => {
  const el = new Element("p", { hidden: true });
  showError(el, "boom");
  assert.deepEqual([el.textContent, el.hidden], ["boom", false]);
  showError(el, "");
  assert.deepEqual([el.textContent, el.hidden], ["", true]);
  showError(null, "no line: no error"); // must not throw
});

test("splitBreakpoints reads a list as a person types it", () => {
  assert.deepEqual(splitBreakpoints(" transfer:math_agent, tool:search  model@supervisor,,"), ["transfer:math_agent", "tool:search", "model@supervisor"]);
  assert.deepEqual(splitBreakpoints(""), []);
  assert.deepEqual(splitBreakpoints(undefined), []);
});
