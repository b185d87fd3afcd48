// The replies being streamed, token by token, under the run page's header.

import { withToken } from "./common.js";

// watchTyping shows the replies being streamed, token by token, from the run's typing socket
// until it closes (the run ended); each reply reaches the timeline once complete.
export function watchTyping(runId) {
  const box = document.getElementById("typing");
  if (!box || !("WebSocket" in window)) return;
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  let ws;
  try {
    ws = new WebSocket(withToken(proto + "//" + location.host + "/runs/" + encodeURIComponent(runId) + "/typing"));
  } catch (e) { return; }
  ws.onmessage = (msg) => {
    let replies = [];
    try { replies = JSON.parse(msg.data); } catch (e) { return; }
    box.replaceChildren(...replies.map((r) => {
      const row = document.createElement("p");
      row.className = "typing-reply";
      row.dataset.testid = "typing-reply";
      row.dataset.agent = r.agent;
      const who = document.createElement("strong");
      who.textContent = r.agent + " ";
      const text = document.createElement("span");
      text.textContent = r.text; // text, never markup
      row.append(who, text);
      return row;
    }));
    box.hidden = replies.length === 0;
  };
  ws.onclose = () => { box.replaceChildren(); box.hidden = true; };
}
