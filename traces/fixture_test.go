package traces_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/traces"
)

// t0 is the start of every fixture run.
var t0 = time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)

// richTrace returns a trace that uses every event kind and sets every field of every type at
// least once (TestRichTraceSetsEveryField checks that), with strings that need escaping, a time
// in another zone and a nanosecond fraction.
func richTrace() traces.Trace {
	end := t0.Add(9 * time.Second)
	history := []traces.Message{
		{Role: "system", Content: "You plan trips. Keep it short."},
		{Role: "user", Content: "Plan 2 days in \"Paris\" <with> kids & a dog\n\ttabs, é, 日本, \u2028 and \\ too"},
	}
	call := traces.ToolCallSpec{ID: "call_1", Name: "search", Arguments: `{"q":"Paris with kids"}`}
	events := []traces.Event{
		{Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: "planner", Input: "Plan 2 days in Paris", Status: traces.StatusRunning, ForkedFrom: &traces.ForkOrigin{Run: "r-0a1b2c3d", Seq: 5}}},
		{Kind: traces.KindAgentStarted, Agent: "planner", AgentRun: &traces.AgentRun{Input: history, Via: "run"}},
		{Kind: traces.KindModelStarted, Agent: "planner", Model: &traces.ModelCall{ID: "planner-1", Name: "gpt-4o-mini", Input: history, Tools: []string{"search", "transfer_to_agent"}}},
		{Kind: traces.KindModelFinished, Agent: "planner", Model: &traces.ModelCall{
			ID:         "planner-1",
			Name:       "gpt-4o-mini-2024-07-18",
			Output:     &traces.Message{Role: "assistant", ToolCalls: []traces.ToolCallSpec{call}},
			Usage:      &traces.Usage{PromptTokens: 120, CompletionTokens: 14, TotalTokens: 134},
			DurationMS: 812.25,
			Error:      "stream ended early; kept the partial reply",
		}},
		{Kind: traces.KindMessage, Agent: "planner", Message: &traces.Message{Role: "assistant", ToolCalls: []traces.ToolCallSpec{call}}},
		{Kind: traces.KindToolStarted, Agent: "planner", Tool: &traces.ToolCall{Name: "search", CallID: "call_1", Arguments: call.Arguments}},
		{Kind: traces.KindToolFinished, Agent: "planner", Tool: &traces.ToolCall{Name: "search", CallID: "call_1", Result: "Jardin d'Acclimatation", Error: "partial: 1 of 3 sources timed out", DurationMS: 0.125}},
		{Kind: traces.KindMessage, Agent: "planner", Message: &traces.Message{Role: "tool", Content: "Jardin d'Acclimatation", ToolCallID: "call_1", ToolName: "search"}},
		{Kind: traces.KindTransfer, Agent: "planner", Transfer: &traces.Transfer{From: "planner", To: "writer", Mode: traces.TransferLLM, CallID: "call_2"}},
		{Kind: traces.KindTransfer, Agent: "planner", Transfer: &traces.Transfer{From: "planner", To: "ghost", Mode: traces.TransferLLM, CallID: "call_2b",
			Outcome: traces.TransferFailed, Error: "transfer failed: agent 'ghost' not found when transferring from 'planner'", ErrorBy: traces.ErrorByEino}},
		{Kind: traces.KindAgentStarted, Agent: "writer", AgentRun: &traces.AgentRun{Via: "transfer"}},
		{Kind: traces.KindAgentToolEnter, Agent: "writer", AgentTool: &traces.AgentToolCall{Caller: "writer", Callee: "critic", CallID: "call_3", Request: "review the draft", InputMode: traces.AgentToolInputRequest}},
		{Kind: traces.KindAgentToolExit, Agent: "writer", AgentTool: &traces.AgentToolCall{Caller: "writer", Callee: "critic", CallID: "call_3", Result: "Looks good.", InnerEvents: traces.InnerEventsCallbacks}},
		{Kind: traces.KindSessionSet, Agent: "writer", Session: &traces.SessionSet{Key: "draft", Value: json.RawMessage(`{"days":2,"stops":["zoo","louvre"],"note":null}`), SetBy: "writer"}},
		{Kind: traces.KindToolFinished, Agent: "writer", Tool: &traces.ToolCall{Name: "book_hotel", CallID: "call_4", Interrupted: true}},
		{Kind: traces.KindInterrupted, Agent: "writer", Interrupt: &traces.Interrupt{ID: "int-1", Address: "planner;writer;tool:book_hotel", Info: "needs approval to book"}},
		{Kind: traces.KindAgentFinished, Agent: "writer", AgentRun: &traces.AgentRun{Interrupted: true}},
		{Kind: traces.KindResumed, Agent: "writer", Interrupt: &traces.Interrupt{ID: "int-1"}},
		{Kind: traces.KindAgentStarted, Agent: "writer", AgentRun: &traces.AgentRun{Resumed: true, Iteration: 2}},
		{Kind: traces.KindBreakLoop, Agent: "critic", BreakLoop: &traces.BreakLoop{From: "critic", Iterations: 3}},
		{Kind: traces.KindExit, Agent: "writer", Exit: &traces.Exit{FinalResult: "Day 1: zoo. Day 2: Louvre."}},
		{Kind: traces.KindError, Agent: "writer", Error: &traces.ErrorDetail{Message: "hotel API: 503"}},
		{Kind: traces.KindLost, Lost: &traces.Lost{Count: 12}},
		{Kind: traces.KindPaused, Agent: "writer", Pause: &traces.Pause{Break: traces.BreakStep, On: traces.BreakTransfer, Target: "critic", At: 4, Detail: "writer transfers to critic", Feed: "the run drops the transfer messages from the history", Args: ptr(`{"city":"Paris"}`), Value: json.RawMessage(`{"day":1}`)}},
		{Kind: traces.KindContinued, Agent: "writer", Pause: &traces.Pause{Break: traces.BreakTransfer, Target: "critic", Action: traces.ActionStep, By: "page", Edited: "reply text",
			Reply: &traces.Message{Role: "assistant", Content: "edited", ToolCalls: []traces.ToolCallSpec{{ID: "c9", Name: "transfer_to_agent", Arguments: `{"agent_name":"planner"}`}}},
			Input: []traces.Message{{Role: "user", Content: "plan a trip"}, {Role: "assistant", Content: "ok"}}, Result: ptr(""), Value: json.RawMessage(`"two days"`)}},
		{Kind: traces.KindAgentFinished, Agent: "writer", AgentRun: &traces.AgentRun{Error: "hotel API: 503"}},
		{Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: traces.StatusFailed, Error: "hotel API: 503"}},
	}
	paths := [][]string{{"planner"}, {"planner", "writer"}}
	for i := range events {
		events[i].Seq = int64(i + 1)
		events[i].Time = t0.Add(time.Duration(i) * 7 * time.Millisecond)
		if events[i].Agent != "" {
			events[i].RunPath = paths[min(i/9, 1)]
		}
	}
	// One event stamped in another zone, to nanosecond precision.
	events[3].Time = time.Date(2026, 3, 14, 11, 30, 0, 123456789, time.FixedZone("CET-ish", 2*60*60))
	return traces.Trace{
		Run: traces.Run{
			ID: "run-rich", Flow: "planner", Input: "Plan 2 days in Paris", Model: "gpt-4o-mini",
			Status: traces.StatusFailed, StartedAt: t0, EndedAt: &end, Error: "hotel API: 503",
			Conversation: "trip-42",
		},
		Agents: []traces.Agent{
			{Name: "planner", Description: "Plans the trip.", Kind: traces.AgentLoop, Tools: []string{"search", "transfer_to_agent"}},
			{Name: "writer", Description: "Writes it up.", Kind: traces.AgentChatModel, Parent: "planner", Relation: traces.RelationSubAgent, Tools: []string{"critic"}, OutputKey: "itinerary"},
			{Name: "critic", Kind: traces.AgentChatModel, Parent: "writer", Relation: traces.RelationAgentTool},
		},
		Events: events,
	}
}

// bigTrace returns a valid trace of n events: richTrace's run.started, then its other events but
// its run.finished over and over, then that run.finished.
func bigTrace(n int) traces.Trace {
	t := richTrace()
	// One run.started, then richTrace's other events over and over, then its end.
	first, pattern, last := t.Events[0], t.Events[1:len(t.Events)-1], t.Events[len(t.Events)-1]
	t.Events = make([]traces.Event, n)
	t.Events[0] = first
	for i := 1; i < n; i++ {
		t.Events[i] = pattern[(i-1)%len(pattern)]
		t.Events[i].Seq = int64(i + 1)
	}
	t.Events[n-1] = last
	t.Events[n-1].Seq = int64(n)
	return t
}

var (
	timeType = reflect.TypeFor[time.Time]()
)

// assertEqualTraces fails unless got and want are the same trace, where a time is equal to the
// same instant in another zone and an empty list to an absent one (JSON cannot tell them apart).
func assertEqualTraces(tb testing.TB, got, want traces.Trace) {
	tb.Helper()
	g, w := normalized(reflect.ValueOf(got)), normalized(reflect.ValueOf(want))
	if reflect.DeepEqual(g.Interface(), w.Interface()) {
		return
	}
	tb.Fatalf("traces differ at %s", difference(g, w, "trace"))
}

// difference returns the path of the first value that differs between got and want, with both.
func difference(got, want reflect.Value, path string) string {
	switch got.Kind() {
	case reflect.Pointer:
		if got.IsNil() || want.IsNil() {
			break
		}
		return difference(got.Elem(), want.Elem(), path)
	case reflect.Slice:
		if got.Len() != want.Len() || got.Type() == reflect.TypeFor[json.RawMessage]() {
			break
		}
		for i := range got.Len() {
			if d := difference(got.Index(i), want.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Struct:
		if got.Type() == timeType {
			break
		}
		for i := range got.NumField() {
			if d := difference(got.Field(i), want.Field(i), path+"."+got.Type().Field(i).Name); d != "" {
				return d
			}
		}
		return ""
	}
	if reflect.DeepEqual(got.Interface(), want.Interface()) {
		return ""
	}
	return fmt.Sprintf("%s: got %s, want %s", path, show(got), show(want))
}

// show prints v for a failure message: raw JSON as text, pointers by what they point to.
func show(v reflect.Value) string {
	switch {
	case v.Type() == reflect.TypeFor[json.RawMessage]():
		return fmt.Sprintf("%q", v.Bytes())
	case v.Kind() == reflect.Pointer && !v.IsNil():
		return fmt.Sprintf("&%+v", v.Elem().Interface())
	}
	return fmt.Sprintf("%+v", v.Interface())
}

// normalized returns a deep copy of v with times in UTC and empty slices nil.
func normalized(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(normalized(v.Elem()))
		return p
	case reflect.Slice:
		if v.Len() == 0 {
			return reflect.Zero(v.Type())
		}
		s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			s.Index(i).Set(normalized(v.Index(i)))
		}
		return s
	case reflect.Struct:
		if v.Type() == timeType {
			return reflect.ValueOf(v.Interface().(time.Time).UTC())
		}
		s := reflect.New(v.Type()).Elem()
		for i := range v.NumField() {
			s.Field(i).Set(normalized(v.Field(i)))
		}
		return s
	}
	return v
}

// firstDifference shows the first line where got and want differ.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s", i+1, gl, wl)
		}
	}
	return "(no line differs)"
}

// unsetFields lists, as "Type.Field", every field of every struct type a Trace can hold that is
// zero in every instance found in t.
func unsetFields(t traces.Trace) []string {
	set := make(map[reflect.Type]map[int]bool)
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Struct:
			if v.Type() == timeType {
				return
			}
			if set[v.Type()] == nil {
				set[v.Type()] = make(map[int]bool)
			}
			for i := range v.NumField() {
				if !v.Field(i).IsZero() {
					set[v.Type()][i] = true
				}
				walk(v.Field(i))
			}
		}
	}
	walk(reflect.ValueOf(t))
	var unset []string
	for _, typ := range structTypes(reflect.TypeFor[traces.Trace]()) {
		for i := range typ.NumField() {
			if !set[typ][i] {
				unset = append(unset, typ.Name()+"."+typ.Field(i).Name)
			}
		}
	}
	return unset
}

// structTypes returns every struct type reachable from typ through fields, pointers and slices,
// time.Time excluded, each once, in the order first met.
func structTypes(typ reflect.Type) []reflect.Type {
	var out []reflect.Type
	seen := make(map[reflect.Type]bool)
	var visit func(t reflect.Type)
	visit = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || t == timeType || seen[t] {
			return
		}
		seen[t] = true
		out = append(out, t)
		for i := range t.NumField() {
			visit(t.Field(i).Type)
		}
	}
	visit(typ)
	return out
}
func ptr[T any](v T) *T { return &v }
