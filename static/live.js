// The run page's live side: the websocket that brings the server's HTML fragments, back after a
// drop from the last event applied, and the elapsed clock while the run goes on.

import { withToken } from "./common.js";

// applyFragment swaps one server-rendered fragment into the page ("replace" its target, or
// "append" into it) and returns the elements it appended.
export function applyFragment(f) {
  const target = document.getElementById(f.target);
  if (!target || typeof f.html !== "string") return [];
  // Fragments are server-rendered HTML in which all trace text is escaped.
  const tpl = document.createElement("template");
  // A node of the tree is SVG: parsed alone it would be an HTML element.
  const svg = target.namespaceURI === "http://www.w3.org/2000/svg";
  tpl.innerHTML = svg ? "<svg>" + f.html + "</svg>" : f.html;
  if (f.swap === "append") {
    const added = [];
    for (const el of Array.from(tpl.content.children)) {
      const old = el.id ? document.getElementById(el.id) : null;
      if (old) {
        old.replaceWith(el);
      } else if (Number(el.dataset.seq) <= Number(target.lastElementChild?.dataset.seq)) {
        continue; // a changed row of events the page has not loaded (rows.js): it loads as changed
      } else {
        target.appendChild(el);
      }
      added.push(el);
    }
    return added;
  }
  target.replaceWith(...(svg ? tpl.content.firstChild.childNodes : tpl.content.childNodes));
  return [];
}

// How often the page of a run that ended interrupted looks whether it was resumed.
const RESUME_POLL_MS = 3000;

// follow opens run runId's live socket and hands each message to onMessage. After a drop it
// reconnects, backing off, from the seq lastSeq() returns; once isOver() and the server closed
// normally, it stops, unless mayResume(): an interrupted run may be resumed in the same trace by
// the app that runs it, so the page looks again now and then. body[data-live] says how the
// connection is: connecting, open, reconnecting, waiting (for a resume) or closed. It returns a
// function that, while waiting, looks again at once (the page itself has just resumed the run).
export function follow(runId, lastSeq, isOver, mayResume, onMessage) {
  const body = document.body;
  let backoff = 0;
  let waiting = null; // the timer of the next look while waiting for a resume
  const reconnect = () => {
    body.dataset.live = "reconnecting";
    const delay = Math.min(10000, 500 * Math.pow(2, backoff)) * (0.8 + Math.random() * 0.4);
    backoff = Math.min(backoff + 1, 8);
    setTimeout(connect, delay);
  };
  const connect = () => {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const url = withToken(proto + "//" + location.host + "/runs/" + encodeURIComponent(runId) +
      "/live?after=" + lastSeq());
    let ws;
    try { ws = new WebSocket(url); } catch (e) { reconnect(); return; }
    let told = false; // the server said where to resume
    body.dataset.live = "connecting";
    ws.onopen = () => { body.dataset.live = "open"; };
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch (e) { return; }
      if (msg.error) {
        // The server is cutting us (too slow): it says where to resume, which is what we applied.
        told = true;
        ws.close();
        return;
      }
      backoff = 0;
      onMessage(msg);
    };
    ws.onclose = (ev) => {
      if (isOver() && ev.code === 1000) {
        if (mayResume()) {
          body.dataset.live = "waiting";
          waiting = setTimeout(() => { waiting = null; connect(); }, RESUME_POLL_MS);
          return;
        }
        body.dataset.live = "closed";
        return;
      }
      // Told where to resume (a 4000 close or its message): come back at once, from lastSeq().
      if (told || ev.code === 4000) backoff = 0;
      reconnect();
    };
  };
  connect();
  return () => {
    if (waiting === null) return;
    clearTimeout(waiting);
    waiting = null;
    connect();
  };
}

// clock formats ms as the header's elapsed time: mm:ss.d, or h:mm:ss.d from an hour on.
export function clock(ms) {
  const tenths = Math.floor(ms / 100);
  const h = Math.floor(tenths / 36000), m = Math.floor(tenths / 600) % 60;
  const s = Math.floor(tenths / 10) % 60, t = tenths % 10;
  const pad = (n) => String(n).padStart(2, "0");
  return (h > 0 ? h + ":" + pad(m) : pad(m)) + ":" + pad(s) + "." + t;
}

// runClock counts the header's elapsed time every tenth of a second until isOver() or the
// server marks the time ended. While mayResume() it only pauses: a resumed run counts on from
// its active time (the server moves data-started on by the wait).
export function runClock(isOver, mayResume) {
  const timer = setInterval(() => {
    const el = document.getElementById("elapsed");
    if (!el || isOver() || el.dataset.ended) {
      if (isOver() && !mayResume()) clearInterval(timer);
      return;
    }
    const started = Date.parse(el.dataset.started || "");
    if (!Number.isNaN(started) && Date.now() >= started) el.textContent = clock(Date.now() - started);
  }, 100);
}
