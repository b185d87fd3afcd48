package templates

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/static"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// reportAssets is what the report inlines, each ready to be written raw inside its element.
type reportAssets struct {
	css, js, trace string
	csp            string // allows exactly the inline style and script above, and nothing remote
}

// Report writes the self-contained HTML report of tr to w: one file that opens offline and makes
// no network request. The page is the run page after the last event, rendered by its
// components; the inspector of every event and agent, and the tree, header and session as of
// the events its scrubber can show (web.ReportFrames), are rendered by the same components in
// advance and packed (see pack); so is the trace file itself (the JSON traces.Marshal writes).
func Report(ctx context.Context, w io.Writer, tr traces.Trace, p prices.Table) error {
	assets, err := newReportAssets(tr)
	if err != nil {
		return err
	}
	r := web.NewReport(tr, web.WithPrices(p))
	packs, err := reportPacks(ctx, r)
	if err != nil {
		return fmt.Errorf("report of run %s: %w", tr.Run.ID, err)
	}
	return reportPage(r, story.Of(tr), packs, assets).Render(ctx, w)
}

// A pack is a share of the report's pre-rendered HTML, kept small in the file and opened by
// static/report.js only when it is shown: a JSON object from each key (an event's seq, an
// agent's name) to its HTML (an inspection, the sequence view's #seq-data) or its fragments (a
// frame), gzipped, then base64.
// A long run's report would otherwise hold megabytes of markup per thousand events, most of it
// the same from one inspection to the next.
type pack struct {
	Kind string   // rows, inspection, agent, frame or sequence
	Keys []string // what it holds, in order
	Data string   // base64 of the gzipped JSON
}

// Pack sizes: a pack is opened whole when one of its keys is shown; the rows' packs all at once,
// in order, when the report opens.
const (
	rowsPerPack        = 1000
	inspectionsPerPack = 200
	framesPerPack      = 16
)

// reportPacks renders r's timeline rows, inspections, agent summaries, frames and sequence view
// into packs.
func reportPacks(ctx context.Context, r web.Report) ([]pack, error) {
	var out []pack
	var p packer
	for i := 0; i < len(r.View.Timeline); i += rowsPerPack {
		rows, err := Rows(ctx, r.View.Timeline[i:min(i+rowsPerPack, len(r.View.Timeline))])
		if err != nil {
			return nil, err
		}
		p.add(strconv.Itoa(i/rowsPerPack), strings.Join(rows, ""))
		out = append(out, p.close("rows"))
	}
	for i, in := range r.Inspections {
		html, err := render(ctx, inspection(in))
		if err != nil {
			return nil, fmt.Errorf("render inspection %d: %w", in.Seq, err)
		}
		p.add(strconv.FormatInt(in.Seq, 10), html)
		if (i+1)%inspectionsPerPack == 0 || i == len(r.Inspections)-1 {
			out = append(out, p.close("inspection"))
		}
	}
	for _, s := range r.Agents {
		html, err := render(ctx, agentSummary(s))
		if err != nil {
			return nil, fmt.Errorf("render agent %s: %w", s.Name, err)
		}
		p.add(s.Name, html)
		out = append(out, p.close("agent"))
	}
	for i, u := range r.Frames {
		frags, err := Parts(ctx, u)
		if err != nil {
			return nil, err
		}
		p.add(strconv.FormatInt(u.Seq, 10), frags)
		if (i+1)%framesPerPack == 0 || i == len(r.Frames)-1 {
			out = append(out, p.close("frame"))
		}
	}
	html, err := render(ctx, sequenceData(r.View.Sequence))
	if err != nil {
		return nil, fmt.Errorf("render the sequence view: %w", err)
	}
	p.add("0", html)
	return append(out, p.close("sequence")), p.err
}

// packer gathers one pack's values.
type packer struct {
	keys   []string
	values map[string]any
	err    error
}

func (p *packer) add(key string, v any) {
	if p.values == nil {
		p.values = make(map[string]any)
	}
	p.keys, p.values[key] = append(p.keys, key), v
}

// close returns the pack of what was added since the last close.
func (p *packer) close(kind string) pack {
	out := pack{Kind: kind, Keys: p.keys}
	data, err := json.Marshal(p.values)
	if err == nil {
		out.Data, err = gzipBase64(data)
	}
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("pack %s %s: %w", kind, p.keys[0], err)
	}
	p.keys, p.values = nil, nil
	return out
}

// gzipBase64 returns data gzipped (fastest level: the markup repeats itself, so even that
// shrinks it about twentyfold) in base64, which cannot close the element it is written in.
func gzipBase64(data []byte) (string, error) {
	var b bytes.Buffer
	enc := base64.NewEncoder(base64.StdEncoding, &b)
	zw, err := gzip.NewWriterLevel(enc, gzip.BestSpeed)
	if err != nil {
		return "", err
	}
	if _, err := zw.Write(data); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// element returns p's <script> element. Its attributes are escaped; its base64 text needs not be.
func (p pack) element() string {
	keys, _ := json.Marshal(p.Keys) // strings always marshal
	return `<script type="application/octet-stream" class="report-pack" data-testid="report-pack" data-kind="` +
		html.EscapeString(p.Kind) + `" data-keys="` + html.EscapeString(string(keys)) + `">` + p.Data + `</script>`
}

func newReportAssets(tr traces.Trace) (reportAssets, error) {
	css, err := fs.ReadFile(static.FS, "app.css")
	if err != nil {
		return reportAssets{}, fmt.Errorf("report: read app.css: %w", err)
	}
	js, err := reportScript()
	if err != nil {
		return reportAssets{}, err
	}
	data, err := traces.Marshal(tr)
	if err != nil {
		return reportAssets{}, fmt.Errorf("report: encode run %s: %w", tr.Run.ID, err)
	}
	// A long supervisor run's trace repeats its growing run path in every event: packed, 10,000
	// events take 1.6 MB instead of 90.
	trace, err := gzipBase64(data)
	if err != nil {
		return reportAssets{}, fmt.Errorf("report: pack run %s: %w", tr.Run.ID, err)
	}
	// Our own files: neither holds "</style" or "</script", so they can be inlined as they are.
	a := reportAssets{css: string(css), js: string(js), trace: trace}
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

// ReadReportTrace returns the trace a report written by Report carries, read from the report's
// HTML, checked as traces.Unmarshal checks a trace file. It inflates the whole trace in memory:
// it is meant for reports Baton wrote.
func ReadReportTrace(html []byte) (traces.Trace, error) {
	const open = `<script type="application/octet-stream" id="report-trace" data-encoding="gzip+base64">`
	_, rest, ok := bytes.Cut(html, []byte(open))
	if !ok {
		return traces.Trace{}, traces.Errorf(traces.CodeInvalid, "not a Baton report: it has no embedded trace")
	}
	data, _, ok := bytes.Cut(rest, []byte("</script>"))
	if !ok {
		return traces.Trace{}, traces.Errorf(traces.CodeInvalid, "the report's embedded trace is cut short")
	}
	zr, err := gzip.NewReader(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(data)))
	if err != nil {
		return traces.Trace{}, traces.Errorf(traces.CodeInvalid, "the report's embedded trace is damaged: %v", err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		return traces.Trace{}, traces.Errorf(traces.CodeInvalid, "the report's embedded trace is damaged: %v", err)
	}
	return traces.Unmarshal(plain)
}
