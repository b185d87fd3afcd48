package e2e_test

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/traces"
)

// TestBreakHereFromTheRunPage: held before the supervisor's transfer to research_agent, the page
// shows what research_agent will be fed, with origins; a timeline row's "Break here" and an agent
// node's add to the run's breakpoints, and the run then holds where they say.
func TestBreakHereFromTheRunPage(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	tb := newTab(t, nil)
	runWithBreakpoints(t, tb, b, "supervisor", "transfer:research_agent")
	tb.waitFor(t, "the run held at its transfer", `(document.querySelector('[data-testid=held-detail]')?.textContent || '') === 'supervisor transfers to research_agent'`)

	// What research_agent will be fed, each message with its origin.
	origins := evalJS[string](t, tb, `[...document.querySelectorAll('[data-testid=held-feed][data-agent=research_agent] [data-testid=fed-message]')].map(m => m.dataset.origin).join(',')`)
	if !strings.HasPrefix(origins, "user input,") || !strings.Contains(origins, "for context") {
		t.Fatalf("the held banner's feed origins = %q; want the user's input, then For context rewrites", origins)
	}

	// A timeline row offers its agent's breakpoints; the button adds to the run's list.
	tb.inspect(t, `[data-testid=timeline-row][data-kind="agent.started"][data-agent="supervisor"]`)
	tb.click(t, `#inspector [data-testid=break-here-button][data-break="model:supervisor"]`)
	tb.waitFor(t, "model:supervisor set", `(document.querySelector('[data-testid=breakpoints-form]')?.dataset.set || '') === 'transfer:research_agent,model:supervisor'`)

	// An agent node offers them too.
	tb.click(t, `[data-testid="node-research_agent"]`)
	tb.click(t, `[data-testid=agent-summary][data-agent=research_agent] [data-testid=break-here-button][data-break="model:research_agent"]`)
	tb.waitFor(t, "model:research_agent set", `(document.querySelector('[data-testid=breakpoints-form]')?.dataset.set || '') === 'transfer:research_agent,model:supervisor,model:research_agent'`)

	tb.click(t, "[data-testid=held-continue]")
	tb.waitFor(t, "the run held before research_agent's model call", `(() => { const h = document.querySelector('[data-testid=run-held]');
	  return h?.dataset.break === 'model' && h.dataset.target === 'research_agent'; })()`)
	tb.click(t, "[data-testid=held-abort]")
	tb.waitStatus(t, "canceled")
}

// TestStepToAKindFromThePage: held before the transfer to research_agent, Step with "model call"
// chosen holds the run again before research_agent's model call, not at the next handoff.
func TestStepToAKindFromThePage(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	tb := newTab(t, nil)
	runWithBreakpoints(t, tb, b, "supervisor", "transfer:research_agent")
	tb.waitFor(t, "the run held at its transfer", `document.querySelector('[data-testid=run-held]')?.dataset.break === 'transfer'`)
	evalJS[bool](t, tb, `(document.querySelector('[data-testid=held-step-to]').value = 'model', true)`)
	tb.click(t, "[data-testid=held-step]")
	tb.waitFor(t, "the run held by the step before research_agent's model call", `(() => { const h = document.querySelector('[data-testid=run-held]');
	  return h?.dataset.break === 'step' && (h.querySelector('[data-testid=held-detail]')?.textContent || '').startsWith('research_agent calls its model'); })()`)
	tb.click(t, "[data-testid=held-abort]")
	tb.waitStatus(t, "canceled")
}

// TestToolResultFromThePage: held before math_agent's multiply runs, the held banner offers a
// result in its place; filled and continued, the trace records continued with that result and
// multiply's call answered by it, and the run completes.
func TestToolResultFromThePage(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	tb := newTab(t, nil)
	runWithBreakpoints(t, tb, b, "supervisor", "tool:multiply")
	tb.waitFor(t, "the run held before multiply, offering a result", `document.querySelector('[data-testid=run-held]')?.dataset.target === 'multiply' && !!document.querySelector('[data-testid=held-result]')`)
	evalJS[bool](t, tb, `(document.querySelector('[data-testid=held-result]').value = '4242', true)`)
	tb.click(t, "[data-testid=held-continue]")
	tb.waitStatus(t, "completed")
	tr := b.trace(t, evalJS[string](t, tb, `document.body.dataset.runId`))
	given, answered := false, false
	for _, e := range tr.Events {
		given = given || (e.Kind == traces.KindContinued && e.Pause.Result != nil && *e.Pause.Result == "4242" && e.Pause.By == "page")
		answered = answered || (given && e.Kind == traces.KindToolFinished && e.Tool.Name == "multiply" && e.Tool.Result == "4242")
	}
	if !given || !answered {
		t.Fatalf("result given %v, multiply answered by it after %v", given, answered)
	}
}

// TestSessionValueFromThePage: held at research_agent's write of research_notes, the held banner
// shows the value written; edited and continued, the trace records the value written instead.
func TestSessionValueFromThePage(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	tb := newTab(t, nil)
	runWithBreakpoints(t, tb, b, "agenttool", "session:research_notes")
	tb.waitFor(t, "the run held at the write, showing the value", `document.querySelector('[data-testid=run-held]')?.dataset.target === 'research_notes' && (document.querySelector('[data-testid=held-value]')?.value || '').startsWith('"')`)
	evalJS[bool](t, tb, `(document.querySelector('[data-testid=held-value]').value = '"notes from the page"', true)`)
	tb.click(t, "[data-testid=held-continue]")
	tb.waitStatus(t, "completed")
	tr := b.trace(t, evalJS[string](t, tb, `document.body.dataset.runId`))
	written := false
	for _, e := range tr.Events {
		written = written || (e.Kind == traces.KindSessionSet && e.Session.Key == "research_notes" && string(e.Session.Value) == `"notes from the page"`)
	}
	if !written {
		t.Fatal("the value edited on the page was not written")
	}
}
