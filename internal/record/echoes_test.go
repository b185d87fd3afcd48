package record

import (
	"reflect"
	"strconv"
	"strings"
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

// TestEchoesKeepTheirRoom: replies expected and counted off as a visit's model calls go take no
// allocation once the first took room for them, whether the copy keeps up (one reply waits) or
// runs a reply behind (the older of two is counted off), and each echo counts off its own reply.
func TestEchoesKeepTheirRoom(t *testing.T) {
	var replies [8]traces.Message
	var msgs [8]schema.Message
	for i := range replies {
		replies[i].Content = strconv.Itoa(i)
		msgs[i] = schema.Message{Role: schema.Assistant, Content: replies[i].Content}
	}
	for _, behind := range []int{0, 1} {
		var e echoes
		expected, echoed := 0, 0
		expect := func() { e.expectReply(&replies[expected%len(replies)]); expected++ }
		echo := func() {
			if !e.reply(&msgs[echoed%len(msgs)]) {
				t.Fatalf("%d behind: the echo of reply %d was not told", behind, echoed)
			}
			echoed++
		}
		for range behind + 1 {
			expect()
		}
		echo()
		if allocs := testing.AllocsPerRun(100, func() { expect(); echo() }); allocs != 0 {
			t.Errorf("%d behind: expecting and counting off a reply took %v allocations, want 0", behind, allocs)
		}
		if len(e.replies) != behind || behind > 0 && e.oldest() != &replies[echoed%len(replies)] {
			t.Errorf("%d behind: %d replies wait, the oldest %v; want %d, reply %d", behind, len(e.replies), e.oldest(), behind, echoed)
		}
	}
}

// TestEchoesOfToolResults: each tool result the copy carries counts off one recorded from
// callbacks, and no more than were recorded.
func TestEchoesOfToolResults(t *testing.T) {
	var e echoes
	result := &adk.AgentEvent{Output: &adk.AgentOutput{MessageOutput: &adk.MessageVariant{Role: schema.Tool, Message: schema.ToolMessage("42", "c1")}}}
	reply := &adk.AgentEvent{Output: &adk.AgentOutput{MessageOutput: &adk.MessageVariant{Role: schema.Assistant, Message: schema.AssistantMessage("hi", nil)}}}
	e.expectResult("c1")
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

// TestEchoesOfToolResultsByTheirCall: a whole tool message is the echo of the result recorded for
// its call, in any order; a message of a call whose result was not recorded (it failed, and a
// tool middleware made its error the message the model reads) is no echo, and counts none off.
func TestEchoesOfToolResultsByTheirCall(t *testing.T) {
	var e echoes
	message := func(id string) *adk.AgentEvent {
		return &adk.AgentEvent{Output: &adk.AgentOutput{MessageOutput: &adk.MessageVariant{Role: schema.Tool, Message: schema.ToolMessage("r", id)}}}
	}
	e.expectResult("c2")
	e.expectResult("c3")
	if e.result(message("c1")) {
		t.Error("the message of a call whose result was not recorded was counted as an echo")
	}
	if !e.result(message("c3")) || !e.result(message("c2")) {
		t.Error("the echoes of recorded results, out of order, were not counted")
	}
	if !e.allIn() {
		t.Errorf("results still due: %q", e.results)
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
	v.echoes.expectResult("")
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
	v.echoes.expectResult("")
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

// TestReadEcho: a streamed message read against the oldest reply recorded from callbacks is its
// echo, without being joined, when its text comes in pieces and its tool calls whole in one chunk;
// otherwise it is the message joined, whatever chunk it departs at, which echoes.reply then judges
// as before: the outcome is always what joining it first gave.
func TestReadEcho(t *testing.T) {
	calls := []schema.ToolCall{
		{ID: "c1", Function: schema.FunctionCall{Name: "look", Arguments: `{"a":1}`}},
		{ID: "c2", Function: schema.FunctionCall{Name: "book", Arguments: `{}`}},
	}
	want := &traces.Message{Role: "assistant", Content: "Hello there.", ToolCalls: []traces.ToolCallSpec{
		{ID: "c1", Name: "look", Arguments: `{"a":1}`}, {ID: "c2", Name: "book", Arguments: `{}`}}}
	text := &traces.Message{Role: "assistant", Content: "Hello there."}
	chunk := func(content string, tcs ...schema.ToolCall) *schema.Message {
		return &schema.Message{Role: schema.Assistant, Content: content, ToolCalls: tcs}
	}
	idx := func(i int) *int { return &i }
	// The same call, its text in other bytes (an echo's shares the reply's: see sameText).
	copied := func(c schema.ToolCall) schema.ToolCall {
		return schema.ToolCall{Index: c.Index, ID: strings.Clone(c.ID),
			Function: schema.FunctionCall{Name: strings.Clone(c.Function.Name), Arguments: strings.Clone(c.Function.Arguments)}}
	}
	indexed := func(c schema.ToolCall, i int) schema.ToolCall { c.Index = idx(i); return c }
	for _, tc := range []struct {
		name   string
		want   *traces.Message
		chunks []*schema.Message
		fast   bool // an echo read without joining it
		echo   bool
	}{
		{"text in pieces", text, []*schema.Message{chunk("Hello "), chunk(""), chunk("there.")}, true, true},
		{"text and calls in one chunk", want, []*schema.Message{chunk("Hello there.", calls...)}, true, true},
		{"calls after the text", want, []*schema.Message{chunk("Hello "), chunk("there."), chunk("", calls...)}, true, true},
		{"calls by their index", want, []*schema.Message{chunk("Hello there.",
			schema.ToolCall{Index: idx(0), ID: "c1", Function: calls[0].Function}, schema.ToolCall{Index: idx(1), ID: "c2", Function: calls[1].Function})}, true, true},
		{"calls with their text copied", want, []*schema.Message{chunk("Hello there.", copied(calls[0]), copied(calls[1]))}, true, true},
		{"calls copied from the second on, by their index", want, []*schema.Message{chunk("Hello there.",
			schema.ToolCall{Index: idx(0), ID: "c1", Function: calls[0].Function}, indexed(copied(calls[1]), 1))}, true, true},
		{"calls by swapped indexes", want, []*schema.Message{chunk("Hello there.", indexed(calls[0], 1), indexed(calls[1], 0))}, false, false},
		{"calls in pieces", want, []*schema.Message{chunk("Hello there.", calls[0]), chunk("", calls[1])}, false, true},
		{"a call's arguments in pieces", want, []*schema.Message{chunk("Hello there.", calls[0],
			schema.ToolCall{ID: "c2", Function: schema.FunctionCall{Name: "book", Arguments: `{`}}), chunk("", schema.ToolCall{Function: schema.FunctionCall{Arguments: `}`}})}, false, true},
		{"text cut short", text, []*schema.Message{chunk("Hello ")}, false, false},
		{"text that goes on", text, []*schema.Message{chunk("Hello there."), chunk(" And more.")}, false, false},
		{"other text", text, []*schema.Message{chunk("Hello "), chunk("you.")}, false, false},
		{"calls the reply lacks", text, []*schema.Message{chunk("Hello there.", calls...)}, false, false},
		{"calls missing", want, []*schema.Message{chunk("Hello there.")}, false, false},
		{"other calls", want, []*schema.Message{chunk("Hello there.", calls[1], calls[0])}, false, false},
		{"a tool's message", text, []*schema.Message{{Role: schema.Tool, Content: "Hello there."}}, false, false},
		{"nothing recorded", nil, []*schema.Message{chunk("Hello there.")}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			joined := readStream(schema.StreamReaderFromArray(tc.chunks), schema.Assistant)
			msg, fast := readEcho(schema.StreamReaderFromArray(tc.chunks), schema.Assistant, tc.want)
			if fast != tc.fast {
				t.Fatalf("read as an echo %v, want %v", fast, tc.fast)
			}
			if fast {
				if msg != nil {
					t.Errorf("an echo returned the message %+v", msg)
				}
			} else if got, joinedMsg := traceMessage(msg), traceMessage(joined); !reflect.DeepEqual(got, joinedMsg) || msg.Role != joined.Role {
				t.Fatalf("message %+v (%s), want it joined: %+v (%s)", got, msg.Role, joinedMsg, joined.Role)
			}
			var e echoes
			if tc.want != nil {
				e.expectReply(tc.want)
			}
			if echo := fast || e.reply(msg); echo != tc.echo {
				t.Errorf("echo %v, want %v", echo, tc.echo)
			}
		})
	}
}

// TestSameReplyTellsCallsByTheirBytes: an echo's calls are the reply's whether they hold its
// very strings or copies of their bytes, from any call on (the very strings first); a call that
// differs in its arguments, or its name, after calls that hold the very strings, makes it none.
func TestSameReplyTellsCallsByTheirBytes(t *testing.T) {
	reply := &traces.Message{Role: "assistant", Content: "three", ToolCalls: []traces.ToolCallSpec{
		{ID: "c1", Name: "look", Arguments: `{"n":1}`}, {ID: "c2", Name: "look", Arguments: `{"n":2}`}, {ID: "c3", Name: "look", Arguments: `{"n":3}`}}}
	echo := func(edit func(i int, tc *schema.ToolCall)) *schema.Message {
		m := &schema.Message{Role: schema.Assistant, Content: reply.Content}
		for i, c := range reply.ToolCalls {
			tc := schema.ToolCall{ID: c.ID, Function: schema.FunctionCall{Name: c.Name, Arguments: c.Arguments}}
			edit(i, &tc)
			m.ToolCalls = append(m.ToolCalls, tc)
		}
		return m
	}
	cloneFrom := func(from int) func(int, *schema.ToolCall) {
		return func(i int, tc *schema.ToolCall) {
			if i >= from {
				tc.ID, tc.Function.Name, tc.Function.Arguments = strings.Clone(tc.ID), strings.Clone(tc.Function.Name), strings.Clone(tc.Function.Arguments)
			}
		}
	}
	for _, c := range []struct {
		name string
		msg  *schema.Message
		want bool
	}{
		{"the very strings", echo(func(int, *schema.ToolCall) {}), true},
		{"copies of every call", echo(cloneFrom(0)), true},
		{"copies from the second call", echo(cloneFrom(1)), true},
		{"the last call's arguments differ", echo(func(i int, tc *schema.ToolCall) {
			if i == 2 {
				tc.Function.Arguments = `{"n":4}`
			}
		}), false},
		{"a copied call's name differs", echo(func(i int, tc *schema.ToolCall) {
			cloneFrom(1)(i, tc)
			if i == 2 {
				tc.Function.Name = "lock"
			}
		}), false},
		{"a call fewer", &schema.Message{Role: schema.Assistant, Content: reply.Content, ToolCalls: echo(cloneFrom(0)).ToolCalls[:2]}, false},
	} {
		if got := sameReply(c.msg, reply); got != c.want {
			t.Errorf("%s: sameReply %v, want %v", c.name, got, c.want)
		}
	}
}
