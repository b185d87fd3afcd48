package traces

import (
	"reflect"
	"strings"
	"testing"
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
