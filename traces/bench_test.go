package traces_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/grow"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
)

// BenchmarkRecordingEmit measures recording one event, with nobody subscribed and with two
// subscribers reading as they can (a live page's feed and the store's writer, say). Runs are runLen
// events long, so that the heap stays the size of a long run's rather than growing to gigabytes
// with b.N. cpu-ns/op is the process's CPU time (readers and collector included), which the
// machine's other load moves less than ns/op.
func BenchmarkRecordingEmit(b *testing.B) {
	const runLen = 1 << 15
	e := traces.Event{Kind: traces.KindMessage, Agent: "root", RunPath: []string{"root"}, Message: &traces.Message{Role: "assistant", Content: "hello"}}
	for _, readers := range []int{0, 2} {
		b.Run(fmt.Sprintf("subscribers=%d", readers), func(b *testing.B) {
			var rec *traces.Recording
			var wg sync.WaitGroup
			start := func() { // a new run and its readers
				rec = newRecording(b)
				ready := make(chan struct{}, readers)
				for range readers {
					wg.Go(func() { follow(b, rec, ready) })
				}
				for range readers {
					<-ready
				}
			}
			start()
			b.ReportAllocs()
			cpu, n := cpuTime(), 0
			for b.Loop() {
				if rec.Emit(e).Seq == runLen {
					rec.Finish(traces.StatusCompleted, "")
					start()
				}
				n++
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(n), "cpu-ns/op")
			b.StopTimer()
			rec.Finish(traces.StatusCompleted, "")
			wg.Wait()
		})
	}
}

// cpuTime is the CPU time the process has used so far.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// BenchmarkRecordingFanout10 measures one run's events reaching 10 subscribers that read
// concurrently. ns/op is per event emitted.
func BenchmarkRecordingFanout10(b *testing.B) {
	const readers = 10
	rec := newRecording(b)
	e := traces.Event{Kind: traces.KindMessage, Agent: "root", Message: &traces.Message{Role: "assistant", Content: "hello"}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var delivered int64
	ready := make(chan struct{}, readers)
	for range readers {
		wg.Go(func() {
			got := follow(b, rec, ready)
			mu.Lock()
			delivered += got
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
}

// follow reads rec to the end, 64 events at a time at most, as the server's feed does, and
// returns how many events it read. It signals ready once subscribed.
func follow(b *testing.B, rec *traces.Recording, ready chan<- struct{}) (read int64) {
	var last int64
	sub := rec.Subscribe(last)
	ready <- struct{}{}
	buf := make([]traces.Event, 64)
	for {
		n, err := sub.Read(context.Background(), buf)
		if err != nil {
			return read
		}
		for _, e := range buf[:n] {
			if e.Seq != last+1 {
				b.Errorf("got seq %d after %d", e.Seq, last)
			}
			last = e.Seq
			read++
		}
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

// recordedRun returns the events a recorder emits for one agent calling a tool n times, ten calls a
// model reply, its model fed the whole conversation each time (the input growing in one array, as
// the recorder grows it): tool.started, tool.finished and the result's message for each call,
// model.started, model.finished and the reply's message for each reply.
func recordedRun(n int) []traces.Event {
	path := []string{"long_agent"}
	var events []traces.Event
	var input []traces.Message
	for call := 0; call < n; call++ {
		if call%10 == 0 {
			id := fmt.Sprint("m", call/10+1)
			events = append(events, traces.Event{Kind: traces.KindModelStarted, Agent: path[0], RunPath: path,
				Model: &traces.ModelCall{ID: id, Input: input[:len(input):len(input)], Tools: []string{"tick"}}})
			reply := &traces.Message{Role: "assistant"}
			for i := call; i < call+10; i++ {
				reply.ToolCalls = append(reply.ToolCalls, traces.ToolCallSpec{ID: fmt.Sprint("call_", i), Name: "tick", Arguments: fmt.Sprintf(`{"n":%d}`, i)})
			}
			events = append(events, traces.Event{Kind: traces.KindModelFinished, Agent: path[0], RunPath: path,
				Model: &traces.ModelCall{ID: id, Output: reply, Usage: &traces.Usage{PromptTokens: 10 * call, CompletionTokens: 30, TotalTokens: 10*call + 30}, DurationMS: 0.25}},
				traces.Event{Kind: traces.KindMessage, Agent: path[0], RunPath: path, Message: reply})
			input = append(grow.Doubling(input, 1), *reply)
		}
		id, result := fmt.Sprint("call_", call), fmt.Sprint(call)
		msg := traces.Message{Role: "tool", Content: result, ToolCallID: id, ToolName: "tick"}
		events = append(events,
			traces.Event{Kind: traces.KindToolStarted, Agent: path[0], RunPath: path, Tool: &traces.ToolCall{Name: "tick", CallID: id, Arguments: fmt.Sprintf(`{"n":%d}`, call)}},
			traces.Event{Kind: traces.KindToolFinished, Agent: path[0], RunPath: path, Tool: &traces.ToolCall{Name: "tick", CallID: id, Result: result, DurationMS: 0.012}},
			traces.Event{Kind: traces.KindMessage, Agent: path[0], RunPath: path, Message: &msg})
		input = append(grow.Doubling(input, 1), msg)
	}
	return events
}

// BenchmarkRecordingEmitRun measures recording the events of a run as the recorder emits them
// (see recordedRun), each run into a new recording, stamped as the recorder stamps them (one time
// per callback, read by the caller). ns/op is one event; cpu-ns/op the process's CPU time per
// event, the collector's included.
func BenchmarkRecordingEmitRun(b *testing.B) {
	for _, n := range []int{300, 30000} {
		events := recordedRun(n)
		now := time.Now().UTC()
		for i := range events {
			events[i].Time = now.Add(time.Duration(i) * time.Microsecond)
		}
		b.Run(fmt.Sprintf("events=%d", len(events)), func(b *testing.B) {
			b.ReportAllocs()
			rec := newRecording(b)
			cpu, i := cpuTime(), 0
			for b.Loop() {
				if i == len(events) {
					rec, i = newRecording(b), 0
				}
				rec.Emit(events[i])
				i++
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkUnmarshalLarge measures reading a supervisor-shaped trace of 200,000 events
// (webtest.Large, as BenchmarkLargeRun in the server imports it): ns/event and the process's CPU
// time per event, the collector's included.
func BenchmarkUnmarshalLarge(b *testing.B) {
	tr, _ := traces.EndImported(webtest.Large(200_000))
	data := mustMarshal(b, tr)
	b.SetBytes(int64(len(data)))
	perEvent(b, len(tr.Events), func() error { _, err := traces.Unmarshal(data); return err })
}

// BenchmarkDecodeRowsLarge measures reading back the rows a store keeps of the trace
// BenchmarkUnmarshalLarge reads (traces.DecodeRows: each event a document of its own), in
// ns/event and the process's CPU time per event.
func BenchmarkDecodeRowsLarge(b *testing.B) {
	tr, _ := traces.EndImported(webtest.Large(200_000))
	rows := rowsOf(b, tr)
	perEvent(b, len(tr.Events), func() error { _, err := traces.DecodeRows(rows); return err })
}

// perEvent runs read in b's loop and reports its time and the process's CPU time per event of
// the events it reads, after collecting what setting up made (the caller keeps only read's input).
func perEvent(b *testing.B, events int, read func() error) {
	runtime.GC()
	cpu := cpuTime()
	for b.Loop() {
		if err := read(); err != nil {
			b.Fatal(err)
		}
	}
	n := float64(b.N) * float64(events)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
	b.ReportMetric(float64(cpuTime()-cpu)/n, "cpu-ns/event")
}

// BenchmarkRecordTool measures writing a tool call's three events the way the recorder writes
// them (RecordTool's tool.started and tool.finished, then the result's message by RecordMessages,
// as where the end's result was), one call after another into a recording of 1,000 calls: the
// cost of a tool call's encoding with its code and data warm, where the recorder's callbacks run
// it between eino's. ns/op is one event.
func BenchmarkRecordTool(b *testing.B) {
	const calls = 1000
	path := []string{"long_agent"}
	starts, ends := make([]traces.ToolCall, calls), make([]traces.ToolCall, calls)
	msgs := make([][]traces.Message, calls)
	for i := range calls {
		args := fmt.Sprintf(`{"n":%d}`, i)
		starts[i] = traces.ToolCall{Name: "tick", CallID: fmt.Sprintf("call_%d", i), Arguments: args}
		ends[i] = traces.ToolCall{Name: "tick", CallID: starts[i].CallID, Result: "tick " + args, DurationMS: 0.01}
		msgs[i] = []traces.Message{{Role: "tool", Content: ends[i].Result, ToolCallID: starts[i].CallID, ToolName: "tick"}}
	}
	b.ReportAllocs()
	var res traces.ToolResult
	of := []*traces.ToolResult{&res}
	rec, i, at := newRecording(b), 0, time.Now().UnixNano()
	for b.Loop() {
		if i == 3*calls {
			rec, i = newRecording(b), 0
		}
		switch k := i / 3; i % 3 {
		case 0:
			rec.RecordTool(at, false, "long_agent", path, &starts[k], false, nil)
		case 1:
			rec.RecordTool(at, true, "long_agent", path, &ends[k], false, &res)
		default:
			rec.RecordMessages(at, "long_agent", path, msgs[k], of)
		}
		i, at = i+1, at+1000
	}
	if rec.Len() != int64(i) {
		b.Fatalf("the recording holds %d events of the %d written", rec.Len(), i)
	}
}
