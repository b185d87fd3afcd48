package web_test

import (
	"reflect"
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// TestViewStateAt steps a recorded real run back to every event: the state as of an event, and
// the redraw the page swaps in for it, are what the trace cut there shows, not the finished run.
func TestViewStateAt(t *testing.T) {
	tr := webtest.RecordedSupervisor(t)
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

// A Travel steps from copies of the analysis it keeps every few events: the state as of each
// event, asked for in any order, is exactly the replay's, on recorded, failed and refused runs
// and a long one that a copy in the middle of a transfer's aftermath must not disturb.
func TestTravelAt(t *testing.T) {
	recorded := webtest.RecordedSupervisor(t)
	running := webtest.Big(200)
	// A run whose process died: it ended interrupted with no run.finished to say so.
	died := webtest.Big(60)
	end := died.Events[len(died.Events)-1].Time
	died.Run.Status, died.Run.EndedAt, died.Run.Error = traces.StatusInterrupted, &end, "the process ended"
	for name, tr := range map[string]traces.Trace{
		"recorded supervisor": recorded, "failed transfer": webtest.FailedTransfer(),
		"refused transfer": webtest.RefusedTransfer(), "agenttool": webtest.AgentTool(), "long, running": running,
		"died": died,
	} {
		travel := web.NewTravelEvery(7)
		n := len(tr.Events)
		// Back from the end, then forth from the start: every copy is stepped from twice.
		for k := range 2 * n {
			i := n - 1 - k
			if k >= n {
				i = k - n
			}
			seq := tr.Events[i].Seq
			want, got := web.ViewAt(tr, seq), travel.At(tr, seq)
			if !reflect.DeepEqual(got.View(), want.View()) || !reflect.DeepEqual(got.Redraw(), want.Redraw()) {
				t.Fatalf("%s: the travel's state as of #%d differs from the replay's", name, seq)
			}
			// What the caller adds to its state does not reach the copies.
			got.Add(tr.Events[i+1:]...)
		}
	}
}

// TestViewStateKeep: a state that keeps the events it is given, not a copy, reads as one that
// copied them, and an event added after them never lands in the giver's array.
func TestViewStateKeep(t *testing.T) {
	tr := webtest.RecordedSupervisor(t)
	given := append([]traces.Event(nil), tr.Events...)
	half := len(given) / 2
	kept := web.NewViewState(tr.Run, tr.Agents)
	kept.Keep(given[:half]) // given has room past half: an add that wrote there would show
	kept.Add(tr.Events[half:]...)
	copied := web.NewViewState(tr.Run, tr.Agents)
	copied.Add(tr.Events...)
	if !reflect.DeepEqual(kept.View(), copied.View()) {
		t.Error("the state that kept its events reads otherwise than the one that copied them")
	}
	given[half].Agent = "changed by its giver"
	if got := kept.Events(int64(half), 1); len(got) != 1 || got[0].Agent == "changed by its giver" {
		t.Errorf("the event added after those kept is in the giver's array: %+v", got)
	}
}

// TestPageDeferred: a deferred page leaves out what its tabs fetch (the session panel's
// histories, the sequence view but its Head) and is otherwise the page.
func TestPageDeferred(t *testing.T) {
	tr := webtest.Large(2_000)
	v := web.NewViewState(tr.Run, tr.Agents)
	v.Add(tr.Events...)
	page, deferred := v.Page(100), v.PageDeferred(100)
	if want := (web.Sequence{Head: v.Seq()}); !reflect.DeepEqual(deferred.Sequence, want) {
		t.Errorf("the deferred page's sequence holds %d lanes, %d bars, %d arrows; want its head only", len(deferred.Sequence.Lanes), len(deferred.Sequence.Bars), len(deferred.Sequence.Arrows))
	}
	if len(page.Sequence.Bars) == 0 || !reflect.DeepEqual(page.Sequence, v.Sequence(0, v.Seq())) {
		t.Error("the page's sequence is not the whole sequence view")
	}
	if len(deferred.Session.Histories) != 0 || len(page.Session.Histories) == 0 {
		t.Errorf("histories: %d deferred, %d on the page; want none and some", len(deferred.Session.Histories), len(page.Session.Histories))
	}
	page.Sequence, page.Session.Histories = deferred.Sequence, nil
	if !reflect.DeepEqual(page, deferred) {
		t.Error("the deferred page differs from the page beyond its sequence and histories")
	}
}
