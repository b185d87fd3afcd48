package agents_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/internal/sqlite"
	"github.com/baton-dev/baton/traces"
)

// teeSink is a recording as the recorder sees it, keeping each event as Emit returned it: what
// every reader of the recording must see.
type teeSink struct {
	*traces.Recording
	mu      sync.Mutex
	emitted []traces.Event
}

func (s *teeSink) Emit(e traces.Event) traces.Event {
	e = s.Recording.Emit(e)
	if e.Seq > 0 {
		s.mu.Lock()
		s.emitted = append(s.emitted, e)
		s.mu.Unlock()
	}
	return e
}

// FinishAt finishes the recording and keeps its run.finished, which the recording makes:
// numbered after the last event, stamped at the run's end.
func (s *teeSink) FinishAt(at time.Time, status traces.Status, errMsg string) {
	s.Recording.FinishAt(at, status, errMsg)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emitted = append(s.emitted, traces.Event{Seq: int64(len(s.emitted) + 1), Time: *s.Run().EndedAt,
		Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: status, Error: errMsg}})
}

// TestEveryReaderSeesTheEventsRecorded records every flow of the catalogue, generated and
// streamed, resumed with an approval whenever it interrupts, into a recording served as the
// server serves one (a broker writing it to a store), and reads it back every way the server
// does: a subscriber following the run live (as the live feed and the store's writer do), a
// snapshot (pages, export), a subscription from each point of the run (a viewer joining late),
// and the run the store wrote. Each must hold exactly the events the recorder emitted, the store
// as JSON holds them.
func TestEveryReaderSeesTheEventsRecorded(t *testing.T) {
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "baton.db"), -1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	for _, flow := range agents.Catalogue() {
		t.Run(flow.Name, func(t *testing.T) {
			modes(t, func(t *testing.T, streaming bool) {
				broker := live.NewStoredBroker(0, store, nil)
				rec := traces.NewRecording(traces.Run{ID: traces.NewRunID(), Flow: flow.Name, Input: flow.DefaultInput}, flow.Agents)
				if err := broker.Add(rec); err != nil {
					t.Fatal(err)
				}
				sink := &teeSink{Recording: rec}
				var live []traces.Event
				var following sync.WaitGroup
				following.Go(func() { live = follow(t, rec.Subscribe(0)) })
				recordResumed(t, flow, streaming, broker, sink)
				following.Wait()
				// A subscription ends at the run.finished of the run as it stood: resumed parts
				// are followed by subscribing again, where it stopped.
				live = append(live, follow(t, rec.Subscribe(int64(len(live))))...)
				if err := broker.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
				want := sink.emitted
				if len(want) < 5 || want[len(want)-1].Kind != traces.KindRunFinished {
					t.Fatalf("recorded %d events, the last not run.finished", len(want))
				}
				assertSame(t, "live subscriber", live, want)
				assertSame(t, "snapshot", rec.Snapshot().Events, want)
				for after := 1; after < len(want); after += max(1, len(want)/7) {
					assertSame(t, "subscription joining late", follow(t, rec.Subscribe(int64(after))), want[after:])
				}
				stored, err := store.Load(rec.ID())
				if err != nil {
					t.Fatal(err)
				}
				assertSameJSON(t, "store", stored.Events, want)
			})
		})
	}
}

// recordResumed runs flow's default input into sink, resuming it with an approval each time it
// interrupts (the broker reopening its recording), until it ends otherwise.
func recordResumed(t *testing.T, flow agents.Flow, streaming bool, broker *live.Broker, sink *teeSink) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root, err := flow.Build(ctx, flow.ScriptedModels(nil))
	if err != nil {
		t.Fatal(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: streaming, CheckPointStore: &memStore{data: map[string][]byte{}}})
	opts := append([]adk.AgentRunOption{adk.WithCheckPointID("cp")}, flow.RunOptions...)
	recorder := record.NewRecorder(sink, flow.Name, flow.Agents)
	events := recorder.Run(ctx, runner, []adk.Message{schema.UserMessage(flow.DefaultInput)}, opts...)
	for range 3 {
		cause := drainCause(events)
		<-recorder.Done()
		if status, _ := recorder.Outcome(); status != traces.StatusInterrupted || cause == "" {
			return
		}
		if err := broker.Resume(sink.Recording); err != nil {
			t.Fatal(err)
		}
		recorder = record.NewRecorder(sink, flow.Name, flow.Agents)
		events, err = recorder.Resume(ctx, runner, "cp", &adk.ResumeParams{Targets: map[string]any{cause: agents.Decision{Approve: true, Comment: "ok"}}}, flow.RunOptions...)
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("%s interrupted 3 times", flow.Name)
}

// drainCause reads events to their end and returns the id of the last interrupt's root cause.
func drainCause(events *adk.AsyncIterator[*adk.AgentEvent]) string {
	cause := ""
	for {
		ev, ok := events.Next()
		if !ok {
			return cause
		}
		if ev.Action != nil && ev.Action.Interrupted != nil {
			for _, c := range ev.Action.Interrupted.InterruptContexts {
				if c != nil && c.IsRootCause {
					cause = c.ID
				}
			}
		}
	}
}

// follow reads sub to its end, 7 events at a time, and returns what it read.
func follow(t *testing.T, sub *traces.Subscription) []traces.Event {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []traces.Event
	buf := make([]traces.Event, 7)
	for {
		n, err := sub.Read(ctx, buf)
		got = append(got, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Error(err)
			return got
		}
	}
}

func assertSame(t *testing.T, reader string, got, want []traces.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s read %d events, want %d", reader, len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			g, _ := json.Marshal(got[i])
			w, _ := json.Marshal(want[i])
			t.Fatalf("%s: event %d differs:\n got %s\nwant %s", reader, i+1, g, w)
		}
	}
}

// assertSameJSON is assertSame for a reader of the trace format, which does not tell an empty
// list from an absent one or keep a time's zone.
func assertSameJSON(t *testing.T, reader string, got, want []traces.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s read %d events, want %d", reader, len(got), len(want))
	}
	for i := range got {
		g, _ := json.Marshal(got[i])
		w, _ := json.Marshal(want[i])
		if string(g) != string(w) {
			t.Fatalf("%s: event %d differs:\n got %s\nwant %s", reader, i+1, g, w)
		}
	}
}
