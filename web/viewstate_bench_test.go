package web_test

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// BenchmarkViewStateUpdate measures one live update of a supervisor-shaped run at event 100 and
// 100,000: one event added, and what it changed computed.
//
//	go test ./web -run '^$' -bench ViewStateUpdate
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
// 1,000, 10,000 and 100,000 events: the state as of its next-to-last event (the dearest step for
// a replay from the first event) and the redraw the page swaps in, replayed from the start
// ("replay", ViewState.At) and from a Travel's nearest copy ("travel", what the server does),
// interleaved. "MB-kept" is the heap the Travel's copies hold.
//
//	go test ./web -run '^$' -bench ViewStateAt -count 5
func BenchmarkViewStateAt(b *testing.B) {
	shape := webtest.Big(300).Events[1:]
	for _, n := range []int{1_000, 10_000, 100_000} {
		vs := web.NewViewState(traces.Run{ID: "r-bench", Status: traces.StatusCompleted}, webtest.SupervisorAgents())
		for i := range n {
			e := shape[i%len(shape)]
			e.Seq, e.Time = int64(i+1), time.Unix(int64(i), 0)
			vs.Add(e)
		}
		tr := vs.Trace()
		before := heap()
		travel := web.NewTravel()
		travel.At(tr, int64(n-1))                         // makes its copies
		kept := (float64(heap()) - float64(before)) / 1e6 // can be below 0 by noise, when it is small
		for _, name := range []string{"replay", "travel"} {
			b.Run(fmt.Sprintf("events=%d/%s", n, name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if name == "replay" {
						vs.At(int64(n - 1)).Redraw()
					} else {
						travel.At(tr, int64(n-1)).Redraw()
					}
				}
				if name == "travel" {
					b.ReportMetric(kept, "MB-kept")
				}
			})
		}
		runtime.KeepAlive(travel)
	}
}

// cpuTime returns the CPU time the process has used, every goroutine's and the collector's.
func cpuTime() float64 {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()).Seconds()
}

// heap returns the bytes the heap holds after a collection.
func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkFindRows measures the server's search of a partial timeline on a finished
// supervisor-shaped run of 1,000, 10,000 and 100,000 events: the newest 400 rows holding a text
// and the count of all that hold it (what a search in a big run's page asks), and the next 400
// rows of a gap without filters. The first search of a run, which makes the events' search
// texts, is reported apart (first-ms), with the longest of its turns (turn-ms: the most a live
// viewer of the run waits for it).
//
//	go test ./web -run '^$' -bench FindRows -count 3
func BenchmarkFindRows(b *testing.B) {
	shape := webtest.Big(300).Events[1:]
	build := func(n int) *web.ViewState {
		vs := web.NewViewState(traces.Run{ID: "r-bench", Status: traces.StatusCompleted}, webtest.SupervisorAgents())
		for i := range n {
			e := shape[i%len(shape)]
			e.Seq, e.Time = int64(i+1), time.Unix(int64(i), 0)
			vs.Add(e)
		}
		return vs
	}
	for _, n := range []int{1_000, 10_000, 100_000} {
		vs := build(n)
		search := web.RowFilter{Text: "result 17"}
		b.Run(fmt.Sprintf("events=%d/search", n), func(b *testing.B) {
			// The first search makes every event's search text and keeps it, in turns as the
			// server does (a live viewer waits for one turn at most): timed apart, on a run of
			// its own in each round (-count).
			vs := build(n)
			t0 := time.Now()
			var turn time.Duration
			for done := false; !done; {
				t1 := time.Now()
				done = vs.IndexSearch(web.SearchTurn)
				turn = max(turn, time.Since(t1))
			}
			first := time.Since(t0)
			b.ReportAllocs()
			for b.Loop() {
				vs.FindRows(search, 0, 0, 400, false)
				vs.CountRows(search)
			}
			b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
			b.ReportMetric(float64(turn.Microseconds())/1000, "turn-ms")
		})
		b.Run(fmt.Sprintf("events=%d/gap", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				vs.FindRows(web.RowFilter{}, 0, int64(n/2), 400, false)
			}
		})
	}
}

// BenchmarkViewStateKeep measures the view state of a supervisor-shaped run of 100,000 and
// 1,000,000 events (webtest.Large) taken in whole, as a large import's or a run read back from its
// store is: every piece's add of every event. "B-kept/event" is the heap the state holds beyond
// the events, after a collection; "cpu-s/op" the process's CPU time while it took them in (the
// search notes' goroutine's and the collector's too).
//
//	go test ./web -run '^$' -bench ViewStateKeep -benchtime 1x -count 3
func BenchmarkViewStateKeep(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			tr := webtest.Large(n)
			var kept, cpu float64
			for b.Loop() {
				b.StopTimer()
				events := append([]traces.Event(nil), tr.Events...) // Keep keeps them: each round its own
				before := heap()
				b.StartTimer()
				t0 := cpuTime()
				vs := web.NewViewState(tr.Run, tr.Agents)
				vs.Keep(events)
				cpu += cpuTime() - t0
				b.StopTimer()
				kept = (float64(heap()) - float64(before)) / float64(len(events))
				runtime.KeepAlive(vs)
				b.StartTimer()
			}
			b.ReportMetric(kept, "B-kept/event")
			b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
		})
	}
}
