package e2e_test

import (
	"strconv"
	"testing"

	"github.com/baton-dev/baton/traces"
)

// TestCallbacksOnlyInTheBrowser: a live run of agenttool-silent (EmitInternalEvents off) marks
// the callees' frames and every row of their work as seen through callbacks only, and the
// inspector of such a row says so; the caller's own rows are not marked.
func TestCallbacksOnlyInTheBrowser(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	tb := newTab(t, nil)
	id := b.startRun(t, "agenttool-silent", 0)
	tb.open(t, b.base+"/runs/"+id)
	tb.waitStatus(t, "completed")
	tr := b.trace(t, id)
	inside := 0
	for _, e := range tr.Events {
		if len(e.RunPath) > 1 && e.AgentTool == nil {
			inside++
		}
	}
	tb.waitFor(t, "both frames marked", `document.querySelectorAll('[data-testid^=boundary-][data-callbacks-only=true]').length === 2`)
	tb.waitFor(t, "the callees' rows marked", `document.querySelectorAll('[data-testid=timeline-row][data-callbacks-only=true]').length === `+strconv.Itoa(inside))
	if n := evalJS[int](t, tb, `document.querySelectorAll('[data-testid=timeline-row][data-agent=trip_planner][data-callbacks-only]').length`); n != 0 {
		t.Errorf("%d of the caller's rows marked callbacks only", n)
	}
	var seq int64
	for _, e := range tr.Events {
		if e.Kind == traces.KindToolFinished && e.Agent == "flight_agent" {
			seq = e.Seq
		}
	}
	tb.inspect(t, "#ev-"+strconv.FormatInt(seq, 10))
	tb.waitFor(t, "the inspector's mark", `document.querySelector('[data-testid=inspection]')?.textContent.includes('through callbacks only')`)
}
