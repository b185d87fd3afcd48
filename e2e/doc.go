// Package e2e holds Baton's end-to-end tests: the real server, in process, driven through a real
// headless Chromium with chromedp, clicking what a user clicks and checking what a user sees.
// They skip when chromium is missing, unless BATON_REQUIRE_BROWSER=1 or CI=true (./test.sh sets
// the former and installs chromium). `go test -run TestMeasure -v ./e2e/` logs the page's
// latency and load-time measurements.
//
// A test that needs a run still going on while the page acts holds it before a model reply
// (gated, holdAt: agentstest.Gate) and opens the gate when done; a pace that must outlast the
// page's actions fails on a loaded machine.
//
// A page a click sends the browser to is looked at once it has loaded (runPageLoaded): until then
// the server's HTML may be there only in part, a section without what follows it.
package e2e
