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
	runWithBreakpoints(t, tb, b, "supervisor", "transfer:research_agent")
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

// runWithBreakpoints starts flow from the index page with breakpoints, written as its card's
// field takes them, as a user does, and returns once the run's page has loaded: a run held
// before the page came shows its held outcome in the page's HTML, which a look while the page
// is still being parsed may find without its form (runPageLoaded).
func runWithBreakpoints(t *testing.T, tb *tab, b *baton, flow, breakpoints string) {
	t.Helper()
	tb.open(t, b.base+"/")
	card := attrSel("data-testid", "flow-"+flow)
	evalJS[bool](t, tb, `(document.querySelector('`+card+` [data-testid=run-breakpoints]').value = `+jsString(breakpoints)+`, true)`)
	tb.click(t, card+" [data-testid=run-button]")
	tb.waitFor(t, "the run page after pressing Run", runPageLoaded)
}
