package web_test

import (
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// TestRecordedSupervisorRun replays a trace the recorder wrote for a real eino run, event by
// event, and checks the tree tells the story a person expects at every step.
func TestRecordedSupervisorRun(t *testing.T) {
	tr := webtest.RecordedSupervisor(t)
	for _, e := range tr.Events {
		g := web.NewGraph(web.Prefix(tr, e.Seq))
		active := 0
		for _, n := range g.Nodes {
			if n.State == web.StateActive {
				active++
			}
			if n.State == web.StateFailed {
				t.Errorf("after #%d %s failed", e.Seq, n.Name)
			}
		}
		if active > 1 {
			t.Errorf("after #%d: %d agents active, want at most one", e.Seq, active)
		}
		if e.Kind == traces.KindTransfer {
			if s := node(t, g, e.Transfer.To).State; s != web.StateActive {
				t.Errorf("after transfer #%d: %s is %s, want active", e.Seq, e.Transfer.To, s)
			}
			if s := node(t, g, e.Transfer.From).State; s != web.StateDone {
				t.Errorf("after transfer #%d: %s is %s, want done", e.Seq, e.Transfer.From, s)
			}
		}
	}
	g := web.NewGraph(tr)
	for _, n := range g.Nodes {
		if n.State != web.StateDone {
			t.Errorf("at the end %s is %s", n.Name, n.State)
		}
	}
	if len(g.Transfers) != 4 || g.Transfers[1].Mode != traces.TransferDeterministic {
		t.Errorf("transfers = %+v", g.Transfers)
	}
	s := web.NewSession(tr)
	if len(s.Histories) != 3 {
		t.Errorf("histories = %+v", s.Histories)
	}
}
