// Package static holds the run page's stylesheet and client script, embedded in the binary. The
// server serves FS at /static/.
package static

import "embed"

// FS holds app.css and app.js at its root.
//
//go:embed app.css app.js
var FS embed.FS
