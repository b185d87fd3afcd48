package e2e_test

import (
	"testing"

	"github.com/baton-dev/baton/traces"
)

// TestBreakpointFromThePage: a user starts the supervisor flow with a breakpoint on its transfer
// to research_agent, sees the run held there with the deciding reply, sends it to math_agent
// instead and continues; the run completes by the edited route, and its trace says who edited
// what.
func TestBreakpointFromThePage(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/")
	evalJS[bool](t, tb, `(document.querySelector('`+attrSel("data-testid", "flow-supervisor")+` [data-testid=run-breakpoints]').value = 'transfer:research_agent', true)`)
	tb.click(t, attrSel("data-testid", "flow-supervisor")+" [data-testid=run-button]")
	tb.waitFor(t, "the run held at its transfer", `(document.querySelector('[data-testid=held-detail]')?.textContent || '') === 'supervisor transfers to research_agent'`)
	if reply := evalJS[string](t, tb, `document.querySelector('[data-testid=held-reply]').value`); reply == "" {
		t.Error("the held run does not show the deciding reply")
	}
	evalJS[bool](t, tb, `(document.querySelector('[data-testid=held-transfer]').value = 'math_agent', true)`)
	tb.click(t, "[data-testid=held-continue]")
	tb.waitStatus(t, "completed")
	if n := evalJS[int](t, tb, `document.querySelectorAll('[data-testid=run-held]').length`); n != 0 {
		t.Errorf("the completed run still shows %d held banners", n)
	}
	id := evalJS[string](t, tb, `location.pathname.split('/').pop()`)
	tr := b.trace(t, id)
	var first string
	var continued []traces.Pause
	for _, e := range tr.Events {
		if e.Kind == traces.KindTransfer && first == "" {
			first = e.Transfer.To
		}
		if e.Kind == traces.KindContinued {
			continued = append(continued, *e.Pause)
		}
	}
	if first != "math_agent" {
		t.Errorf("first transfer to %q; want math_agent, as edited on the page", first)
	}
	if len(continued) != 1 || continued[0].By != "page" || continued[0].Edited != "transfer target: research_agent → math_agent" {
		t.Errorf("continued = %+v", continued)
	}
}
