// The index page: the run forms and the list of runs, kept current.

import { showError, setupPace, startRun, withToken } from "./common.js";

// initIndex wires the index page: each flow's form starts a run, the list of runs keeps up.
export function initIndex() {
  setupPace(null);
  document.addEventListener("submit", (ev) => {
    const form = ev.target.closest("form.run-form");
    if (!form) return;
    ev.preventDefault();
    const input = form.querySelector("textarea");
    const errEl = form.querySelector(".form-error");
    if (input && input.value.trim() === "") {
      // Said in the page's terms; the API's own message speaks of its JSON fields.
      showError(errEl, "The input box is empty: type what the flow should work on (the grey text is an example).");
      input.focus();
      return;
    }
    const model = form.querySelector("select[name=model]");
    const brk = form.querySelector("[name=breakpoints]");
    startRun(form.dataset.flow, input ? input.value : "", errEl, form.querySelector("button[type=submit]"), model ? model.value : "",
      undefined, brk ? brk.value : "");
  });
  document.addEventListener("click", async (ev) => {
    const btn = ev.target.closest("button.delete-run");
    if (!btn) return;
    // Deleting cannot be undone: the first click asks, a second within a few seconds deletes.
    if (!btn.dataset.armed) {
      btn.dataset.armed = "true";
      btn.textContent = "Delete for good?";
      setTimeout(() => { delete btn.dataset.armed; btn.textContent = "Delete"; }, 4000);
      return;
    }
    btn.disabled = true;
    let msg = "";
    try {
      const res = await fetch(withToken("/api/runs/" + encodeURIComponent(btn.dataset.runId)), { method: "DELETE" });
      if (!res.ok) msg = ((await res.json().catch(() => ({}))).error) || "the run could not be deleted";
    } catch (e) {
      msg = "cannot reach the server";
    }
    if (msg) {
      btn.disabled = false;
      showError(document.querySelector("[data-testid=runs-error]"), msg);
      return;
    }
    await refreshRunList();
  });
  const file = document.getElementById("import-file");
  if (file) file.addEventListener("change", () => importTrace(file));
  watchRuns();
}

// importTrace posts the chosen trace file to POST /api/traces, whose one importer checks it: the
// run joins the list, or the importer's message says what is wrong with the file.
async function importTrace(input) {
  const f = input.files && input.files[0];
  if (!f) return;
  const errEl = document.querySelector("[data-testid=import-error]");
  const noteEl = document.querySelector("[data-testid=import-note]");
  showError(errEl, "");
  showError(noteEl, "");
  input.disabled = true;
  let reply = {}, ok = false;
  try {
    const res = await fetch(withToken("/api/traces"), {
      method: "POST",
      headers: { "Content-Type": "application/json", "Accept": "application/json" },
      body: f,
    });
    ok = res.ok;
    reply = (await res.json().catch(() => ({}))) || {};
    if (!ok && !reply.error) reply.error = "HTTP " + res.status;
  } catch (e) {
    reply = { error: "cannot reach the server" };
  }
  input.disabled = false;
  input.value = "";
  if (!ok) {
    showError(errEl, f.name + ": " + reply.error);
    return;
  }
  // The note links to the imported run; its text (ids, the importer's note) is set as text.
  noteEl.replaceChildren("Imported " + f.name + " as run ");
  const link = document.createElement("a");
  link.href = "/runs/" + encodeURIComponent(reply.id);
  link.textContent = reply.id;
  link.dataset.testid = "imported-run";
  noteEl.append(link, reply.note ? " (" + reply.note + ")" : "");
  noteEl.hidden = false;
  await refreshRunList();
}

// watchRuns keeps the list of runs current without a reload: it polls GET /api/runs with the
// page's own query (filters and page), every second while a listed run is running and every 5 s
// otherwise, and when a status changed or a run came or went it swaps in the list as the server
// renders it.
function watchRuns() {
  const listed = () => Array.from(document.querySelectorAll("[data-testid=run-row]"));
  const poll = async () => {
    if (!document.hidden) {
      try {
        const res = await fetch(withToken("/api/runs" + location.search), { headers: { "Accept": "application/json" } });
        const runs = res.ok ? await res.json() : null;
        const shown = listed().map((r) => r.dataset.runId + " " + r.dataset.status).join();
        if (Array.isArray(runs) && runs.map((r) => r.id + " " + r.status).join() !== shown) {
          await refreshRunList();
        }
      } catch (e) { /* the server is away for now: try again at the next tick */ }
    }
    setTimeout(poll, listed().some((r) => r.dataset.status === "running") ? 1000 : 5000);
  };
  setTimeout(poll, 1000);
}

// refreshRunList replaces the list of runs with the one in a freshly rendered index page.
async function refreshRunList() {
  const res = await fetch(withToken("/" + location.search), { headers: { "Accept": "text/html" } });
  if (!res.ok) return;
  // Server-rendered HTML in which all run data is escaped; DOMParser runs no script.
  const doc = new DOMParser().parseFromString(await res.text(), "text/html");
  const fresh = doc.querySelector("[data-testid=runs]");
  const old = document.querySelector("[data-testid=runs]");
  if (fresh && old) old.replaceWith(document.adoptNode(fresh));
  showError(document.querySelector("[data-testid=runs-error]"), "");
}
