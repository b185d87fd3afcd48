package traces

import (
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
