package web_test

import (
	"os"
	"reflect"
	"testing"

	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// TestViewStateAt steps a recorded real run back to every event: the state as of an event, and
// the redraw the page swaps in for it, are what the trace cut there shows, not the finished run.
func TestViewStateAt(t *testing.T) {
	data, err := os.ReadFile("../agents/testdata/supervisor.trace.json")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	v := web.NewViewState(tr.Run, tr.Agents)
	v.Add(tr.Events...)
	for _, e := range tr.Events {
		want := web.NewView(web.Prefix(tr, e.Seq))
		at := v.At(e.Seq)
		if got := at.View(); !reflect.DeepEqual(got, want) {
			t.Fatalf("At(%d).View() differs from the view of the trace cut at %d", e.Seq, e.Seq)
		}
		u := at.Redraw()
		if !u.Changed || !u.ValuesChanged || !u.HistoriesChanged || u.AgentsChanged {
			t.Fatalf("Redraw at %d: changed %v values %v histories %v agents %v, want every part but the agent filter",
				e.Seq, u.Changed, u.ValuesChanged, u.HistoriesChanged, u.AgentsChanged)
		}
		if !reflect.DeepEqual(u.Stats, want.Stats) || !reflect.DeepEqual(u.Graph, want.Graph) || !reflect.DeepEqual(u.Session, want.Session) {
			t.Fatalf("Redraw at %d differs from the view of the trace cut there", e.Seq)
		}
		if e.Seq < tr.Events[len(tr.Events)-1].Seq && u.Stats.Status != traces.StatusRunning {
			t.Errorf("as of #%d the run is %s, want running: it finished later", e.Seq, u.Stats.Status)
		}
	}
}
