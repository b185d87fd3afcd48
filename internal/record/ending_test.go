package record_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/traces"
)

// witnessSink keeps what the recorder delivered, and the ending it stands by, so that a test can
// look at what had been delivered at the moment the app saw its run end.
type witnessSink struct {
	mu       sync.Mutex
	events   []traces.Event
	ending   *record.TestEnding
	atEnding []traces.Event // what was emitted when the last ending was promised
	voided   string         // what made the last ending void, for failure messages
	finished chan struct{}
}

func newWitnessSink() *witnessSink { return &witnessSink{finished: make(chan struct{})} }

func (s *witnessSink) Emit(e traces.Event) traces.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
	if s.ending != nil {
		s.voided = fmt.Sprintf("an ending with tail %v was made void by %v", story(s.ending.Tail), story([]traces.Event{e}))
		s.ending = nil // the run went on
	}
	return e
}

func (s *witnessSink) EmitForeseen(e traces.Event, rest record.TestEnding) traces.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
	if s.ending != nil {
		s.ending = &rest
	}
	return e
}

func (s *witnessSink) PutAgent(traces.Agent) {}

func (s *witnessSink) FinishAt(at time.Time, status traces.Status, errMsg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, traces.Event{Time: at, Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: status, Error: errMsg}})
	close(s.finished)
}

func (s *witnessSink) Ending(e record.TestEnding) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ending = &e
	s.atEnding = slices.Clone(s.events)
	return func() {}
}

// delivered returns the run as an app that exits now leaves it: what was emitted, then, when the
// run was not finished, the ending's tail and its run.finished; ok is false when neither a finish
// nor an ending was delivered.
func (s *witnessSink) delivered() (events []traces.Event, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	events = append(events, s.events...)
	select {
	case <-s.finished:
		return events, true
	default:
	}
	if s.ending == nil {
		return events, false
	}
	events = append(events, s.ending.Tail...)
	return append(events, traces.Event{Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: s.ending.Status, Error: s.ending.Error}}), true
}

// checkDelivered checks, the moment the app has seen its run end, that what was delivered by then
// (its ending included) is the run as finally recorded, to the last event.
func (s *witnessSink) checkDelivered(t *testing.T) {
	t.Helper()
	atEnd, ended := s.delivered()
	select {
	case <-s.finished:
	case <-time.After(10 * time.Second):
		t.Fatal("the run was not finished 10 s after the app saw its end")
	}
	final, _ := s.delivered()
	final = withoutLateFacts(final, atEnd, t)
	if !ended {
		t.Fatalf("when the app saw its run end, neither the run's end nor how it ends had been delivered (%d of %d events; %s)", len(atEnd), len(final), s.voided)
	}
	got, want := story(atEnd), story(final)
	for i := range max(len(got), len(want)) {
		g, w := "(none)", "(none)"
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Fatalf("event %d of %d as delivered when the app saw its end:\n%s\nas finally recorded:\n%s", i+1, len(want), g, w)
		}
	}
}

// withoutLateFacts drops from final the late facts (see attach's lateFact) that atEnd lacks: an
// OutputKey eino stores after the last agent's runnable has returned, a message a custom agent
// sends then. No callback of eino's runs between those and the app's end, so an app that exits at
// once leaves them behind (the ending stands: they change neither the outcome nor any agent's
// end). Each one dropped is logged.
func withoutLateFacts(final, atEnd []traces.Event, t *testing.T) []traces.Event {
	have := map[string]int{}
	for _, e := range story(atEnd) {
		have[e]++
	}
	var kept []traces.Event
	for i, e := range story(final) {
		late := final[i].Kind == traces.KindSessionSet || final[i].Kind == traces.KindMessage
		if late && have[e] == 0 {
			t.Logf("not delivered when the app saw its end, a late fact: %.200s", e)
			continue
		}
		have[e]--
		kept = append(kept, final[i])
	}
	return kept
}

// story is an event as compared: everything but its number and time.
func story(events []traces.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		e.Seq, e.Time = 0, time.Time{}
		data, err := json.Marshal(e)
		if err != nil {
			panic(err)
		}
		out[i] = string(data)
	}
	return out
}

// readAsAnApp reads events as an app does, each streamed message whole and nothing after the
// last event, handing each to seen when it is not nil.
func readAsAnApp(events *adk.AsyncIterator[*adk.AgentEvent], seen func(*adk.AgentEvent)) {
	for {
		ev, ok := events.Next()
		if !ok {
			return
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			ev.Output.MessageOutput.GetMessage()
		}
		if seen != nil {
			seen(ev)
		}
	}
}

// TestRunDeliveredBeforeTheAppSeesItsEnd runs every catalogue flow, streaming and not, as an app
// does (reading each streamed message, and nothing after its last event): at the moment the app's
// iterator ends, the run as delivered so far (its ending included) must be the run as finally
// recorded, to the last event. An app may exit at that moment.
func TestRunDeliveredBeforeTheAppSeesItsEnd(t *testing.T) {
	for _, flow := range agents.Catalogue() {
		for _, streaming := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/streaming=%v", flow.Name, streaming), func(t *testing.T) {
				ctx := context.Background()
				root, err := flow.Build(ctx, flow.ScriptedModels(nil))
				if err != nil {
					t.Fatal(err)
				}
				runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: streaming, CheckPointStore: attachtest.NewStore()})
				sink := newWitnessSink()
				opts := append([]adk.AgentRunOption{adk.WithCheckPointID("c1"), record.RecordEachRunTo(func() record.Sink { return sink })}, flow.RunOptions...)
				readAsAnApp(runner.Run(ctx, []adk.Message{schema.UserMessage(flow.DefaultInput)}, opts...), nil)
				sink.checkDelivered(t)
			})
		}
	}
}

// TestResumedPartDeliveredBeforeTheAppSeesItsEnd is TestRunDeliveredBeforeTheAppSeesItsEnd for
// both parts of a run interrupted inside a prebuilt supervisor and resumed at once: each part, as
// delivered when the app saw it end, is that part as finally recorded.
func TestResumedPartDeliveredBeforeTheAppSeesItsEnd(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			ctx := context.Background()
			runner, err := attachtest.SupervisedRefunds(ctx, attachtest.NewStore(), streaming)
			if err != nil {
				t.Fatal(err)
			}
			first, second := newWitnessSink(), newWitnessSink()
			interrupt := ""
			part := func(sink *witnessSink, events *adk.AsyncIterator[*adk.AgentEvent]) {
				t.Helper()
				readAsAnApp(events, func(ev *adk.AgentEvent) {
					if ev.Action != nil && ev.Action.Interrupted != nil {
						for _, c := range ev.Action.Interrupted.InterruptContexts {
							if c.IsRootCause {
								interrupt = c.ID
							}
						}
					}
				})
				sink.checkDelivered(t)
			}
			part(first, runner.Query(ctx, attachtest.SupervisedRefundsInput, adk.WithCheckPointID("cp-1"),
				record.RecordEachRunTo(func() record.Sink { return first })))
			events, err := runner.ResumeWithParams(ctx, "cp-1", &adk.ResumeParams{Targets: map[string]any{interrupt: "approved"}},
				record.RecordEachRunTo(func() record.Sink { return second }))
			if err != nil {
				t.Fatal(err)
			}
			part(second, events)
		})
	}
}

// lateWorker is a custom agent whose runnable sends a streamed message and returns while another
// of its goroutines still computes the message's text: the end of its work comes before the
// message is whole, and the process is busy meanwhile.
type lateWorker struct{ work time.Duration }

func (lateWorker) Name(context.Context) string        { return "worker" }
func (lateWorker) Description(context.Context) string { return "answers after some work" }

func (a lateWorker) Run(ctx context.Context, _ *adk.AgentInput, _ ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	events, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
	go func() {
		defer gen.Close()
		chain := compose.NewChain[string, string]().AppendLambda(compose.InvokableLambda(func(ctx context.Context, in string) (string, error) {
			text, w := schema.Pipe[*schema.Message](1)
			gen.Send(adk.EventFromMessage(nil, text, schema.Assistant, ""))
			go func() {
				defer w.Close()
				// Busy, not blocked: what computes the message runs the whole time.
				for start := time.Now(); time.Since(start) < a.work; {
				}
				w.Send(schema.AssistantMessage("the answer, worked out", nil), nil)
			}()
			return in, nil
		}))
		runnable, err := chain.Compile(ctx, compose.WithGraphName("worker"))
		if err == nil {
			_, err = runnable.Invoke(ctx, "go")
		}
		if err != nil {
			gen.Send(&adk.AgentEvent{Err: err})
		}
	}()
	return events
}

// TestEndingWaitsWhileTheProcessWorks: a custom agent's work ends while a message it sent is
// still being worked out by a goroutine of the app that keeps running. The run's ending, made at
// the end of that work (the last moment before the app can see its run end), must follow the
// message: the copy of events is not quiet while the process still works, however long a quiet
// moment looks.
func TestEndingWaitsWhileTheProcessWorks(t *testing.T) {
	ctx := context.Background()
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: lateWorker{work: 10 * time.Millisecond}, EnableStreaming: true})
	sink := newWitnessSink()
	readAsAnApp(runner.Run(ctx, []adk.Message{schema.UserMessage("work it out")}, record.RecordEachRunTo(func() record.Sink { return sink })), nil)
	<-sink.finished
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if sink.atEnding == nil {
		t.Fatal("no ending was promised at the end of the worker's work")
	}
	for _, e := range sink.atEnding {
		if e.Kind == traces.KindMessage && e.Message.Content == "the answer, worked out" {
			return
		}
	}
	t.Fatalf("when the run's ending was promised, the worker's message was not recorded: %s", story(sink.atEnding))
}
