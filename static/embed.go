// Package static holds the run page's stylesheet and client script, embedded in the binary. The
// server serves FS at /static/.
package static

import "embed"

// FS holds app.css and the client's modules at its root; app.js is the one a page loads, the
// others are what it imports, except report.js: the report's module, which a report file inlines
// with the modules it imports as one script.
//
//go:embed app.css *.js
var FS embed.FS
