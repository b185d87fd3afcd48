package templates_test

import (
	"context"
	"io"
	"testing"

	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/web/webtest"
)

// BenchmarkFragments measures one live update: a 3,000-event run gets one more event.
func BenchmarkFragments(b *testing.B) {
	tr := webtest.Big(3000)
	from := tr.Events[len(tr.Events)-2].Seq
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		frags, err := templates.Fragments(ctx, tr, from)
		if err != nil || len(frags) == 0 {
			b.Fatal(err, len(frags))
		}
	}
}

// BenchmarkRunPage measures rendering the whole page of the same 3,000-event run.
func BenchmarkRunPage(b *testing.B) {
	tr := webtest.Big(3000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := templates.RunPage(tr, templates.PageOptions{}).Render(ctx, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReport measures the self-contained report of a 10,000-event run (every inspection
// rendered in advance, the trace embedded) beside the run page of the same run, interleaved:
// compare their ns/op and MB.
func BenchmarkReport(b *testing.B) {
	tr := webtest.Big(10000)
	ctx := context.Background()
	for _, bc := range []struct {
		name   string
		render func(w io.Writer) error
	}{
		{"page", func(w io.Writer) error { return templates.RunPage(tr, templates.PageOptions{}).Render(ctx, w) }},
		{"report", func(w io.Writer) error { return templates.Report(ctx, w, tr) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var n countWriter
			for b.Loop() {
				n = 0
				if err := bc.render(&n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)/1e6, "MB")
		})
	}
}

// countWriter counts the bytes written to it.
type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }
