package traces

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestLongStringsAreWrittenOnce checks that a long string the recorder hands to several events (a
// tool's result to its end, the result's message and the next model input) takes its room in the
// log once.
func TestLongStringsAreWrittenOnce(t *testing.T) {
	rec := NewRecording(Run{ID: "r"}, nil)
	result := strings.Repeat("a long result ", 1000)
	msg := Message{Role: "tool", Content: result, ToolCallID: "c1", ToolName: "t"}
	rec.Emit(Event{Kind: KindToolFinished, Agent: "a", Tool: &ToolCall{Name: "t", CallID: "c1", Result: result}})
	rec.Emit(Event{Kind: KindMessage, Agent: "a", Message: &msg})
	rec.Emit(Event{Kind: KindModelStarted, Agent: "a", Model: &ModelCall{ID: "m1", Input: []Message{msg}}})
	used := 0
	for _, c := range rec.events.chunks[:len(rec.events.chunks)-1] {
		used += len(c)
	}
	used += rec.events.off
	if used > len(result)+200 {
		t.Errorf("three events holding one %d-byte string take %d bytes", len(result), used)
	}
	for _, e := range rec.Snapshot().Events {
		if got := eventText(e); got != result {
			t.Errorf("event %d read back without the string", e.Seq)
		}
	}
}

// eventText is the string each event of the test above holds.
func eventText(e Event) string {
	switch {
	case e.Tool != nil:
		return e.Tool.Result
	case e.Message != nil:
		return e.Message.Content
	case e.Model != nil && len(e.Model.Input) == 1:
		return e.Model.Input[0].Content
	}
	return ""
}

// TestToolResultMessagesReferToTheirTool checks that a tool's result message, which repeats its
// tool call's name, id and result, is written as where that call is, and that messages that only
// nearly repeat it are written whole: each reads back as emitted.
func TestToolResultMessagesReferToTheirTool(t *testing.T) {
	rec := NewRecording(Run{ID: "r"}, nil)
	rec.Emit(Event{Kind: KindToolFinished, Agent: "a", Tool: &ToolCall{Name: "tick", CallID: "call_1", Arguments: `{"n":1}`, Result: "42", DurationMS: 1.5}})
	result := Message{Role: "tool", Content: "42", ToolCallID: "call_1", ToolName: "tick"}
	sent := []Message{result,
		{Role: "user", Content: "42", ToolCallID: "call_1", ToolName: "tick"},
		{Role: "tool", Content: "43", ToolCallID: "call_1", ToolName: "tick"},
		{Role: "tool", Content: "42", ToolCallID: "call_2", ToolName: "tick"},
		{Role: "tool", Content: "42", ToolCallID: "call_1", ToolName: "tock"},
		{Role: "tool", Content: "42", ToolCallID: "call_1", ToolName: "tick", ToolCalls: []ToolCallSpec{}},
		result, // the last tool call's still, after other messages
	}
	var sizes []int
	for i := range sent {
		before := rec.events.off
		rec.Emit(Event{Kind: KindMessage, Agent: "a", Message: &sent[i]})
		sizes = append(sizes, rec.events.off-before)
	}
	for i, e := range rec.Snapshot().Events[1:] {
		if !reflect.DeepEqual(*e.Message, sent[i]) {
			t.Errorf("message %d read back as %#v, want %#v", i+1, *e.Message, sent[i])
		}
		if referred := reflect.DeepEqual(sent[i], result); referred != (sizes[i] < sizes[1]) {
			t.Errorf("message %d (%+v) took %d bytes against %d for one written whole; want it written as its tool's: %v",
				i+1, sent[i], sizes[i], sizes[1], referred)
		}
	}
}

// TestRepliesAreWrittenOnce checks that a model's reply, which its message event and the next
// call's input repeat in the very strings of its output, is written once, and that every event
// reads back as emitted: also when the caller reuses the reply's array of tool calls for the
// next reply, as Emit lets it, and when a message only nearly repeats the reply.
func TestRepliesAreWrittenOnce(t *testing.T) {
	rec := NewRecording(Run{ID: "r"}, nil)
	calls := []ToolCallSpec{{ID: "c1", Name: "tick", Arguments: `{"n":1}`}, {ID: "c2", Name: "tick", Arguments: `{"n":2}`}}
	reply := Message{Role: "assistant", Content: "two ticks", ToolCalls: calls}
	user := Message{Role: "user", Content: "count"}
	var sent []Event
	emit := func(e Event) int {
		before := rec.events.off
		sent = append(sent, rec.Emit(e))
		return rec.events.off - before
	}
	emit(Event{Kind: KindModelFinished, Agent: "a", Model: &ModelCall{ID: "m1", Output: &reply}})
	asMessage := emit(Event{Kind: KindMessage, Agent: "a", Message: &reply})
	nearly := reply
	nearly.ToolCalls = slices.Clone(calls)
	nearly.ToolCalls[1].Arguments = `{"n":3}`
	whole := emit(Event{Kind: KindMessage, Agent: "a", Message: &nearly})
	if asMessage >= whole {
		t.Errorf("the reply's message took %d bytes, no fewer than a message that only nearly repeats it (%d)", asMessage, whole)
	}
	emit(Event{Kind: KindModelStarted, Agent: "a", Model: &ModelCall{ID: "m2", Input: []Message{user, reply}}})
	// The caller reuses the reply's array of tool calls for the next reply: the first reads back
	// as it was.
	calls[0] = ToolCallSpec{ID: "c3", Name: "tock", Arguments: `{}`}
	next := Message{Role: "assistant", Content: "two ticks", ToolCalls: calls}
	emit(Event{Kind: KindMessage, Agent: "a", Message: &next})
	sent[0].Model.Output = &Message{Role: "assistant", Content: "two ticks", ToolCalls: []ToolCallSpec{{ID: "c1", Name: "tick", Arguments: `{"n":1}`}, calls[1]}}
	sent[1].Message = sent[0].Model.Output
	sent[3].Model.Input = []Message{user, *sent[0].Model.Output}
	sent[4].Message = &Message{Role: "assistant", Content: "two ticks", ToolCalls: slices.Clone(calls)}
	for i, e := range rec.Snapshot().Events {
		if !reflect.DeepEqual(e, sent[i]) {
			t.Errorf("event %d read back as %+v, want %+v", i+1, e, sent[i])
		}
	}
}

// TestLaterPayloadsAreEveryPayloadAfterMessage: noLaterPayloads reads the fields from Transfer to
// Pause as one block of pointers; a field added among them or after them, or one that is not a
// pointer, would be missed or misread.
func TestLaterPayloadsAreEveryPayloadAfterMessage(t *testing.T) {
	typ := reflect.TypeFor[Event]()
	transfer, _ := typ.FieldByName("Transfer")
	message, _ := typ.FieldByName("Message")
	if transfer.Index[0] != message.Index[0]+1 || typ.Field(typ.NumField()-1).Name != "Pause" {
		t.Fatalf("Event's payloads after Message no longer run from Transfer to Pause, its last field")
	}
	n := 0
	for i := transfer.Index[0]; i < typ.NumField(); i++ {
		if f := typ.Field(i); f.Type.Kind() != reflect.Pointer {
			t.Errorf("Event.%s is not a pointer: noLaterPayloads would misread it", f.Name)
		}
		n++
	}
	if n != len(laterPayloads{}) {
		t.Errorf("%d payloads after Message, laterPayloads holds %d", n, len(laterPayloads{}))
	}
	for i := transfer.Index[0]; i < typ.NumField(); i++ {
		var e Event
		reflect.ValueOf(&e).Elem().Field(i).Set(reflect.New(typ.Field(i).Type.Elem()))
		if noLaterPayloads(&e) {
			t.Errorf("an event with %s reads as having no payload after Message", typ.Field(i).Name)
		}
	}
	if !noLaterPayloads(&Event{Tool: &ToolCall{}, Message: &Message{}, Model: &ModelCall{}}) {
		t.Error("an event with payloads up to Message only reads as having later ones")
	}
}

// TestFixedHeadIsTheHead checks that the head written in one block is, byte for byte, the head
// written field by field, for events of the usual shape, and that events of any other shape (out
// of order, another zone, a kind the format does not know, a new actor, one far back, later
// payloads) or with too little room in the chunk are left to the fields.
func TestFixedHeadIsTheHead(t *testing.T) {
	at := time.Date(2026, 12, 5, 1, 2, 3, 456789, time.UTC)
	path := []string{"root", "a"}
	var w logWriter
	w.add(&Event{Seq: 1, Time: at, Kind: KindAgentStarted, Agent: "a", RunPath: path, AgentRun: &AgentRun{}})
	usual := []Event{
		{Seq: 2, Time: at, Kind: KindToolStarted, Agent: "a", RunPath: path, Tool: &ToolCall{Name: "t"}},
		{Seq: 2, Time: at.Add(time.Hour), Kind: KindMessage, Agent: "a", RunPath: slices.Clone(path), Message: &Message{Role: "tool"}},
		{Seq: 2, Time: at, Kind: KindModelFinished, Agent: strings.Clone("a"), RunPath: path, Model: &ModelCall{ID: "m1"}},
	}
	near := w
	near.n = 200 // the actor 200 events back: two bytes
	for _, w := range []*logWriter{&w, &near} {
		seq := int64(w.n + 1)
		for _, e := range usual {
			e.Seq = seq
			h, ok := w.appendFixedHead(make([]byte, 1, 16), &e, seq, noLaterPayloads(&e))
			if !ok {
				t.Fatalf("%s after %d events: not written in one block", e.Kind, w.n)
			}
			if want := w.appendHeadFields([]byte{0}, &e, seq, noLaterPayloads(&e)); string(h) != string(want) {
				t.Errorf("%s after %d events: head % x, field by field % x", e.Kind, w.n, h, want)
			}
		}
	}
	far := w
	far.n = 20000
	other := []struct {
		w    *logWriter
		e    Event
		seq  int64
		what string
	}{
		{&w, Event{Seq: 5, Time: at, Kind: KindMessage, Agent: "a", RunPath: path}, 2, "a gap in seqs"},
		{&w, Event{Seq: 2, Time: at.In(time.FixedZone("x", 3600)), Kind: KindMessage, Agent: "a", RunPath: path}, 2, "another zone"},
		{&w, Event{Seq: 2, Time: at, Kind: "custom", Agent: "a", RunPath: path}, 2, "an unknown kind"},
		{&w, Event{Seq: 2, Time: at, Kind: KindMessage, Agent: "b", RunPath: path}, 2, "another agent"},
		{&w, Event{Seq: 2, Time: at, Kind: KindMessage, Agent: "a", RunPath: path[:1]}, 2, "another path"},
		{&w, Event{Seq: 2, Time: at, Kind: KindError, Agent: "a", RunPath: path, Error: &ErrorDetail{Message: "x"}}, 2, "a later payload"},
		{&far, Event{Seq: 20001, Time: at, Kind: KindMessage, Agent: "a", RunPath: path}, 20001, "an actor 20,000 events back"},
	}
	if _, ok := w.appendFixedHead(make([]byte, 0, 14), &usual[0], 2, true); ok {
		t.Errorf("written in one block into 14 bytes of room")
	}
	for _, o := range other {
		if _, ok := o.w.appendFixedHead(make([]byte, 0, 64), &o.e, o.seq, noLaterPayloads(&o.e)); ok {
			t.Errorf("%s: written in one block", o.what)
		}
	}
}

// TestUsualEventsAreWrittenAsAddWritesThem checks that addUsual writes the usual events (a tool
// call's three, and others of their shape) byte for byte as add does, across chunks, and leaves
// every other event to add having changed nothing: one that needs more than a head and a tool
// call or message, a run.started (whose time the recording notes), one without a time, of a kind
// the format does not know, in another zone, or by a new actor.
func TestUsualEventsAreWrittenAsAddWritesThem(t *testing.T) {
	at := time.Date(2026, 12, 5, 1, 2, 3, 456789, time.UTC)
	path := []string{"root", "a"}
	var usual []Event
	for i := range 40 {
		long := strings.Repeat("r", 1000+i) // outgrows the room left in a chunk now and then
		id, result := "call_"+strings.Repeat("x", i%3), "42"
		if i%4 == 3 {
			result = long
		}
		msg := Message{Role: "tool", Content: result, ToolCallID: id, ToolName: "tick"}
		usual = append(usual,
			Event{Time: at, Kind: KindToolStarted, Agent: "a", RunPath: path, Tool: &ToolCall{Name: "tick", CallID: id, Arguments: `{"n":1}`}},
			Event{Time: at.Add(time.Duration(i)), Kind: KindToolFinished, Agent: "a", RunPath: path, Tool: &ToolCall{Name: "tick", CallID: id, Result: result, DurationMS: 0.5}},
			Event{Time: at, Kind: KindMessage, Agent: "a", RunPath: path, Message: &msg},
			Event{Time: at, Kind: KindMessage, Agent: "a", RunPath: path, Message: &Message{Role: "assistant", Content: long}},
			Event{Time: at, Kind: KindResumed, Agent: "a", RunPath: path})
	}
	var fast, slow logWriter
	for _, w := range []*logWriter{&fast, &slow} {
		w.add(&Event{Seq: 1, Time: at, Kind: KindAgentStarted, Agent: "a", RunPath: path, AgentRun: &AgentRun{}})
	}
	written := 0
	for i := range usual {
		e, want := usual[i], usual[i]
		want.Seq = int64(slow.n + 1)
		now := time.Now().UTC()
		e.Time = now.Add(want.Time.Sub(now)) // with a monotonic reading, which addUsual strips
		if fast.addUsual(&e) {
			written++
			if e.Seq != want.Seq || e.Time != want.Time {
				t.Errorf("event %d numbered and stamped %d %v, want %d %v", i, e.Seq, e.Time, want.Seq, want.Time)
			}
		} else { // too little room left for its head: as the recording does
			e.Seq, e.Time = want.Seq, want.Time
			fast.add(&e)
		}
		slow.add(&want)
	}
	if written < len(usual)*9/10 {
		t.Errorf("%d usual events of %d written as such", written, len(usual))
	}
	if !reflect.DeepEqual(fast.eventLog, slow.eventLog) || fast.off != slow.off || !reflect.DeepEqual(fast.recent, slow.recent) {
		t.Fatalf("the usual events written in %d chunks, %d bytes into the last; add wrote them in %d, %d", len(fast.chunks), fast.off, len(slow.chunks), slow.off)
	}
	other := []Event{
		{Time: at, Kind: KindRunStarted, Agent: "a", RunPath: path},
		{Time: at, Kind: KindModelStarted, Agent: "a", RunPath: path, Model: &ModelCall{ID: "m1"}},
		{Time: at, Kind: KindError, Agent: "a", RunPath: path, Error: &ErrorDetail{Message: "x"}},
		{Kind: KindMessage, Agent: "a", RunPath: path, Message: &Message{Role: "tool"}},
		{Time: at, Kind: "custom", Agent: "a", RunPath: path},
		{Time: at.In(time.FixedZone("x", 3600)), Kind: KindMessage, Agent: "a", RunPath: path},
		{Time: at, Kind: KindMessage, Agent: "b", RunPath: path},
	}
	for _, e := range other {
		before := fast
		if fast.addUsual(&e) {
			t.Errorf("%s by %s at %v written as a usual event", e.Kind, e.Agent, e.Time)
		}
		if !reflect.DeepEqual(fast.eventLog, before.eventLog) || fast.off != before.off || e.Seq != 0 {
			t.Errorf("%s by %s: the log changed, or the event was numbered, though it was not written", e.Kind, e.Agent)
		}
	}
	if new(logWriter).addUsual(&usual[0]) {
		t.Error("an event written as a usual one into a log that has no chunk yet")
	}
}

// TestRecordWithMessageIsTwoRecords checks that a tool call's end and its result's message
// recorded at once are recorded exactly as two Records would record them, byte for byte in the
// log, wherever the pair falls in the chunks (the message's head may not fit after the end), for
// an end of any shape (one without a time, which the recording stamps, one in another zone), and
// that after Finish neither is recorded.
func TestRecordWithMessageIsTwoRecords(t *testing.T) {
	at := time.Date(2026, 12, 5, 1, 2, 3, 456789, time.UTC)
	path := []string{"root", "a"}
	now := func() time.Time { return at.Add(time.Minute) }
	pair, apart := NewRecording(Run{ID: "r"}, nil), NewRecording(Run{ID: "r"}, nil)
	pair.now, apart.now = now, now
	for _, rec := range []*Recording{pair, apart} {
		rec.Emit(Event{Time: at, Kind: KindAgentStarted, Agent: "a", RunPath: path, AgentRun: &AgentRun{}})
	}
	for i := range 300 {
		result := strings.Repeat("r", i%70) // short and long, and a room left of every size
		end := Event{Time: at.Add(time.Duration(i)), Kind: KindToolFinished, Agent: "a", RunPath: path,
			Tool: &ToolCall{Name: "tick", CallID: "call_" + strings.Repeat("x", i%5), Result: result}}
		switch i % 50 {
		case 7:
			end.Time = time.Time{}
		case 8:
			end.Time = end.Time.In(time.FixedZone("x", 3600))
		}
		msg := Message{Role: "tool", Content: result, ToolCallID: end.Tool.CallID, ToolName: "tick"}
		e := end
		seq := pair.RecordWithMessage(&e, &msg)
		first := end
		apart.Record(&first)
		second := Event{Time: first.Time, Kind: KindMessage, Agent: "a", RunPath: path, Message: &msg}
		apart.Record(&second)
		if e.Seq != first.Seq || seq != second.Seq || e.Time != first.Time {
			t.Fatalf("pair %d recorded as %d and %d at %v; apart %d and %d at %v", i, e.Seq, seq, e.Time, first.Seq, second.Seq, first.Time)
		}
	}
	if !reflect.DeepEqual(pair.events.eventLog, apart.events.eventLog) || pair.events.off != apart.events.off {
		t.Fatalf("the pairs' log differs from the log of the same events recorded one by one")
	}
	if got, want := pair.Snapshot().Events, apart.Snapshot().Events; !reflect.DeepEqual(got, want) {
		t.Fatalf("the pairs read back otherwise than the events recorded one by one")
	}
	pair.Finish(StatusCompleted, "")
	e := Event{Time: at, Kind: KindToolFinished, Agent: "a", RunPath: path, Tool: &ToolCall{Name: "tick"}}
	if seq := pair.RecordWithMessage(&e, &Message{Role: "tool"}); seq != 0 || e.Seq != 0 || pair.Len() != apart.Len()+1 {
		t.Errorf("after Finish: recorded as %d and %d, %d events held", e.Seq, seq, pair.Len())
	}
}

// TestRecordToolIsRecord checks that a tool call's events recorded by RecordTool, with no Event,
// are recorded exactly as Record would record them at the same time (and the end with its
// result's message as two Records), byte for byte in the log and by seq, wherever they fall in
// the chunks, for events of any shape (at the ends of timeUTC's range and past them, by a new
// actor, which take the general way), and that after Finish nothing is recorded.
func TestRecordToolIsRecord(t *testing.T) {
	at := time.Date(2026, 12, 5, 1, 2, 3, 456789, time.UTC)
	paths := [][]string{{"root", "a"}, {"root", "b"}}
	now := func() time.Time { return at.Add(time.Minute) }
	tool, apart := NewRecording(Run{ID: "r"}, nil), NewRecording(Run{ID: "r"}, nil)
	tool.now, apart.now = now, now
	for _, rec := range []*Recording{tool, apart} {
		rec.Emit(Event{Time: at, Kind: KindAgentStarted, Agent: "a", RunPath: paths[0], AgentRun: &AgentRun{}})
	}
	for i := range 300 {
		agent, path := "a", paths[0]
		if i%40 == 13 {
			agent, path = "b", paths[1] // a new actor: written whole
		}
		nanos := at.Add(time.Duration(i)).UnixNano()
		switch i % 50 {
		case 7:
			nanos = minUTCNanos - 1
		case 8:
			nanos = minUTCNanos
		case 9:
			nanos = maxUTCNanos - 1
		case 10:
			nanos = maxUTCNanos
		}
		when := time.Unix(0, nanos).UTC()
		result := strings.Repeat("r", i%70) // short and long, and a room left of every size
		id := "call_" + strings.Repeat("x", i%5)
		start := ToolCall{Name: "tick", CallID: id, Arguments: `{"n":1}`}
		end := ToolCall{Name: "tick", CallID: id, Result: result, DurationMS: 0.5}
		msg := Message{Role: "tool", Content: result, ToolCallID: id, ToolName: "tick"}
		withResult := i%11 != 5 // else an end that failed: no result's message
		seqs := []int64{
			tool.RecordTool(nanos, false, agent, path, &start, false, nil),
			tool.RecordTool(nanos, true, agent, path, &end, withResult, nil),
		}
		first := Event{Time: when, Kind: KindToolStarted, Agent: agent, RunPath: path, Tool: &start}
		apart.Record(&first)
		second := Event{Time: when, Kind: KindToolFinished, Agent: agent, RunPath: path, Tool: &end}
		apart.Record(&second)
		want := []int64{first.Seq, second.Seq}
		if withResult {
			third := Event{Time: second.Time, Kind: KindMessage, Agent: agent, RunPath: path, Message: &msg}
			apart.Record(&third)
			want[1] = third.Seq
		}
		if !reflect.DeepEqual(seqs, want) {
			t.Fatalf("tool call %d recorded as %v; by Record %v", i, seqs, want)
		}
	}
	if !reflect.DeepEqual(tool.events.eventLog, apart.events.eventLog) || tool.events.off != apart.events.off {
		t.Fatalf("RecordTool's log differs from the log of the same events recorded by Record")
	}
	if got, want := tool.Snapshot().Events, apart.Snapshot().Events; !reflect.DeepEqual(got, want) {
		t.Fatalf("RecordTool's events read back otherwise than the events recorded by Record")
	}
	tool.Finish(StatusCompleted, "")
	n := tool.Len()
	if seq := tool.RecordTool(at.UnixNano(), true, "a", paths[0], &ToolCall{Name: "tick"}, true, nil); seq != 0 || tool.Len() != n {
		t.Errorf("after Finish: recorded as %d, %d events held (%d before)", seq, tool.Len(), n)
	}
}

// TestRecordMessagesIsRecord: tool results' messages recorded together after their calls' ends
// (a reply's calls, then the messages the agent hands its model) read back exactly as the same
// events recorded by Record, whether a message is a call's result in its very strings (written as
// where that result is, each where its own call's end was written, not only the last) or another
// text; the log is smaller for it; nothing is recorded after Finish.
func TestRecordMessagesIsRecord(t *testing.T) {
	at := time.Date(2026, 12, 5, 1, 2, 3, 456789, time.UTC)
	path := []string{"root", "a"}
	batched, apart := NewRecording(Run{ID: "r"}, nil), NewRecording(Run{ID: "r"}, nil)
	for _, rec := range []*Recording{batched, apart} {
		rec.Emit(Event{Time: at, Kind: KindAgentStarted, Agent: "a", RunPath: path, AgentRun: &AgentRun{}})
	}
	for batch := range 60 {
		nanos := at.Add(time.Duration(batch)).UnixNano()
		when := time.Unix(0, nanos).UTC()
		n := 1 + batch%4
		msgs, of := make([]Message, n), make([]*ToolResult, n)
		for j := range n {
			id := fmt.Sprintf("call_%d_%d", batch, j)
			result := strings.Repeat("r", (batch*7+j*13)%90) // short and long
			end := ToolCall{Name: "tick", CallID: id, Result: result}
			of[j] = new(ToolResult)
			batched.RecordTool(nanos, true, "a", path, &end, false, of[j])
			apart.Record(&Event{Time: when, Kind: KindToolFinished, Agent: "a", RunPath: path, Tool: &end})
			msgs[j] = Message{Role: "tool", Content: result, ToolCallID: id, ToolName: "tick"}
			switch (batch + j) % 5 {
			case 3:
				msgs[j].Content = "short(" + result + ")" // rewritten on its way to the model
			case 4:
				of[j] = nil // where its end was written not known
			}
		}
		seq := batched.RecordMessages(nanos, "a", path, msgs, of)
		for j := range msgs {
			e := Event{Time: when, Kind: KindMessage, Agent: "a", RunPath: path, Message: &msgs[j]}
			apart.Record(&e)
			if j == n-1 && seq != e.Seq {
				t.Fatalf("batch %d: the last message recorded as %d; by Record %d", batch, seq, e.Seq)
			}
		}
	}
	if got, want := batched.Snapshot().Events, apart.Snapshot().Events; !reflect.DeepEqual(got, want) {
		t.Fatalf("RecordMessages' events read back otherwise than the events recorded by Record")
	}
	used := func(w *logWriter) int { // bytes written: the full chunks, then the last one's
		n := w.off
		for _, c := range w.chunks[:len(w.chunks)-1] {
			n += len(c)
		}
		return n
	}
	if got, want := used(&batched.events), used(&apart.events); got >= want {
		t.Errorf("RecordMessages' log takes %d bytes, Record's %d: results not written as where they are", got, want)
	}
	batched.Finish(StatusCompleted, "")
	n := batched.Len()
	if seq := batched.RecordMessages(at.UnixNano(), "a", path, []Message{{Role: "tool"}}, []*ToolResult{nil}); seq != 0 || batched.Len() != n {
		t.Errorf("after Finish: recorded as %d, %d events held (%d before)", seq, batched.Len(), n)
	}
}
