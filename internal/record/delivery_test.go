package record

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/baton-dev/baton/traces"
)

// endingSink keeps what it is handed: events, and for each the ending that stood after it.
type endingSink struct {
	got      []traces.Event
	foreseen []bool    // whether each came by EmitForeseen
	rest     []*ending // the ending kept after each (nil: none)
	held     *ending
}

func (s *endingSink) Emit(e traces.Event) traces.Event {
	s.held = nil
	s.got, s.foreseen, s.rest = append(s.got, e), append(s.foreseen, false), append(s.rest, nil)
	return e
}

func (s *endingSink) EmitForeseen(e traces.Event, rest ending) traces.Event {
	s.held = &rest
	s.got, s.foreseen, s.rest = append(s.got, e), append(s.foreseen, true), append(s.rest, &rest)
	return e
}

func (s *endingSink) Ending(e ending) func() { s.held = &e; return func() {} }
func (s *endingSink) PutAgent(traces.Agent)  {}
func (s *endingSink) FinishAt(at time.Time, status traces.Status, errMsg string) {
	s.got = append(s.got, traces.Event{Time: at, Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: status, Error: errMsg}})
}

func kinds(events []traces.Event) []traces.Kind {
	out := make([]traces.Kind, len(events))
	for i, e := range events {
		out[i] = e.Kind
	}
	return out
}

func exited(caller, callID string) traces.Event {
	return traces.Event{Kind: traces.KindAgentToolExit, Agent: caller, AgentTool: &traces.AgentToolCall{Caller: caller, CallID: callID}}
}

// TestDeliveryHoldsWhatFollowsAParkedCall: the end of an AgentTool call not decided yet, and
// everything emitted after it, reach the sink in order once it is decided, and only up to the
// next call still undecided; the end then says how the caller's copy saw the inner events.
func TestDeliveryHoldsWhatFollowsAParkedCall(t *testing.T) {
	sink := &endingSink{}
	d := newDelivery(sink)
	caller := &visit{agent: "caller"}
	d.emit(&traces.Event{Kind: traces.KindModelStarted, Agent: "caller"})
	d.park(caller, "c1", "helper")
	d.emit(ptr(exited("caller", "c1")))
	d.emit(&traces.Event{Kind: traces.KindMessage, Agent: "caller"})
	d.park(caller, "c2", "helper")
	d.emit(ptr(exited("caller", "c2")))
	d.emit(&traces.Event{Kind: traces.KindModelFinished, Agent: "caller"})
	if len(sink.got) != 1 {
		t.Fatalf("the sink got %v while c1 is parked, want only what came before it", kinds(sink.got))
	}
	drained := d.drained() // what a breakpoint's hold waits on before its paused event
	if d.decide(caller, "c3") || d.decide(&visit{agent: "caller"}, "c1") {
		t.Error("decide decided a call that is not parked, or another visit's")
	}
	caller.inner.byCallee = map[string]int{"helper": 2} // the copy carried the inner events of c2
	if !d.decide(caller, "c2") || len(sink.got) != 1 {
		t.Fatalf("after deciding c2 the sink got %v, want c2 held behind c1", kinds(sink.got))
	}
	select {
	case <-drained:
		t.Fatal("drained while c1 is still parked")
	default:
	}
	if !d.decide(caller, "c1") {
		t.Fatal("decide(c1) = false, want true")
	}
	select {
	case <-drained:
	default:
		t.Error("nothing is parked, but drained is not closed")
	}
	want := []traces.Kind{traces.KindModelStarted, traces.KindAgentToolExit, traces.KindMessage, traces.KindAgentToolExit, traces.KindModelFinished}
	if got := kinds(sink.got); !slices.Equal(got, want) {
		t.Fatalf("the sink got %v, want %v", got, want)
	}
	// Both are released as the copy stands when they are: it carried helper's events by then.
	for _, i := range []int{1, 3} {
		if got := sink.got[i].AgentTool.InnerEvents; got != traces.InnerEventsStream {
			t.Errorf("%s's inner events = %q, want %q", sink.got[i].AgentTool.CallID, got, traces.InnerEventsStream)
		}
	}
}

// TestDeliveryDecideAllReleasesAVisitsCalls: when a visit's copy of events ends, its parked calls
// are decided by what the copy carried: none of the inner events, here.
func TestDeliveryDecideAllReleasesAVisitsCalls(t *testing.T) {
	sink := &endingSink{}
	d := newDelivery(sink)
	a, b := &visit{agent: "a"}, &visit{agent: "b"}
	d.park(a, "c1", "helper")
	d.emit(ptr(exited("a", "c1")))
	d.park(b, "c2", "helper")
	d.emit(ptr(exited("b", "c2")))
	d.decideAll(b)
	if len(sink.got) != 0 {
		t.Fatalf("deciding b's calls released %v before a's undecided call", kinds(sink.got))
	}
	d.decideAll(a)
	if len(sink.got) != 2 || sink.got[0].AgentTool.InnerEvents != traces.InnerEventsCallbacks {
		t.Fatalf("the sink got %+v, want both ends, the first from callbacks only", sink.got)
	}
}

// TestDeliveryStampsCallbackEvents: the events a callback records carry its time; an event with a
// time of its own keeps it; any other is stamped when it is emitted, by the same clock, parked
// behind a call or not, and so is run.finished: every event the recorder stamps follows the
// run's clock, which the wall clock stepping since the run's start (here to 2000, as far as the
// clock knows) does not move.
func TestDeliveryStampsCallbackEvents(t *testing.T) {
	sink := &endingSink{}
	d := newDelivery(sink)
	base := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	d.clock.baseUnix = base.UnixNano()
	byClock := func(at time.Time) bool {
		return at.Location() == time.UTC && !at.Before(base) && at.Before(base.Add(time.Minute))
	}
	now := d.stampNow().time()
	own := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	d.emit(&traces.Event{Kind: traces.KindToolStarted, Agent: "a", RunPath: []string{"a"}})
	d.emit(&traces.Event{Kind: traces.KindToolFinished, Time: own})
	d.unstamp()
	d.emit(&traces.Event{Kind: traces.KindMessage})
	if d.lastAgent != "a" || len(d.lastPath) != 1 {
		t.Errorf("who acted last, after events of nobody, = %q %v, want a [a]", d.lastAgent, d.lastPath)
	}
	if !sink.got[0].Time.Equal(now) || !byClock(now) {
		t.Errorf("the callback's event has time %v, want %v, by the run's clock, in UTC", sink.got[0].Time, now)
	}
	if !sink.got[1].Time.Equal(own) {
		t.Errorf("an event with its own time got %v, want %v", sink.got[1].Time, own)
	}
	if at := sink.got[2].Time; !byClock(at) || at.Before(now) {
		t.Errorf("an event outside a callback got %v, want a time by the run's clock, after %v", at, now)
	}
	d.park(&visit{agent: "a"}, "c1", "helper")
	d.emit(ptr(exited("a", "c1")))
	if at := d.parked[0].events[0].Time; !byClock(at) {
		t.Errorf("an event parked outside a callback has time %v, want the run's clock's when it happened", at)
	}
	d.finish(traces.StatusCompleted, "")
	if end := sink.got[len(sink.got)-1]; end.Kind != traces.KindRunFinished || !byClock(end.Time) || end.Time.Before(sink.got[2].Time) {
		t.Errorf("run.finished %+v, want it by the run's clock, after the events before it", end)
	}
}

// TestDeliveryKeepsThePromisedEnding: while an ending is promised, the events of its tail, and the
// late facts of the work that ended, keep it standing; anything else makes it void.
func TestDeliveryKeepsThePromisedEnding(t *testing.T) {
	finished := func(agent string) traces.Event {
		return traces.Event{Kind: traces.KindAgentFinished, Agent: agent, RunPath: []string{agent}, AgentRun: &traces.AgentRun{}}
	}
	sink := &endingSink{}
	d := newDelivery(sink)
	d.promise(ending{Status: traces.StatusCompleted, Tail: []traces.Event{finished("inner"), finished("outer")}})
	tail := d.promised.Tail

	// Visits whose copies end at once may close in either order.
	d.emit(ptr(finished("outer")))
	d.emit(&traces.Event{Kind: traces.KindSessionSet, Agent: "inner", Session: &traces.SessionSet{Key: "k"}})
	if !sink.foreseen[0] || len(sink.rest[0].Tail) != 1 || sink.rest[0].Tail[0].Agent != "inner" {
		t.Fatalf("outer's end was not taken as foreseen, leaving inner's: %+v", sink.rest[0])
	}
	if !sink.foreseen[1] || len(sink.rest[1].Tail) != 1 {
		t.Fatalf("a late session value did not keep the ending's tail: %+v", sink.rest[1])
	}
	if len(tail) != 2 {
		t.Error("taking an event off the tail changed the ending the sink was handed")
	}
	d.emit(&traces.Event{Kind: traces.KindModelStarted, Agent: "inner"})
	if sink.foreseen[2] || d.promised != nil || sink.held != nil {
		t.Error("new work did not make the promised ending void")
	}
	d.emit(ptr(finished("inner")))
	if sink.foreseen[3] {
		t.Error("an event after the ending was made void was taken as foreseen")
	}
}

// TestDeliveryToASinkWithoutEndings: a sink that cannot hold an ending is never promised one.
func TestDeliveryToASinkWithoutEndings(t *testing.T) {
	if d := newDelivery(traces.NewRecording(traces.Run{ID: "r"}, nil)); d.ender != nil {
		t.Error("a Recording is taken as a sink that delivers endings")
	}
	if d := newDelivery(&endingSink{}); d.ender == nil {
		t.Error("a sink with Ending is not taken as one that delivers endings")
	}
}

// TestDeliveryKeepsParkedPayloadsOfItsOwn: into a Recording, tool calls' events share the
// delivery's payloads; one held behind an undecided AgentTool call reaches the recording as it
// was emitted, though the next tool call has written its payloads since.
func TestDeliveryKeepsParkedPayloadsOfItsOwn(t *testing.T) {
	rec := traces.NewRecording(traces.Run{ID: "r"}, nil)
	d := newDelivery(rec)
	if !d.reuses {
		t.Fatal("a delivery into a Recording allocates tool payloads for each call")
	}
	caller := &visit{agent: "caller"}
	c := &call{v: caller}
	emitEnd := func(callID, result string) {
		p := d.payloads(c)
		p.ended = traces.ToolCall{Name: "helper", CallID: callID, Result: result}
		p.result = traces.Message{Role: "tool", Content: result, ToolCallID: callID}
		d.emit(&traces.Event{Kind: traces.KindToolFinished, Agent: "caller", Tool: &p.ended})
		d.emit(&traces.Event{Kind: traces.KindMessage, Agent: "caller", Message: &p.result})
	}
	d.park(caller, "c1", "helper")
	d.emit(ptr(exited("caller", "c1")))
	emitEnd("c1", "first")
	d.decide(caller, "c1")
	emitEnd("c2", "second") // would rewrite what c1's events point to, had they kept the delivery's
	d.park(caller, "c3", "helper")
	d.emit(ptr(exited("caller", "c3")))
	emitEnd("c3", "third")
	emitEnd("c4", "fourth") // while c3's are held
	d.decide(caller, "c3")

	var got []string
	for _, e := range rec.Snapshot().Events {
		switch {
		case e.Tool != nil:
			got = append(got, e.Tool.CallID+"="+e.Tool.Result)
		case e.Message != nil:
			got = append(got, e.Message.ToolCallID+":"+e.Message.Content)
		}
	}
	want := []string{"c1=first", "c1:first", "c2=second", "c2:second", "c3=third", "c3:third", "c4=fourth", "c4:fourth"}
	if !slices.Equal(got, want) {
		t.Fatalf("recorded %v, want %v", got, want)
	}
}

// TestDeliveryBuildsAToolResultWhereEventsAreBuilt: a tool call's end handed with room for its
// result's message reaches a sink other than a Recording, and a Recording while the end waits
// behind an undecided AgentTool call, followed by that message, filled from the end: a Recording
// straight away needs none built.
func TestDeliveryBuildsAToolResultWhereEventsAreBuilt(t *testing.T) {
	want := traces.Message{Role: "tool", Content: "42", ToolCallID: "c1", ToolName: "tick"}
	check := func(t *testing.T, events []traces.Event) {
		t.Helper()
		if got := kinds(events); !slices.Equal(got, []traces.Kind{traces.KindToolFinished, traces.KindMessage}) {
			t.Fatalf("recorded %v, want the end and its result's message", got)
		}
		if m := events[1].Message; m == nil || !reflect.DeepEqual(*m, want) {
			t.Fatalf("result's message %+v, want %+v", m, want)
		}
	}
	end := func(d *delivery) {
		var room traces.Message
		d.emitTool(true, "caller", nil, &traces.ToolCall{Name: "tick", CallID: "c1", Result: "42"}, &room, nil)
	}
	t.Run("another sink", func(t *testing.T) {
		sink := &endingSink{}
		end(ptr(newDelivery(sink)))
		check(t, sink.got)
	})
	t.Run("parked", func(t *testing.T) {
		rec := traces.NewRecording(traces.Run{ID: "r"}, nil)
		d := newDelivery(rec)
		caller := &visit{agent: "caller"}
		d.park(caller, "a1", "helper")
		d.emit(ptr(exited("caller", "a1")))
		end(&d)
		d.decide(caller, "a1")
		check(t, rec.Snapshot().Events[1:]) // after the AgentTool call's end
	})
}
