// Package static holds the pages' stylesheet and client script (ES modules, no build step),
// embedded in the binary. The server serves FS at /static/; the report inlines app.css and
// report.js with the modules it imports. The modules' unit tests are in static/test (node --test),
// which FS leaves out.
//
// It is Baton's own, not a supported API: it may change in any release.
package static

import "embed"

// FS holds app.css and the client's modules at its root; app.js is the one a page loads, the
// others are what it imports, except report.js: the report's module, which a report file inlines
// with the modules it imports as one script.
//
//go:embed app.css favicon.svg *.js
var FS embed.FS
