package web_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
	"github.com/baton-dev/baton/web/webtest"
)

// BenchmarkViewStateUpdate measures one live update of a supervisor-shaped run at event 100 and
// 100,000: one event added, and what it changed computed.
//
//	go test ./web -run x -bench ViewStateUpdate
func BenchmarkViewStateUpdate(b *testing.B) {
	shape := webtest.Big(300).Events[1:]
	for _, at := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("at=%d", at), func(b *testing.B) {
			vs := web.NewViewState(traces.Run{ID: "r-bench", Status: traces.StatusRunning}, webtest.SupervisorAgents())
			next := func(i int) traces.Event {
				e := shape[i%len(shape)]
				e.Seq, e.Time = int64(i+1), time.Unix(int64(i), 0)
				return e
			}
			for i := range at {
				vs.Add(next(i))
			}
			b.ReportAllocs()
			i := at
			for b.Loop() {
				vs.Add(next(i))
				i++
				vs.Update(int64(i - 1))
			}
		})
	}
}

// BenchmarkViewStateAt measures one step of time travel on a finished supervisor-shaped run of
// 1,000, 10,000 and 100,000 events: the state as of its next-to-last event (a replay of the
// events up to it, the dearest step) and the redraw the page swaps in.
//
//	go test ./web -run x -bench ViewStateAt -count 5
func BenchmarkViewStateAt(b *testing.B) {
	shape := webtest.Big(300).Events[1:]
	for _, n := range []int{1_000, 10_000, 100_000} {
		vs := web.NewViewState(traces.Run{ID: "r-bench", Status: traces.StatusCompleted}, webtest.SupervisorAgents())
		for i := range n {
			e := shape[i%len(shape)]
			e.Seq, e.Time = int64(i+1), time.Unix(int64(i), 0)
			vs.Add(e)
		}
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				vs.At(int64(n - 1)).Redraw()
			}
		})
	}
}
