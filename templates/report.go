package templates

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/baton-dev/baton/static"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// reportAssets is what the report inlines, each ready to be written raw inside its element.
type reportAssets struct {
	css, js, trace string
	csp            string // allows exactly the inline style and script above, and nothing remote
}

// Report writes the self-contained HTML report of tr to w: one file that opens offline, makes no
// network request and carries the trace file itself (the JSON that traces.Marshal writes) in a
// <script type="application/json">. The page is the run page after the last event, rendered by
// its components, with the inspector of every event rendered in advance.
func Report(ctx context.Context, w io.Writer, tr traces.Trace) error {
	assets, err := newReportAssets(tr)
	if err != nil {
		return err
	}
	return reportPage(web.NewReport(tr), assets).Render(ctx, w)
}

func newReportAssets(tr traces.Trace) (reportAssets, error) {
	css, err := fs.ReadFile(static.FS, "app.css")
	if err != nil {
		return reportAssets{}, fmt.Errorf("report: read app.css: %w", err)
	}
	js, err := fs.ReadFile(static.FS, "report.js")
	if err != nil {
		return reportAssets{}, fmt.Errorf("report: read report.js: %w", err)
	}
	data, err := traces.Marshal(tr)
	if err != nil {
		return reportAssets{}, fmt.Errorf("report: encode run %s: %w", tr.Run.ID, err)
	}
	// \u003c for every "<" (and > & U+2028 U+2029 likewise), still the same JSON: no string in
	// the trace can close the element or open a comment in it.
	var trace bytes.Buffer
	json.HTMLEscape(&trace, data)
	// Our own files: neither holds "</style" or "</script", so they can be inlined as they are.
	a := reportAssets{css: string(css), js: string(js), trace: trace.String()}
	if strings.Contains(strings.ToLower(a.css), "</style") || strings.Contains(strings.ToLower(a.js), "</script") {
		return reportAssets{}, fmt.Errorf("report: an inlined asset closes its element")
	}
	a.csp = "default-src 'none'; style-src '" + hash(a.css) + "'; script-src '" + hash(a.js) +
		"'; img-src data:; base-uri 'none'; form-action 'none'"
	return a, nil
}

// hash returns s's CSP source expression.
func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}
