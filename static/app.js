// Baton's client: no framework, no build step. The server renders the pages and the fragments
// that bring them up to date; these modules swap the fragments in, filter and select timeline
// rows, fetch the inspector, travel in time, pan and zoom the tree, draw the Sequence view from
// the data the server sends, and post run controls. Text from traces only ever reaches the page
// inside server-rendered (escaped) HTML, through textContent, or as an attribute's value.

import { initIndex } from "./index.js";
import { initRun } from "./run.js";

if (document.body.dataset.page === "index") initIndex();
if (document.body.dataset.page === "run") initRun();
