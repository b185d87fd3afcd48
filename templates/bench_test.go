package templates_test

import (
	"context"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
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

// BenchmarkReport measures the self-contained report of a 10,000-event run (rows, inspections,
// agent summaries, frames and the trace rendered and packed) beside the run page of the same run,
// interleaved: compare their ns/op, cpu-ms (the process's CPU time, the collector's included:
// on a shared machine wall time says more about the neighbours) and MB.
//
//	go test ./templates -run '^$' -bench BenchmarkReport -benchtime 1x -count 5
func BenchmarkReport(b *testing.B) {
	tr := webtest.Big(10000)
	ctx := context.Background()
	for _, bc := range []struct {
		name   string
		render func(w io.Writer) error
	}{
		{"page", func(w io.Writer) error { return templates.RunPage(tr, templates.PageOptions{}).Render(ctx, w) }},
		{"report", func(w io.Writer) error { return templates.Report(ctx, w, tr, nil) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var n countWriter
			cpu := cpuTime()
			for b.Loop() {
				n = 0
				if err := bc.render(&n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/1e6, "cpu-ms")
			b.ReportMetric(float64(n)/1e6, "MB")
		})
	}
}

// cpuTime returns the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// countWriter counts the bytes written to it.
type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

// BenchmarkSequenceFragment measures the sequence view's data fragment of a supervisor-shaped
// run of 1,000 and 10,000 events: whole (what a page load and a time-travel step carry) and the
// delta of one live update (the newest event). Compare ns/op and KB across sizes: a delta should
// cost the same at both.
//
//	go test ./templates -run '^$' -bench SequenceFragment -count 5
func BenchmarkSequenceFragment(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1_000, 10_000} {
		tr := webtest.Big(n)
		vs := web.NewViewState(tr.Run, tr.Agents)
		vs.Add(tr.Events...)
		for _, bc := range []struct {
			name  string
			after int64
		}{{"whole", 0}, {"delta", vs.Seq() - 1}} {
			b.Run(fmt.Sprintf("events=%d/%s", n, bc.name), func(b *testing.B) {
				var size int
				b.ReportAllocs()
				for b.Loop() {
					f, err := templates.Sequence(ctx, vs.Sequence(bc.after, vs.Seq()))
					if err != nil {
						b.Fatal(err)
					}
					size = len(f.HTML)
				}
				b.ReportMetric(float64(size)/1e3, "KB")
			})
		}
	}
}

// BenchmarkRunPageBig measures, on finished supervisor-shaped runs of 1,000, 10,000 and 100,000
// events, what a run page costs the server: rendering it with its newest 400 rows (as
// GET /runs/:id does) beside the whole timeline (1k and 10k only: 100k would be some 60 MB),
// and one live update (an event added, what it changed computed and its fragments rendered) at
// that size.
// The MB metric is the page's size.
//
//	go test ./templates -run '^$' -bench RunPageBig -count 3
func BenchmarkRunPageBig(b *testing.B) {
	shape := webtest.Big(300).Events[1:]
	next := func(i int) traces.Event {
		e := shape[i%len(shape)]
		e.Seq, e.Time = int64(i+1), time.Unix(int64(i), 0)
		return e
	}
	ctx := context.Background()
	build := func(n int) *web.ViewState {
		vs := web.NewViewState(traces.Run{ID: "r-bench", Flow: "supervisor", Status: traces.StatusRunning}, webtest.SupervisorAgents())
		for i := range n {
			vs.Add(next(i))
		}
		return vs
	}
	for _, n := range []int{1_000, 10_000, 100_000} {
		vs := build(n)
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
		// Each round adds an event: a run built anew (untimed) every n/100 rounds keeps the
		// updates measured within 1% of the stated size.
		b.Run(fmt.Sprintf("events=%d/live", n), func(b *testing.B) {
			vs, i := build(n), n
			b.ReportAllocs()
			for b.Loop() {
				if i == n+n/100 {
					b.StopTimer()
					vs, i = build(n), n
					b.StartTimer()
				}
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
