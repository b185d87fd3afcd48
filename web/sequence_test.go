package web_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// checkSequence checks what must hold of any run's sequence view: one lane per agent of the
// tree, every model and tool bar nested in a visit of its own lane, every bar's duration the
// time between its events, and the transfer arrows numbered as the tree's edges.
func checkSequence(t *testing.T, tr traces.Trace) web.Sequence {
	t.Helper()
	v := web.NewViewState(tr.Run, tr.Agents)
	v.Add(tr.Events...)
	s := v.Sequence(0, v.Seq())
	if !s.Full || s.Head != tr.Events[len(tr.Events)-1].Seq {
		t.Fatalf("full %v head %d, want a whole view as of the last event", s.Full, s.Head)
	}
	g := v.View().Graph
	if len(s.Lanes) != len(g.Nodes) {
		t.Errorf("%d lanes, want one per agent of the tree (%d)", len(s.Lanes), len(g.Nodes))
	}
	at := func(seq int64) float64 {
		return float64(tr.Events[seq-1].Time.Sub(tr.Events[0].Time).Microseconds()) / 1000
	}
	for _, b := range s.Bars {
		if b.End == 0 {
			t.Errorf("bar %+v still open at the run's end", b)
			continue
		}
		if b.T0 != at(b.Seq) || b.T1 != at(b.End) {
			t.Errorf("bar %d (%s #%d-#%d) spans %v-%v ms, want %v-%v: its events' times", b.ID, b.Kind, b.Seq, b.End, b.T0, b.T1, at(b.Seq), at(b.End))
		}
		if b.Kind == web.BarVisit {
			continue
		}
		if b.Parent < 0 {
			t.Errorf("%s bar #%d is in no visit", b.Kind, b.Seq)
			continue
		}
		p := s.Bars[b.Parent]
		if p.Kind != web.BarVisit || p.Lane != b.Lane || b.Seq < p.Seq || b.End > p.End || b.T0 < p.T0 || b.T1 > p.T1 {
			t.Errorf("%s bar #%d-#%d does not nest in its visit #%d-#%d on lane %d", b.Kind, b.Seq, b.End, p.Seq, p.End, p.Lane)
		}
	}
	var orders []int
	byOrder := make(map[int]web.SeqArrow)
	for _, a := range s.Arrows {
		if a.Kind == web.ArrowTransfer {
			orders = append(orders, a.Order)
			byOrder[a.Order] = a
		}
	}
	if want := seqTo(g.TransferCount); !slices.Equal(orders, want) {
		t.Errorf("transfer arrows numbered %v, want %v", orders, want)
	}
	for _, e := range g.Transfers {
		a := byOrder[e.Order]
		if a.Seq != e.Seq || s.Lanes[a.From].Agent != e.From || s.Lanes[a.To].Agent != e.To || a.Mode != e.Mode || a.Failed != e.Failed {
			t.Errorf("arrow %d %+v differs from the tree's edge %d %+v", e.Order, a, e.Order, e)
		}
	}
	return s
}

func seqTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func TestSequenceSupervisor(t *testing.T) {
	s := checkSequence(t, webtest.Supervisor())
	visits := map[string]int{}
	for _, b := range s.Bars {
		if b.Kind == web.BarVisit {
			visits[s.Lanes[b.Lane].Agent]++
		}
	}
	if want := map[string]int{"supervisor": 3, "research_agent": 1, "math_agent": 1}; !maps.Equal(visits, want) {
		t.Errorf("visits %v, want %v", visits, want)
	}
	for _, b := range s.Bars {
		// The builder spaces events 150 ms apart and records a call's start and end one after the other.
		if b.Kind == web.BarModel && (b.T1-b.T0 != 150 || b.Tokens == 0) {
			t.Errorf("model bar #%d lasts %v ms with %d tokens, want 150 ms and its tokens", b.Seq, b.T1-b.T0, b.Tokens)
		}
	}
}

// TestSequenceSpecialists: 8 specialists and 22 transfers, each specialist visited in turn.
func TestSequenceSpecialists(t *testing.T) {
	s := checkSequence(t, webtest.Specialists(8, 11))
	n := 0
	for _, a := range s.Arrows {
		if a.Kind == web.ArrowTransfer {
			n++
		}
	}
	if len(s.Lanes) != 9 || n != 22 {
		t.Errorf("%d lanes and %d transfers, want 9 and 22", len(s.Lanes), n)
	}
}

func TestSequenceAgentTool(t *testing.T) {
	s := checkSequence(t, webtest.AgentTool())
	calls, returns := 0, 0
	for _, a := range s.Arrows {
		switch a.Kind {
		case web.ArrowCall:
			calls++
		case web.ArrowReturn:
			returns++
			if a.Order < 1 || a.Order > calls {
				t.Errorf("return %+v does not name a call before it", a)
			}
		}
	}
	if calls == 0 || calls != returns {
		t.Errorf("%d AgentTool calls and %d returns, want as many of each, at least one", calls, returns)
	}
}

// TestSequenceFailedTransfer: a transfer an error fails later is drawn failed, and the delta of
// that error carries the arrow again.
func TestSequenceFailedTransfer(t *testing.T) {
	tr := webtest.FailedTransfer()
	s := checkSequence(t, tr)
	var transferSeq int64
	for _, a := range s.Arrows {
		if a.Kind == web.ArrowTransfer {
			transferSeq = a.Seq
			if !a.Failed {
				t.Errorf("arrow %+v not failed", a)
			}
		}
	}
	v := web.NewViewState(tr.Run, tr.Agents)
	v.Add(tr.Events[:transferSeq]...)
	if d := v.Sequence(transferSeq-1, v.Seq()); len(d.Arrows) != 1 || d.Arrows[0].Failed {
		t.Fatalf("as of the transfer: %+v, want it alone and not failed yet", d.Arrows)
	}
	v.Add(tr.Events[transferSeq:]...)
	if d := v.Sequence(transferSeq, v.Seq()); len(d.Arrows) != 1 || !d.Arrows[0].Failed || d.Full {
		t.Errorf("the delta after the transfer: %+v, want its arrow again, failed", d.Arrows)
	}
	// A delta of some events holds what they touched alone: the run's end closes the visit.
	if d := v.Sequence(transferSeq+1, transferSeq+2); len(d.Arrows) != 0 || len(d.Bars) != 1 || d.Bars[0].Kind != web.BarVisit {
		t.Errorf("the delta of the run's end: %+v %+v, want the visit it closes alone", d.Bars, d.Arrows)
	}
	if d := v.Sequence(transferSeq, transferSeq+1); len(d.Arrows) != 1 || len(d.Bars) != 0 {
		t.Errorf("the delta of the error: %+v %+v, want the arrow it failed alone", d.Bars, d.Arrows)
	}
}

// TestSequenceDeltas: a page that takes in each delta by id, whatever the steps between its
// updates, ends with the whole view.
func TestSequenceDeltas(t *testing.T) {
	tr := webtest.Specialists(3, 4)
	for _, stride := range []int{1, 2, 7} {
		v := web.NewViewState(tr.Run, tr.Agents)
		bars, arrows := map[int]web.SeqBar{}, map[int]web.SeqArrow{}
		var seen int64
		for i := 0; i < len(tr.Events); i += stride {
			v.Add(tr.Events[i:min(i+stride, len(tr.Events))]...)
			d := v.Sequence(seen, v.Seq())
			for _, b := range d.Bars {
				bars[b.ID] = b
			}
			for _, a := range d.Arrows {
				arrows[a.ID] = a
			}
			seen = d.Head
		}
		whole := v.Sequence(0, v.Seq())
		if !equalByID(bars, whole.Bars) {
			t.Errorf("stride %d: the deltas' bars differ from the whole view's", stride)
		}
		if len(arrows) != len(whole.Arrows) {
			t.Errorf("stride %d: %d arrows from deltas, want %d", stride, len(arrows), len(whole.Arrows))
		}
		for _, a := range whole.Arrows {
			if arrows[a.ID] != a {
				t.Errorf("stride %d: arrow %d %+v from deltas, want %+v", stride, a.ID, arrows[a.ID], a)
			}
		}
	}
}

func equalByID(got map[int]web.SeqBar, want []web.SeqBar) bool {
	if len(got) != len(want) {
		return false
	}
	for _, b := range want {
		if got[b.ID] != b {
			return false
		}
	}
	return true
}

// TestSequenceModelBarsNameTheModel: a model call's bar carries the model the call named (on its
// start, or only on its end), not the call's id; a call that named none has no name.
func TestSequenceModelBarsNameTheModel(t *testing.T) {
	b := webtest.New("r-models", "f", "hi", traces.Agent{Name: "a"})
	b.Start("a", "")
	b.Add(traces.Event{Kind: traces.KindModelStarted, Agent: "a", Model: &traces.ModelCall{ID: "c1", Name: "gpt-4o-mini"}})
	b.Add(traces.Event{Kind: traces.KindModelFinished, Agent: "a", Model: &traces.ModelCall{ID: "c1", Name: "gpt-4o-mini"}})
	b.Add(traces.Event{Kind: traces.KindModelStarted, Agent: "a", Model: &traces.ModelCall{ID: "c2"}})
	b.Add(traces.Event{Kind: traces.KindModelFinished, Agent: "a", Model: &traces.ModelCall{ID: "c2", Name: "claude-3-5-haiku"}})
	b.Add(traces.Event{Kind: traces.KindModelStarted, Agent: "a", Model: &traces.ModelCall{ID: "c3"}})
	b.Add(traces.Event{Kind: traces.KindModelFinished, Agent: "a", Model: &traces.ModelCall{ID: "c3"}})
	b.Finish("a")
	s := checkSequence(t, b.End(traces.StatusCompleted, ""))
	var names []string
	for _, bar := range s.Bars {
		if bar.Kind == web.BarModel {
			names = append(names, bar.Name)
		}
	}
	if want := []string{"gpt-4o-mini", "claude-3-5-haiku", ""}; !slices.Equal(names, want) {
		t.Errorf("model bars named %q, want %q", names, want)
	}
}
