package record

import (
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestEchoesOfReplies: a message of the copy that says what a recorded reply says is its echo,
// and counts off the replies before it too; another message is the agent's own; the echoes due
// are in once every reply and tool result recorded was carried.
func TestEchoesOfReplies(t *testing.T) {
	var e echoes
	if !isClosed(e.due()) {
		t.Error("echoes are due before anything was recorded")
	}
	e.expectReply(&traces.Message{Role: "assistant", Content: "first"})
	e.expectReply(&traces.Message{Role: "assistant", Content: "second", ToolCalls: []traces.ToolCallSpec{{ID: "c1", Name: "look", Arguments: "{}"}}})
	due := e.due()
	if e.reply(schema.AssistantMessage("a plan of its own", nil)) {
		t.Error("a message no reply said was taken for an echo")
	}
	if e.reply(schema.AssistantMessage("second", nil)) {
		t.Error("a message without the reply's tool calls was taken for its echo")
	}
	second := schema.AssistantMessage("second", []schema.ToolCall{{ID: "c1", Function: schema.FunctionCall{Name: "look", Arguments: "{}"}}})
	if !e.reply(second) {
		t.Fatal("the second reply's echo was not recognised")
	}
	e.observedOwn()
	if !isClosed(due) {
		t.Error("the echoes due are not in after the latest reply's echo (the first's is counted off with it)")
	}
	if e.reply(second) {
		t.Error("one reply was echoed twice")
	}
	e.expectReply(&traces.Message{Content: "picked"})
	e.dropLastReply()
	if !isClosed(e.due()) {
		t.Error("a dropped reply is still due")
	}
}

// TestEchoesOfToolResults: each tool result the copy carries counts off one recorded from
// callbacks, and no more than were recorded.
func TestEchoesOfToolResults(t *testing.T) {
	var e echoes
	result := &adk.AgentEvent{Output: &adk.AgentOutput{MessageOutput: &adk.MessageVariant{Role: schema.Tool, Message: schema.ToolMessage("42", "c1")}}}
	reply := &adk.AgentEvent{Output: &adk.AgentOutput{MessageOutput: &adk.MessageVariant{Role: schema.Assistant, Message: schema.AssistantMessage("hi", nil)}}}
	e.expectResult()
	due, next := e.due(), e.nextOwn()
	if e.result(reply) {
		t.Error("a reply was counted as a tool result's echo")
	}
	if !e.result(result) {
		t.Error("the tool result's echo was not counted")
	}
	if e.result(result) {
		t.Error("a second echo was counted for one result")
	}
	if isClosed(due) || isClosed(next) {
		t.Fatal("waiters woke before the event was recorded")
	}
	e.observedOwn()
	if !isClosed(due) || !isClosed(next) {
		t.Error("recording the echo did not wake the waiters")
	}
}

// TestResultEchoCountedOff: a tool result's echo in a visit's copy of events, with nothing
// streaming, is counted off and dropped (it was recorded from the tool's callback), and whoever
// waits for the copy to catch up is woken then, not at the wait's deadline; one while the visit's
// output is still being read waits for it.
func TestResultEchoCountedOff(t *testing.T) {
	rec := traces.NewRecording(traces.Run{ID: "r1", Flow: "f"}, nil)
	r := NewRecorder(rec, "f", nil)
	v := &visit{rec: r, agent: "a", chat: true}
	echo := &adk.AgentEvent{AgentName: "a", Output: &adk.AgentOutput{MessageOutput: &adk.MessageVariant{
		Role: schema.Tool, Message: schema.ToolMessage("ok", "c1")}}}
	r.mu.Lock()
	v.echoes.expectResult()
	due, next := v.echoes.due(), v.echoes.nextOwn()
	r.mu.Unlock()
	r.observe(v, echo)
	if !isClosed(due) || !isClosed(next) {
		t.Errorf("after the echo: caught up %v, own event seen %v; want both", isClosed(due), isClosed(next))
	}
	if n := len(rec.Snapshot().Events); n != 0 {
		t.Errorf("the echo recorded %d events, want none", n)
	}

	r.mu.Lock()
	v.echoes.expectResult()
	due = v.echoes.due()
	r.mu.Unlock()
	v.outputs.add() // a reply still being read
	observed := make(chan struct{})
	go func() { r.observe(v, echo); close(observed) }()
	select {
	case <-observed:
		t.Fatal("the echo was counted off while the visit's output was still being read")
	case <-time.After(20 * time.Millisecond):
	}
	v.outputs.done()
	<-observed
	if !isClosed(due) {
		t.Error("the echo, once the output was read, did not catch the copy up")
	}
}
