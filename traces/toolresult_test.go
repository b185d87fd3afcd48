package traces_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/baton-dev/baton/traces"
)

// TestExtensionsReferToToolResults: a model input handed as an extension, with where the ends of
// the agent's tool calls were written (RecordTool's ToolResults), has each message that is one of
// those results, byte for byte, written as where its tool.finished holds it, whatever the order
// the calls ended in; a message a middleware rewrote, one that only nearly is a result (another
// role, tool calls, name), one whose call is unknown, and one whose result is none or another
// recording's are written whole. Every reader reads the events back exactly as the same events
// recorded whole, and so does the JSON export, byte for byte. A message written as a reference
// reads its strings where the tool.finished holds them: the same bytes, at the same address.
func TestExtensionsReferToToolResults(t *testing.T) {
	at := time.Date(2026, 12, 5, 1, 2, 3, 0, time.UTC)
	path := []string{"a"}
	user := traces.Message{Role: "user", Content: "count"}
	refs, whole := newRecording(t), newRecording(t)
	for _, rec := range []*traces.Recording{refs, whole} {
		rec.Record(&traces.Event{Time: at, Kind: traces.KindModelStarted, Agent: "a", RunPath: path,
			Model: &traces.ModelCall{ID: "m1", Input: []traces.Message{user}}})
	}
	ids := []string{"c1", "c2", "c3", "c4", "c5", "c6"}
	results := make([]traces.ToolResult, len(ids)+1) // and one never set: none
	ends := make([]traces.ToolCall, len(ids))
	for i, id := range ids {
		ends[i] = traces.ToolCall{Name: "tick", CallID: id, Arguments: `{}`, Result: "result of " + id}
		msg := traces.Message{Role: "tool", Content: ends[i].Result, ToolCallID: id, ToolName: "tick"}
		nanos := at.Add(time.Duration(i+1) * time.Millisecond).UnixNano()
		rec := refs
		if id == "c6" {
			rec = newRecording(t) // another recording's result: none of this one's
		}
		rec.RecordTool(nanos, true, "a", path, &ends[i], true, &results[i])
		if rec == refs {
			e := traces.Event{Time: time.Unix(0, nanos).UTC(), Kind: traces.KindToolFinished, Agent: "a", RunPath: path, Tool: &ends[i]}
			whole.Record(&e)
			whole.Record(&traces.Event{Time: e.Time, Kind: traces.KindMessage, Agent: "a", RunPath: path, Message: &msg})
		}
	}
	result := func(i int) traces.Message {
		return traces.Message{Role: "tool", Content: ends[i].Result, ToolCallID: ends[i].CallID, ToolName: ends[i].Name}
	}
	copied := result(1) // a middleware's copy, of the same bytes
	copied.Content, copied.ToolCallID, copied.ToolName = strings.Clone(copied.Content), strings.Clone(copied.ToolCallID), strings.Clone(copied.ToolName)
	rewritten := result(2)
	rewritten.Content = "rewritten " + rewritten.Content
	nearly := []traces.Message{result(0), result(0), result(0)}
	nearly[0].Role = "user"
	nearly[1].ToolCalls = []traces.ToolCallSpec{}
	nearly[2].ToolName = "tock"
	unknown := traces.Message{Role: "tool", Content: "result of c9", ToolCallID: "c9", ToolName: "tick"}
	added := []struct {
		m      traces.Message
		shared bool // written as where its tool.finished is
	}{
		{traces.Message{Role: "assistant", Content: "six ticks"}, false},
		{result(0), true},
		{copied, true},
		{rewritten, false},
		{result(4), true}, // c5 ended before c4 (in parallel)
		{result(3), true},
		{nearly[0], false}, {nearly[1], false}, {nearly[2], false},
		{unknown, false},
		{result(5), false}, // another recording's
		{traces.Message{Role: "tool", ToolCallID: "c7", ToolName: "tick"}, false}, // its result none
	}
	input := []traces.Message{user}
	var msgs []traces.Message
	for _, a := range added {
		msgs = append(msgs, a.m)
		input = append(input, a.m)
	}
	second := at.Add(time.Second)
	e := traces.Event{Time: second, Kind: traces.KindModelStarted, Agent: "a", RunPath: path,
		Model: &traces.ModelCall{ID: "m2", Input: msgs}}
	if !refs.RecordExtending(&e, 1, 1, results) {
		t.Fatal("an extension of the agent's latest input was refused")
	}
	whole.Record(&traces.Event{Time: second, Kind: traces.KindModelStarted, Agent: "a", RunPath: path,
		Model: &traces.ModelCall{ID: "m2", Input: input}})
	want := whole.Snapshot().Events
	assertEveryReaderSees(t, refs, want)
	got := refs.Snapshot()
	exported, err := traces.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if wantJSON, err := traces.Marshal(whole.Snapshot()); err != nil || !bytes.Equal(exported, wantJSON) {
		t.Fatalf("the JSON export differs from the same events recorded whole (%v)", err)
	}
	finished := map[string]*traces.ToolCall{}
	for _, e := range got.Events {
		if e.Kind == traces.KindToolFinished {
			finished[e.Tool.CallID] = e.Tool
		}
	}
	in := got.Events[len(got.Events)-1].Model.Input[1:]
	for i, a := range added {
		end := finished[in[i].ToolCallID]
		shared := end != nil && unsafe.StringData(in[i].Content) == unsafe.StringData(end.Result) &&
			unsafe.StringData(in[i].ToolCallID) == unsafe.StringData(end.CallID)
		if shared != a.shared {
			t.Errorf("added message %d (%+v) written as where its tool call's end is: %v, want %v", i, a.m, shared, a.shared)
		}
	}
}

// TestExtensionsReferToFarToolResults: results written more than a byte's varint back (a reply of
// many calls, each with its end and its message) are referred to as well, and read back exactly.
func TestExtensionsReferToFarToolResults(t *testing.T) {
	at := time.Date(2026, 12, 5, 1, 2, 3, 0, time.UTC)
	user := traces.Message{Role: "user", Content: "count"}
	refs, whole := newRecording(t), newRecording(t)
	for _, rec := range []*traces.Recording{refs, whole} {
		rec.Record(&traces.Event{Time: at, Kind: traces.KindModelStarted, Agent: "a",
			Model: &traces.ModelCall{ID: "m1", Input: []traces.Message{user}}})
	}
	const calls = 100
	results := make([]traces.ToolResult, calls)
	var added []traces.Message
	for i := range calls {
		end := traces.ToolCall{Name: "tick", CallID: fmt.Sprintf("call_%d", i), Result: fmt.Sprint(i)}
		msg := traces.Message{Role: "tool", Content: end.Result, ToolCallID: end.CallID, ToolName: end.Name}
		refs.RecordTool(at.UnixNano(), true, "a", nil, &end, true, &results[i])
		whole.Record(&traces.Event{Time: at, Kind: traces.KindToolFinished, Agent: "a", Tool: &end})
		whole.Record(&traces.Event{Time: at, Kind: traces.KindMessage, Agent: "a", Message: &msg})
		added = append(added, msg)
	}
	e := traces.Event{Time: at, Kind: traces.KindModelStarted, Agent: "a", Model: &traces.ModelCall{ID: "m2", Input: added}}
	if !refs.RecordExtending(&e, 1, 1, results) {
		t.Fatal("an extension of the agent's latest input was refused")
	}
	whole.Record(&traces.Event{Time: at, Kind: traces.KindModelStarted, Agent: "a",
		Model: &traces.ModelCall{ID: "m2", Input: append([]traces.Message{user}, added...)}})
	assertEveryReaderSees(t, refs, whole.Snapshot().Events)
	got := refs.Snapshot().Events
	for i, m := range got[len(got)-1].Model.Input[1:] {
		if end := got[1+2*i].Tool; unsafe.StringData(m.ToolCallID) != unsafe.StringData(end.CallID) {
			t.Fatalf("result %d (%d events back) written whole", i, 2*(calls-i))
		}
	}
}
