// What both pages share: the token, JSON requests, error lines, the pace slider and starting a
// run.

// The token, when the server has one, is in the page's own markup, which no other origin can
// read, and goes with each request the page makes: no cookie carries it, since browsers send a
// host's cookies to every port of it (docs/api.md, "Security").
const tokenMeta = document.querySelector('meta[name="baton-token"]');
const token = tokenMeta ? tokenMeta.content : "";

// withToken adds ?token= (or &token=) to a same-origin URL when the page has a token and the URL
// does not carry it yet.
export function withToken(url) {
  if (!token || hasToken(url)) return url;
  const at = url.indexOf("#");
  const [base, hash] = at < 0 ? [url, ""] : [url.slice(0, at), url.slice(at)];
  return base + (base.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token) + hash;
}

function hasToken(url) {
  try { return new URL(url, location.href).searchParams.has("token"); } catch (e) { return false; }
}

// A link to another of Baton's pages, or a download, gets the token as it is about to be
// followed, however it is (a click, a middle click, the context menu, the keyboard, a drag): a
// navigation carries no header, and the page it opens needs the token as well. A link within the
// page (#...) is left as it is.
function tokenLink(ev) {
  const a = ev.target instanceof Element ? ev.target.closest("a[href]") : null;
  if (!a) return;
  const href = a.getAttribute("href");
  if (href.startsWith("#")) return;
  let u;
  try { u = new URL(href, location.href); } catch (e) { return; }
  if (u.origin !== location.origin || u.searchParams.has("token")) return;
  a.setAttribute("href", withToken(u.pathname + u.search + u.hash));
}

// A form that navigates (a GET form the page's scripts leave to the browser: the run list's
// filters, compare, diff) goes with the token too.
function tokenForm(ev) {
  const form = ev.target;
  if (ev.defaultPrevented || !(form instanceof HTMLFormElement) || form.method !== "get") return;
  const u = new URL(form.action, location.href);
  if (u.origin !== location.origin) return;
  ev.preventDefault();
  const q = new URLSearchParams(new FormData(form, ev.submitter));
  location.assign(withToken(u.pathname + (q.toString() ? "?" + q : "")));
}

if (token) {
  for (const type of ["pointerdown", "focusin", "contextmenu", "click", "auxclick", "dragstart"]) {
    document.addEventListener(type, tokenLink, true);
  }
  // On window, after every handler on the document: only a submission none of them took.
  window.addEventListener("submit", tokenForm);
}

// postJSON posts data as JSON and returns {ok, status, data}; data is the parsed reply or {}.
export async function postJSON(url, data) {
  let res;
  try {
    res = await fetch(withToken(url), {
      method: "POST",
      headers: { "Content-Type": "application/json", "Accept": "application/json" },
      body: JSON.stringify(data),
    });
  } catch (e) {
    return { ok: false, status: 0, data: { error: "cannot reach the server" } };
  }
  let reply = {};
  try { reply = await res.json(); } catch (e) { /* an empty or non-JSON body */ }
  return { ok: res.ok, status: res.status, data: reply || {} };
}

// showError shows msg in the error line el, or hides the line when msg is empty.
export function showError(el, msg) {
  if (!el) return;
  el.textContent = msg || "";
  el.hidden = !msg;
}

// pace returns the pace slider's value in ms, or null when the page has no slider (a run not
// started by this server: its pace is unknown).
export function pace() {
  const input = document.getElementById("pace");
  return input ? Number(input.value) || 0 : null;
}

// showPace moves the slider to ms, and its label with it.
export function showPace(ms) {
  const input = document.getElementById("pace");
  const out = document.getElementById("pace-value");
  if (input) input.value = String(ms);
  if (out && input) out.textContent = input.value + " ms";
}

// setupPace shows the slider's value as it moves and calls onChange when it is released. The
// server renders it at the run's pace (or its default), so what it shows is what runs.
export function setupPace(onChange) {
  const input = document.getElementById("pace");
  if (!input) return;
  input.addEventListener("input", () => showPace(input.value));
  input.addEventListener("change", () => { if (onChange) onChange(Number(input.value)); });
}

// startRun starts a run of flow on model (the server's default when empty) at the slider's pace
// (the server's default without a slider) and navigates to its page, or shows the API's error in
// errEl, after what (the control's name) when given.
export async function startRun(flow, input, errEl, button, model, what, breakpoints) {
  const req = { flow: flow, input: input };
  if (model) req.model = model;
  const points = splitBreakpoints(breakpoints);
  if (points.length) req.breakpoints = points;
  return postRun("/api/runs", req, errEl, button, what);
}

// splitBreakpoints reads a list of breakpoints written as a person types them: separated by
// commas or spaces.
export function splitBreakpoints(text) {
  return (text || "").split(/[\s,]+/).filter((s) => s !== "");
}

// postRun posts req (with the slider's pace) to url, a route that starts a run, and navigates to
// the run's page, or shows the API's error in errEl, after what (the control's name) when given.
export async function postRun(url, req, errEl, button, what) {
  showError(errEl, "");
  if (button) button.disabled = true;
  if (pace() !== null) req.pace_ms = pace();
  const r = await postJSON(url, req);
  if (button) button.disabled = false;
  if (r.ok && r.data && typeof r.data.url === "string" && r.data.url.startsWith("/")) {
    location.assign(withToken(r.data.url));
    return;
  }
  const msg = (r.data && r.data.error) || "could not start the run (HTTP " + r.status + ")";
  showError(errEl, what ? what + ": " + msg : msg);
}
