package record

import (
	"reflect"
	"testing"

	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// A streamed reply's tool calls join across chunks: whole in one chunk, split by index, and
// continued without an id; content and usage likewise. Joined in trace form (a reply to be
// recorded), they are the same calls.
func TestStreamedMessageJoinsChunks(t *testing.T) {
	one, two := 1, 2
	chunks := []*schema.Message{
		{Role: schema.Assistant, Content: "Let me ", ToolCalls: []schema.ToolCall{
			{ID: "c1", Type: "function", Function: schema.FunctionCall{Name: "tick", Arguments: `{"n":1}`}},
			{ID: "c2", Function: schema.FunctionCall{Name: "ti", Arguments: `{"n"`}},
		}},
		{Content: "count.", ToolCalls: []schema.ToolCall{{Function: schema.FunctionCall{Name: "ck", Arguments: `:2}`}}}},
		{ToolCalls: []schema.ToolCall{
			{Index: &two, ID: "c3", Function: schema.FunctionCall{Name: "tock", Arguments: `{`}},
			{Index: &one, Function: schema.FunctionCall{Arguments: ""}},
		}},
		{ToolCalls: []schema.ToolCall{{Index: &two, Function: schema.FunctionCall{Arguments: `}`}}}},
		{ResponseMeta: &schema.ResponseMeta{Usage: &schema.TokenUsage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}}},
	}
	var s streamedMessage
	for _, c := range chunks {
		s.add(c)
	}
	m := s.message()
	if m.Role != schema.Assistant || m.Content != "Let me count." {
		t.Fatalf("role %q content %q", m.Role, m.Content)
	}
	want := []struct{ id, typ, name, args string }{
		{"c1", "function", "tick", `{"n":1}`},
		{"c2", "", "tick", `{"n":2}`},
		{"c3", "", "tock", `{}`},
	}
	if len(m.ToolCalls) != len(want) {
		t.Fatalf("%d tool calls, want %d: %+v", len(m.ToolCalls), len(want), m.ToolCalls)
	}
	for i, w := range want {
		tc := m.ToolCalls[i]
		if tc.ID != w.id || tc.Type != w.typ || tc.Function.Name != w.name || tc.Function.Arguments != w.args {
			t.Errorf("call %d: %+v, want %+v", i, tc, w)
		}
	}
	if m.ResponseMeta == nil || *m.ResponseMeta.Usage != (schema.TokenUsage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}) {
		t.Errorf("usage %+v", m.ResponseMeta)
	}
	if chunks[0].ToolCalls[1].Function.Name != "ti" {
		t.Error("a chunk was written to")
	}

	traced := streamedMessage{traceCalls: true}
	for _, c := range chunks {
		traced.add(c)
	}
	if tm := traced.message(); tm.Content != m.Content || tm.ToolCalls != nil {
		t.Errorf("joined in trace form: content %q, tool calls %+v (want none: they are in specs)", tm.Content, tm.ToolCalls)
	}
	if len(traced.specs) != len(want) {
		t.Fatalf("%d tool calls in trace form, want %d: %+v", len(traced.specs), len(want), traced.specs)
	}
	for i, w := range want {
		if tc := traced.specs[i]; tc.ID != w.id || tc.Name != w.name || tc.Arguments != w.args {
			t.Errorf("call %d in trace form: %+v, want %+v", i, tc, w)
		}
	}
}

// A reply's tool calls joined in trace form are its calls joined in eino's form, converted,
// whatever shape the first chunk that brings calls has: all of them whole, which are taken as
// they come, or ids missing, indexes out of place or repeated, which are joined.
func TestStreamedCallsInTraceFormAreTheJoinedCalls(t *testing.T) {
	idx := func(i int) *int { return &i }
	call := func(i *int, id, name, args string) schema.ToolCall {
		return schema.ToolCall{Index: i, ID: id, Function: schema.FunctionCall{Name: name, Arguments: args}}
	}
	for _, tc := range []struct {
		name   string
		chunks [][]schema.ToolCall
	}{
		{"whole", [][]schema.ToolCall{{call(nil, "a", "f", "{}"), call(nil, "b", "g", `{"x":1}`)}}},
		{"whole by index", [][]schema.ToolCall{{call(idx(0), "a", "f", "{}"), call(idx(1), "b", "g", "{}")}}},
		{"whole, then more", [][]schema.ToolCall{{call(nil, "a", "f", "{")}, {call(nil, "", "", "}"), call(nil, "b", "g", "{}")}}},
		{"indexes swapped", [][]schema.ToolCall{{call(idx(1), "b", "g", "{}"), call(idx(0), "a", "f", "{}")}}},
		{"an index past the first", [][]schema.ToolCall{{call(idx(2), "c", "h", "{}")}, {call(idx(0), "a", "f", "{}")}}},
		{"one index twice", [][]schema.ToolCall{{call(idx(0), "a", "f", "{"), call(idx(0), "", "", "}")}}},
		{"no id", [][]schema.ToolCall{{call(nil, "", "f", "{}"), call(nil, "", "", "")}}},
		{"a continuation", [][]schema.ToolCall{{call(nil, "a", "f", "{"), call(nil, "", "", "}")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eino, traced := streamedMessage{}, streamedMessage{traceCalls: true}
			for _, tcs := range tc.chunks {
				eino.add(&schema.Message{ToolCalls: tcs})
				traced.add(&schema.Message{ToolCalls: tcs})
			}
			if want := traceMessage(eino.message()).ToolCalls; !reflect.DeepEqual(traced.specs, want) {
				t.Errorf("in trace form %+v, want %+v", traced.specs, want)
			}
		})
	}
}

// TestAddedMessagesAreTheirTraceForm: the messages an input adds, converted in place into the
// cache's reused arrays (inputCache.added), are their trace form, as traceMessages gives it: a
// reply with tool calls, results, a message with an empty list of calls (none in the trace), none
// at all; and converted again into the same arrays, shorter, keep nothing of the first.
func TestAddedMessagesAreTheirTraceForm(t *testing.T) {
	added := []*schema.Message{
		schema.AssistantMessage("two ticks", []schema.ToolCall{
			{ID: "c1", Type: "function", Function: schema.FunctionCall{Name: "tick", Arguments: `{"n":1}`}},
			{ID: "c2", Function: schema.FunctionCall{Name: "tick", Arguments: `{"n":2}`}}}),
		schema.ToolMessage("1", "c1", schema.WithToolName("tick")),
		schema.ToolMessage("2", "c2"),
		{Role: schema.Assistant, Content: "none", ToolCalls: []schema.ToolCall{}},
		nil,
		schema.UserMessage(""),
	}
	traced := []traces.Message{
		{Role: "assistant", Content: "two ticks", ToolCalls: []traces.ToolCallSpec{
			{ID: "c1", Name: "tick", Arguments: `{"n":1}`}, {ID: "c2", Name: "tick", Arguments: `{"n":2}`}}},
		{Role: "tool", Content: "1", ToolCallID: "c1", ToolName: "tick"},
		{Role: "tool", Content: "2", ToolCallID: "c2"},
		{Role: "assistant", Content: "none"},
		{},
		{Role: "user"},
	}
	var c inputCache
	for _, k := range [][2]int{{0, 6}, {1, 4}} {
		ms, want := added[k[0]:k[1]], traced[k[0]:k[1]]
		if got := traceMessages(ms); !reflect.DeepEqual(got, want) {
			t.Errorf("traceMessages gave\n%+v, want\n%+v", got, want)
		}
		if got := c.added(ms); !reflect.DeepEqual(got, want) {
			t.Errorf("added messages converted as\n%+v, want\n%+v", got, want)
		}
	}
}
