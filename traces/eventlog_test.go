package traces_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/grow"
	"github.com/baton-dev/baton/traces"
)

// oddEvents returns events that richTrace's do not cover: empty lists that are not absent, a
// kind the format does not know, several payloads at once, times in the local zone and with a
// monotonic clock reading, long strings, the same run path in a new array.
func oddEvents() []traces.Event {
	path := []string{"planner", "writer"}
	return []traces.Event{
		{Kind: traces.KindModelStarted, Agent: "writer", RunPath: []string{}, Time: time.Now(),
			Model: &traces.ModelCall{ID: "m9", Input: []traces.Message{}, Tools: []string{}}},
		{Kind: traces.KindMessage, Agent: "writer", RunPath: path, Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.Local),
			Message: &traces.Message{Role: "assistant", ToolCalls: []traces.ToolCallSpec{}}},
		{Kind: "custom.kind", Agent: "writer", RunPath: slices.Clone(path), Time: time.Unix(0, 0)},
		{Kind: "", Time: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)},
		{Kind: traces.KindSessionSet, Agent: "writer", RunPath: path, Session: &traces.SessionSet{Key: "k", Value: json.RawMessage{}},
			Exit: &traces.Exit{FinalResult: strings.Repeat("long ", 14000)}, Error: &traces.ErrorDetail{Message: "both"},
			AgentRun: &traces.AgentRun{Input: []traces.Message{{Role: "user", Content: "x"}}, Iteration: -3},
			Lost:     &traces.Lost{Count: -1}},
		{Kind: traces.KindSessionSet, Agent: "日本", Session: &traces.SessionSet{Key: "nil value"}},
	}
}

// emitAll records events into a new recording and returns it with the events as Emit returned
// them.
func emitAll(tb testing.TB, events []traces.Event) (*traces.Recording, []traces.Event) {
	tb.Helper()
	rec := newRecording(tb)
	var emitted []traces.Event
	for _, e := range events {
		e.Seq = 0
		emitted = append(emitted, rec.Emit(e))
	}
	return rec, emitted
}

// assertSameEvents fails unless got and want are exactly the same events.
func assertSameEvents(tb testing.TB, reader string, got, want []traces.Event) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("%s: %d events, want %d", reader, len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			tb.Fatalf("%s: event %d differs at %s", reader, i+1, difference(reflect.ValueOf(got[i]), reflect.ValueOf(want[i]), "event"))
		}
	}
}

// assertEveryReaderSees checks every way of reading rec against want, its events so far: a
// snapshot, subscriptions from each point read in batches of several sizes, and a recording of
// the snapshot as loaded traces are.
func assertEveryReaderSees(tb testing.TB, rec *traces.Recording, want []traces.Event) {
	tb.Helper()
	assertSameEvents(tb, "snapshot", rec.Snapshot().Events, want)
	for after := range len(want) {
		for _, batch := range []int{1, 3, 64} {
			sub := rec.Subscribe(int64(after))
			got := readN(tb, sub, len(want)-after, batch)
			assertSameEvents(tb, fmt.Sprintf("subscription after %d, batches of %d", after, batch), got, want[after:])
		}
	}
	loaded := traces.NewRecordingOf(traces.Trace{Run: traces.Run{ID: "r2", Status: traces.StatusCompleted}, Events: want})
	assertSameEvents(tb, "recording of a loaded trace", loaded.Snapshot().Events, want)
}

func TestRecordingReadsBackEveryEventExactly(t *testing.T) {
	events := append(richTrace().Events, oddEvents()...)
	rec, emitted := emitAll(t, events)
	for i, e := range emitted {
		if e.Time.Equal(events[i].Time) && e.Time != e.Time.Round(0) {
			t.Errorf("event %d kept its monotonic clock reading: readers cannot see it", i+1)
		}
	}
	assertEveryReaderSees(t, rec, emitted)
}

// conversation returns the events of agents taking turns on their own growing conversations,
// each model input extending the agent's last one in the array the recorder grows (see
// grow.Doubling), then one that starts again with the same messages in a new array, and an
// agent.started whose input is the caller's conversation so far; with a tool's end and its
// result's message before each input.
func conversation(turns int) []traces.Event {
	var events []traces.Event
	inputs := map[string][]traces.Message{}
	for i := range turns {
		agent := []string{"a", "b"}[i%2]
		// Every third result long, and the same string in the tool's end, its message and the
		// next input, as the recorder hands them.
		result := fmt.Sprint(i)
		if i%3 == 0 {
			result = strings.Repeat(fmt.Sprint(i, " "), 40)
		}
		msg := traces.Message{Role: "tool", Content: result, ToolCallID: fmt.Sprint("c", i), ToolName: "t"}
		events = append(events,
			traces.Event{Kind: traces.KindToolFinished, Agent: agent, Tool: &traces.ToolCall{Name: "t", CallID: msg.ToolCallID, Result: result}},
			traces.Event{Kind: traces.KindMessage, Agent: agent, Message: &msg})
		in := grow.Doubling(inputs[agent], 2)
		in = append(in, traces.Message{Role: "assistant", Content: fmt.Sprintf("reply %d", i),
			ToolCalls: []traces.ToolCallSpec{{ID: fmt.Sprint("c", i), Name: "t", Arguments: "{}"}}}, msg)
		inputs[agent] = in
		events = append(events, traces.Event{Kind: traces.KindModelStarted, Agent: agent, RunPath: []string{agent},
			Model: &traces.ModelCall{ID: fmt.Sprint("m", i), Input: in[:len(in):len(in)]}})
		if i == turns/2 {
			again := slices.Clone(inputs["a"])
			events = append(events, traces.Event{Kind: traces.KindModelStarted, Agent: "a", Model: &traces.ModelCall{ID: "again", Input: again}},
				traces.Event{Kind: traces.KindAgentStarted, Agent: "c", AgentRun: &traces.AgentRun{Input: again[:3:3]}})
		}
	}
	return events
}

func TestRecordingReadsBackInputsWholeAndShared(t *testing.T) {
	rec, emitted := emitAll(t, conversation(40))
	assertEveryReaderSees(t, rec, emitted)
	// As recorded, inputs that extend the one before share its array: so do those read back.
	arrays := map[*traces.Message]bool{}
	for _, e := range rec.Snapshot().Events {
		if e.Model != nil && len(e.Model.Input) > 0 {
			arrays[&e.Model.Input[0]] = true
		}
	}
	if len(arrays) > 20 {
		t.Errorf("41 inputs read back use %d arrays: want a few, as doubling makes them", len(arrays))
	}
}

func TestRecordingKeepsEventsAsEmitted(t *testing.T) {
	// The recording keeps a copy: a payload changed after Emit, or a value a reader appends to,
	// changes nothing any reader sees.
	rec := newRecording(t)
	msg := &traces.Message{Role: "assistant", Content: "before"}
	want := rec.Emit(traces.Event{Kind: traces.KindMessage, Agent: "root", Message: msg})
	want.Message = &traces.Message{Role: "assistant", Content: "before"}
	msg.Content = "after"
	rec.Emit(traces.Event{Kind: traces.KindSessionSet, Agent: "root", Session: &traces.SessionSet{Key: "k", Value: json.RawMessage(`1`)}})
	got := rec.Snapshot().Events
	_ = append(got[1].Session.Value, '2')
	assertSameEvents(t, "snapshot", rec.Snapshot().Events[:1], []traces.Event{want})
	if v := string(rec.Snapshot().Events[1].Session.Value); v != "1" {
		t.Errorf("session value read back = %s after a reader appended to it, want 1", v)
	}
}

func TestRecordingReadsEventsLargerThanAChunk(t *testing.T) {
	var events []traces.Event
	for i := range 50 {
		events = append(events, traces.Event{Kind: traces.KindToolFinished, Agent: "root",
			Tool: &traces.ToolCall{Name: "t", Result: strings.Repeat("r", i*7919)}})
	}
	rec, emitted := emitAll(t, events)
	assertSameEvents(t, "snapshot", rec.Snapshot().Events, emitted)
	assertSameEvents(t, "subscription", readN(t, rec.Subscribe(17), 33, 5), emitted[17:])
}

// TestRecordingTakesInputsAsExtensions: an input handed as the messages it adds to the agent's
// latest is read back by every reader exactly as if handed whole, though the array it came in
// is overwritten at once; one that names an input not the agent's latest, or keeps more than it
// has, is refused and records nothing.
func TestRecordingTakesInputsAsExtensions(t *testing.T) {
	want, _ := emitAll(t, conversation(40))
	rec := newRecording(t)
	latest := map[string]struct {
		seq int64
		n   int
	}{}
	var scratch []traces.Message
	extended := 0
	for _, e := range want.Snapshot().Events {
		e.Seq = 0
		if m := e.Model; m != nil {
			if l := latest[e.Agent]; l.seq > 0 && len(m.Input) >= l.n {
				if rec.RecordExtending(&e, l.seq-1, l.n, nil) || rec.RecordExtending(&e, l.seq, l.n+1, nil) {
					t.Fatalf("event %d: an extension of an input not the agent's latest, or too short, was taken", e.Seq)
				}
				added := *m
				scratch = append(scratch[:0], m.Input[l.n:]...)
				added.Input = scratch
				e.Model = &added
				if !rec.RecordExtending(&e, l.seq, l.n, nil) {
					t.Fatalf("an extension of %s's latest input (event %d) was refused", e.Agent, l.seq)
				}
				clear(scratch) // the recording keeps none of it
				extended++
			} else {
				rec.Record(&e)
			}
			latest[e.Agent] = struct {
				seq int64
				n   int
			}{e.Seq, len(m.Input)}
			continue
		}
		if e.AgentRun != nil {
			latest[e.Agent] = struct {
				seq int64
				n   int
			}{} // no model input: not a model call's to extend
		}
		rec.Record(&e)
	}
	if extended < 30 {
		t.Fatalf("%d inputs recorded as extensions, want most of 41", extended)
	}
	assertEveryReaderSees(t, rec, want.Snapshot().Events)
}
