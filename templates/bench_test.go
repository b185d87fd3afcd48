package templates_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
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

// BenchmarkRunPageBig measures, on finished supervisor-shaped runs of 1,000, 10,000 and 100,000
// events, what a run page costs the server: rendering it with its newest 400 rows (as
// GET /runs/:id does) beside the whole timeline (1k and 10k only: 100k would be some 60 MB),
// and one live update (an event added, what it changed computed and its fragments rendered).
// The MB metric is the page's size.
//
//	go test ./templates -run x -bench RunPageBig -count 3
func BenchmarkRunPageBig(b *testing.B) {
	shape := webtest.Big(300).Events[1:]
	next := func(i int) traces.Event {
		e := shape[i%len(shape)]
		e.Seq, e.Time = int64(i+1), time.Unix(int64(i), 0)
		return e
	}
	ctx := context.Background()
	for _, n := range []int{1_000, 10_000, 100_000} {
		vs := web.NewViewState(traces.Run{ID: "r-bench", Flow: "supervisor", Status: traces.StatusRunning}, webtest.SupervisorAgents())
		for i := range n {
			vs.Add(next(i))
		}
		page := func(rows int) func(b *testing.B) {
			return func(b *testing.B) {
				var size countWriter
				b.ReportAllocs()
				for b.Loop() {
					size = 0
					if err := templates.RunView(vs.Page(rows), templates.PageOptions{}).Render(ctx, &size); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(size)/1e6, "MB")
			}
		}
		b.Run(fmt.Sprintf("events=%d/page", n), page(400))
		if n <= 10_000 {
			b.Run(fmt.Sprintf("events=%d/whole", n), page(0))
		}
		b.Run(fmt.Sprintf("events=%d/live", n), func(b *testing.B) {
			i := n
			b.ReportAllocs()
			for b.Loop() {
				from := vs.Seq()
				vs.Add(next(i))
				i++
				u := vs.Update(from)
				if _, err := templates.Parts(ctx, u); err != nil {
					b.Fatal(err)
				}
				if _, err := templates.Rows(ctx, append(u.Amended, vs.Rows(from, 0)...)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
