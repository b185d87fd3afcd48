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
