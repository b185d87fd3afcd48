package live_test

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/sqlite"
	"github.com/baton-dev/baton/traces"
)

// BenchmarkViewerLatency measures what the durability promise costs a live viewer: a run stored in
// SQLite emits its events (200, 250 µs apart, as a paced run; or 5,000 at once) while one
// subscriber (a viewer's feed) reads them, with the commit gate off (a viewer sees an event as it
// is recorded; the writer batches 10 ms) and on (once the store committed it; the writer commits
// what it has at once). It reports the time from an event's Emit to its read, median and 99th
// percentile, and from the run's Finish to the subscriber's end; ns/op is the run until it is
// read and written whole.
//
//	go test ./traces -run '^$' -bench ViewerLatency -count 5
func BenchmarkViewerLatency(b *testing.B) {
	store, err := sqlite.Open(filepath.Join(b.TempDir(), "baton.db"), -1)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	for _, c := range []struct {
		name   string
		events int
		gap    time.Duration
		gated  bool
	}{
		{"paced/ungated", 200, 250 * time.Microsecond, false}, {"paced/gated", 200, 250 * time.Microsecond, true},
		{"burst/ungated", 5000, 0, false}, {"burst/gated", 5000, 0, true},
	} {
		events, gap, gated := c.events, c.gap, c.gated
		b.Run(c.name, func(b *testing.B) {
			broker := live.NewStoredBroker(0, store, nil)
			live.SetGate(broker, gated)
			var lat []time.Duration
			var ends []time.Duration
			for b.Loop() {
				rec := traces.NewRecording(traces.Run{ID: traces.NewRunID(), Flow: "bench"}, nil)
				if err := broker.Add(rec); err != nil {
					b.Fatal(err)
				}
				sub := rec.Subscribe(0)
				read := make(chan []time.Duration)
				var finished time.Time
				var end time.Duration
				go func() {
					var got []time.Duration
					buf := make([]traces.Event, 64)
					for {
						n, err := sub.Read(context.Background(), buf)
						now := time.Now()
						for _, e := range buf[:n] {
							got = append(got, now.Sub(e.Time))
						}
						if err == io.EOF {
							end = now.Sub(finished)
							read <- got
							return
						}
					}
				}()
				next := time.Now()
				rec.Emit(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{}})
				for i := 1; i < events; i++ {
					if gap > 0 {
						next = next.Add(gap)
						time.Sleep(time.Until(next))
					}
					rec.Emit(traces.Event{Kind: traces.KindMessage, Message: &traces.Message{Role: "assistant", Content: "a reply of a few words"}})
				}
				finished = time.Now()
				rec.Finish(traces.StatusCompleted, "")
				lat = append(lat, <-read...)
				ends = append(ends, end)
				if err := broker.Close(context.Background()); err != nil { // written whole
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if err := broker.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
			slices.Sort(lat)
			slices.Sort(ends)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(ends[len(ends)/2].Microseconds()), "end-µs")
		})
	}
}
