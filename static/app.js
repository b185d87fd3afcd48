// Baton's client: no framework, no build step. The server renders every piece of HTML; these
// modules only swap in the server's fragments, filter and select timeline rows, fetch the
// inspector and post run controls. Text from traces only ever reaches the page inside
// server-rendered (escaped) HTML or through textContent.

import { initIndex } from "./index.js";
import { initRun } from "./run.js";

if (document.body.dataset.page === "index") initIndex();
if (document.body.dataset.page === "run") initRun();
