package traces_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/traces"
)

// BenchmarkRecordingEmit measures recording one event with nobody subscribed.
func BenchmarkRecordingEmit(b *testing.B) {
	rec := newRecording(b, 0)
	e := traces.Event{Kind: traces.KindMessage, Agent: "root", RunPath: []string{"root"}, Message: &traces.Message{Role: "assistant", Content: "hello"}}
	b.ReportAllocs()
	for b.Loop() {
		rec.Emit(e)
	}
}

// BenchmarkBrokerFanout10 measures one run's events reaching 10 subscribers that read
// concurrently, each found through the broker. A reader that falls behind is dropped and resumes
// where it left off, as a browser would; "drops" counts those. ns/op is per event emitted.
func BenchmarkBrokerFanout10(b *testing.B) {
	const readers = 10
	broker := traces.NewBroker(0)
	rec := newRecording(b, 0)
	if err := broker.Add(rec); err != nil {
		b.Fatal(err)
	}
	e := traces.Event{Kind: traces.KindMessage, Agent: "root", Message: &traces.Message{Role: "assistant", Content: "hello"}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var delivered, drops int64
	ready := make(chan struct{}, readers)
	for range readers {
		wg.Go(func() {
			got, dropped := follow(b, broker, ready)
			mu.Lock()
			delivered, drops = delivered+got, drops+dropped
			mu.Unlock()
		})
	}
	for range readers {
		<-ready
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		rec.Emit(e)
	}
	rec.Finish(traces.StatusCompleted, "")
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if want := int64(readers * (b.N + 1)); delivered != want {
		b.Fatalf("delivered %d events, want %d", delivered, want)
	}
	b.ReportMetric(float64(delivered)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(drops), "drops")
}

// follow reads run r1 from the broker to the end, resuming after every drop, and returns how
// many events it read and how often it was dropped. It signals ready once first subscribed.
func follow(b *testing.B, broker *traces.Broker, ready chan<- struct{}) (read, drops int64) {
	rec, err := broker.Get("r1")
	if err != nil {
		b.Error(err)
		ready <- struct{}{}
		return 0, 0
	}
	var last int64
	sub := rec.Subscribe(last)
	ready <- struct{}{}
	for {
		for e := range sub.C() {
			if e.Seq != last+1 {
				b.Errorf("got seq %d after %d", e.Seq, last)
			}
			last = e.Seq
			read++
		}
		var slow *traces.SlowError
		if !errors.As(sub.Err(), &slow) {
			return read, drops
		}
		drops++
		sub = rec.Subscribe(slow.Resume)
	}
}

// BenchmarkMarshal measures writing a 5,000-event trace.
func BenchmarkMarshal(b *testing.B) {
	t := bigTrace(5000)
	b.SetBytes(int64(len(mustMarshal(b, t))))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := traces.Marshal(t); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnmarshal measures reading and checking the same 5,000-event trace.
func BenchmarkUnmarshal(b *testing.B) {
	data := mustMarshal(b, bigTrace(5000))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := traces.Unmarshal(data); err != nil {
			b.Fatal(err)
		}
	}
}
