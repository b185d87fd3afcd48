package web

import (
	"reflect"
	"testing"

	"github.com/baton-dev/baton/traces"
)

// A shared index that has read past an input answers as of that input: the n-th copy of a
// repeated message links to the n-th copy before it, never to one the agent had not said yet.
func TestSharedSourceIndexAnswersAsOfTheInput(t *testing.T) {
	same := traces.Message{Role: "assistant", Content: "same"}
	user := traces.Message{Role: "user", Content: "go"}
	out := func(seq int64) traces.Event {
		return traces.Event{Seq: seq, Kind: traces.KindModelFinished, Agent: "a", Model: &traces.ModelCall{ID: "m", Output: &same}}
	}
	tr := traces.Trace{Events: []traces.Event{
		{Seq: 1, Kind: traces.KindRunStarted, Run: &traces.RunMark{Input: "go"}},
		out(2), out(3),
		{Seq: 4, Kind: traces.KindModelStarted, Agent: "a", Model: &traces.ModelCall{ID: "n", Input: []traces.Message{user, same, same, same}}},
		out(5),
	}}
	want := Sources(tr, 3, "a", tr.Events[3].Model.Input)
	if got := []int64{want[1].Seq, want[2].Seq, want[3].Seq}; !reflect.DeepEqual(got, []int64{2, 3, 3}) {
		t.Fatalf("fresh index: the copies link to %v, want [2 3 3]", got)
	}
	shared := newSourceIndex()
	shared.advance(tr, len(tr.Events))
	if got := shared.sources(tr, 3, "a", tr.Events[3].Model.Input); !reflect.DeepEqual(got, want) {
		t.Errorf("an index read to the end classifies #4's input as %+v, want %+v", got, want)
	}
}

// Inputs that branch off the one before (all but its last message kept, others added, in an
// array of their own, as a trace's input references resolve them) are classified on a shared
// index as a fresh index classifies each: what the dropped messages took is given back, so the
// n-th copy of a repeated message still links to the n-th event. And the shared index goes on
// from what the inputs share: the sources of the messages kept are the ones it found before.
func TestSharedSourceIndexFollowsBranchingInputs(t *testing.T) {
	same := traces.Message{Role: "assistant", Content: "same"}
	user := traces.Message{Role: "user", Content: "go"}
	out := func(seq int64) traces.Event {
		return traces.Event{Seq: seq, Kind: traces.KindModelFinished, Agent: "a", Model: &traces.ModelCall{ID: "m", Output: &same}}
	}
	call := func(seq int64, input ...traces.Message) traces.Event {
		return traces.Event{Seq: seq, Kind: traces.KindModelStarted, Agent: "a", Model: &traces.ModelCall{ID: "n", Input: input}}
	}
	tr := traces.Trace{Events: []traces.Event{
		{Seq: 1, Kind: traces.KindRunStarted, Run: &traces.RunMark{Input: "go"}},
		out(2), out(3), out(4),
		call(5, user, same, same),
		call(6, user, same, traces.Message{Role: "user", Content: "y"}, same), // drops #5's second copy
		call(7, user, same, same, same),
	}}
	shared := newSourceIndex()
	var kept *Source
	for i := 4; i < len(tr.Events); i++ {
		in := tr.Events[i].Model.Input
		want := Sources(tr, i, "a", in)
		got := shared.sources(tr, i, "a", in)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("#%d's input on the shared index: %+v, want %+v", tr.Events[i].Seq, got, want)
		}
		if kept != nil && &got[0] != kept {
			t.Errorf("#%d's input, which begins as the one before, was classified anew", tr.Events[i].Seq)
		}
		kept = &got[0]
	}
	if got := Sources(tr, 5, "a", tr.Events[5].Model.Input); got[3].Seq != 3 {
		t.Errorf("#6's last message links to #%d, want #3 (the second copy)", got[3].Seq)
	}
}

// A key made piece by piece is the key of its whole text: a message's "For context:" rewrite
// is filed under the key its text, received by another agent, is looked up by, however its
// pieces fall; and keys of different texts differ, even where pieces move across the separators.
func TestMessageKeysAreTheirText(t *testing.T) {
	msgs := []traces.Message{
		{Role: "assistant", Content: "GDP is 3%"},
		{Role: "assistant", Content: "", ToolCalls: []traces.ToolCallSpec{{ID: "c1", Name: "transfer_to_agent", Arguments: `{"agent_name":"b"}`}}},
		{Role: "assistant", Content: "both", ToolCalls: []traces.ToolCallSpec{{ID: "c1", Name: "f", Arguments: "{}"}, {ID: "c2", Name: "g", Arguments: "[]"}}},
		{Role: "tool", Content: "42", ToolName: "calc", ToolCallID: "c9"},
		{Role: "tool", ToolName: "calc"},
		{Role: "user", Content: "hi"},
	}
	for _, m := range msgs {
		if got, want := rewrittenKey("research", m), contextKey(rewritten("research", m)); got != want {
			t.Errorf("%+v: rewritten piece by piece is filed under %x, its text under %x", m, got, want)
		}
	}
	keys := map[msgKey]string{}
	for name, k := range map[string]msgKey{
		"own a|b":       ownKey("a", traces.Message{Content: "b"}),
		"own a\\x00|b":  ownKey("a\x00", traces.Message{Content: "b"}),
		"own ab|":       ownKey("ab", traces.Message{}),
		"result a|b":    resultKey("a", "b"),
		"request a|b":   requestKey("a", "b"),
		"context a\\0b": contextKey("a\x00b"),
		"context ab":    contextKey("ab"),
		"own a|b+call":  ownKey("a", traces.Message{Content: "b", ToolCalls: []traces.ToolCallSpec{{ID: "1"}}}),
	} {
		if other, ok := keys[k]; ok {
			t.Errorf("%s and %s share a key", name, other)
		}
		keys[k] = name
	}
}
