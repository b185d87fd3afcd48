package postgres_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/postgres"
	"github.com/baton-dev/baton/internal/postgres/pgtest"
	"github.com/baton-dev/baton/traces"
)

// BenchmarkFollowLatency: how long after a viewer on server A sees an event (A has committed it:
// its viewers read only what is committed) a viewer on server B sees it, B following A's run
// through the database (LISTEN, then a read of the new rows). Two stores on one PostgreSQL
// cluster of its own with its durable defaults, two brokers, one run on A paced at one message
// every pace; b.N events. Metrics: the p50, p99 and max of that delay, and the p99 from A's
// Emit to B's viewer, in ms.
//
//	go test ./internal/postgres -run '^$' -bench FollowLatency -benchtime 2000x -count 5
func BenchmarkFollowLatency(b *testing.B) {
	const pace = time.Millisecond
	c, err := pgtest.Start(pgtest.Options{Durable: true})
	if err != nil {
		if _, berr := pgtest.Bin(); berr != nil && !pgtest.Required() {
			b.Skip(berr)
		}
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Stop() })
	url, err := c.NewDatabase()
	if err != nil {
		b.Fatal(err)
	}
	open := func() *postgres.Store {
		s, err := postgres.Open(url, -1)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	quiet := slog.New(slog.DiscardHandler)
	sa, sb := open(), open()
	defer sb.Close()
	defer sa.Close()
	recorder, follower := live.NewStoredBroker(0, sa, quiet), live.NewStoredBroker(0, sb, quiet)
	follower.Follow(sb, 0)
	sb.Listen(follower.Committed, quiet)
	defer follower.Close(context.Background())
	defer recorder.Close(context.Background())

	rec := traces.NewRecording(traces.Run{ID: "r-bench", Flow: "bench"}, []traces.Agent{{Name: "a"}})
	if err := recorder.Add(rec); err != nil {
		b.Fatal(err)
	}
	rec.Emit(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}})
	onA := rec.Subscribe(0)
	var onB *traces.Subscription
	for deadline := time.Now().Add(30 * time.Second); onB == nil; time.Sleep(time.Millisecond) {
		if got, err := follower.Get("r-bench"); err == nil {
			onB = got.Subscribe(0)
		} else if time.Now().After(deadline) {
			b.Fatal(err)
		}
	}
	n := b.N + 2 // run.started, b.N messages, run.finished
	emitted, seenA, seenB := make([]time.Time, n+1), make([]time.Time, n+1), make([]time.Time, n+1)
	watch := func(sub *traces.Subscription, seen []time.Time) chan struct{} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]traces.Event, 64)
			for {
				k, err := sub.Read(context.Background(), buf)
				now := time.Now()
				for _, e := range buf[:k] {
					seen[e.Seq] = now
				}
				if err == io.EOF {
					return
				}
			}
		}()
		return done
	}
	b.ResetTimer()
	doneA, doneB := watch(onA, seenA), watch(onB, seenB)
	emitted[1] = time.Now()
	t := time.NewTicker(pace)
	for i := range b.N {
		<-t.C
		emitted[i+2] = time.Now()
		rec.Emit(traces.Event{Kind: traces.KindMessage, Agent: "a", Message: &traces.Message{Role: "assistant", Content: "a reply of a paced run"}})
	}
	t.Stop()
	emitted[n] = time.Now()
	rec.Finish(traces.StatusCompleted, "")
	<-doneA
	select {
	case <-doneB:
	case <-time.After(30 * time.Second):
		b.Fatal("B's viewer has not seen the run end within 30 s of A's")
	}
	b.StopTimer()
	var behindA, fromEmit []time.Duration
	for seq := 2; seq <= n; seq++ { // run.started was there before B's viewer
		behindA = append(behindA, seenB[seq].Sub(seenA[seq]))
		fromEmit = append(fromEmit, seenB[seq].Sub(emitted[seq]))
	}
	slices.Sort(behindA)
	slices.Sort(fromEmit)
	q := func(d []time.Duration, p float64) float64 {
		return float64(d[int(p*float64(len(d)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(q(behindA, 0.5), "p50-ms")
	b.ReportMetric(q(behindA, 0.99), "p99-ms")
	b.ReportMetric(q(behindA, 1), "max-ms")
	b.ReportMetric(q(fromEmit, 0.99), "emit-p99-ms")
	b.ReportMetric(0, "ns/op")
}
