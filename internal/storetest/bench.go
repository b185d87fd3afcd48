package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// BenchWrite measures how many events a second a server writes into the store open returns: runs
// recorded at once, each of 2,000 message events emitted as fast as they come, written by the
// broker as a server's is (each run's writer commits what has come since its last commit), until
// the store holds them all. It reports events/s; every store's benchmarks call it, so that their
// numbers compare.
func BenchWrite(b *testing.B, open func(b *testing.B) live.Store) {
	const events = 2000
	for _, runs := range []int{1, 8} {
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) {
			s := open(b)
			written := 0
			for b.Loop() {
				broker := live.NewStoredBroker(0, s, nil)
				var wg sync.WaitGroup
				for range runs {
					rec := traces.NewRecording(traces.Run{ID: traces.NewRunID(), Flow: "bench", Input: "write as fast as events come"}, nil)
					if err := broker.Add(rec); err != nil {
						b.Fatal(err)
					}
					wg.Go(func() {
						for i := range events {
							rec.Emit(traces.Event{Kind: traces.KindMessage, Agent: "writer", Message: &traces.Message{Role: "assistant",
								Content: fmt.Sprintf("Step %d: the answer mentions invoice-%d and warehouse %d.", i, i*7919, i%97)}})
						}
						rec.Finish(traces.StatusCompleted, "")
					})
				}
				wg.Wait()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				err := broker.Close(ctx)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				written += runs * (events + 1)
			}
			b.ReportMetric(float64(written)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
