import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

import { Element, add, reset } from "./dom.js";
import { watchTyping } from "../typing.js";

// FakeSocket records the sockets the page opens; a test plays the server through them.
class FakeSocket {
  static opened = [];
  constructor(url) {
    this.url = url;
    FakeSocket.opened.push(this);
  }
}
globalThis.WebSocket = FakeSocket;

let box;
beforeEach(() => {
  reset();
  FakeSocket.opened = [];
  box = add(new Element("div", { id: "typing", hidden: true }));
});

const replies = () => box.children.map((p) => [p.dataset.agent, p.children.map((c) => c.textContent).join("")]);

test("watchTyping opens the run's typing socket", () => {
  watchTyping("r-1/x");
  assert.equal(FakeSocket.opened.length, 1);
  assert.equal(FakeSocket.opened[0].url, "ws://127.0.0.1:7070/runs/r-1%2Fx/typing");
});

test("each message shows the replies being streamed, as text", () => {
  watchTyping("r-1");
  const ws = FakeSocket.opened[0];
  ws.onmessage({ data: JSON.stringify([{ agent: "math_agent", text: "2 + 2 is" }]) });
  assert.deepEqual(replies(), [["math_agent", "math_agent 2 + 2 is"]]);
  assert.equal(box.hidden, false);
  assert.equal(box.children[0].dataset.testid, "typing-reply");

  // A message holds every reply still streaming: it replaces the last one's.
  ws.onmessage({ data: JSON.stringify([{ agent: "math_agent", text: "2 + 2 is 4" }, { agent: "<b>x</b>", text: "<img src=x onerror=alert(1)>" }]) });
  assert.deepEqual(replies(), [["math_agent", "math_agent 2 + 2 is 4"], ["<b>x</b>", "<b>x</b> <img src=x onerror=alert(1)>"]]);
  const markup = box.children.flatMap((p) => [p, ...p.children]).reduce((n, el) => n + el.innerHTMLWrites, 0);
  assert.equal(markup, 0, "a reply's text never goes in as markup");

  ws.onmessage({ data: "[]" });
  assert.deepEqual(replies(), []);
  assert.equal(box.hidden, true, "no reply streaming: the box hides");
});

test("a message that is not JSON changes nothing", () => {
  watchTyping("r-1");
  const ws = FakeSocket.opened[0];
  ws.onmessage({ data: JSON.stringify([{ agent: "a", text: "t" }]) });
  ws.onmessage({ data: "{not json" });
  assert.deepEqual(replies(), [["a", "a t"]]);
});

test("the socket's close (the run ended) clears and hides the box", () => {
  watchTyping("r-1");
  const ws = FakeSocket.opened[0];
  ws.onmessage({ data: JSON.stringify([{ agent: "a", text: "t" }]) });
  ws.onclose();
  assert.deepEqual(replies(), []);
  assert.equal(box.hidden, true);
});

test("a page without the typing box opens no socket", () => {
  reset();
  watchTyping("r-1");
  assert.equal(FakeSocket.opened.length, 0);
});
