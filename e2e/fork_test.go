package e2e_test

import (
	"testing"
	"time"
)

// TestForkFromTheInspector: on an ended supervisor run, a user inspects its first model call,
// asks what if it had transferred to math_agent, and lands on the fork's page, whose story shows
// the other route.
func TestForkFromTheInspector(t *testing.T) {
	t.Parallel()
	b := startStoredBaton(t)
	id := b.startRun(t, "supervisor", 0)
	b.waitRunEnded(t, id, 20*time.Second)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+id)
	tb.click(t, `#timeline-rows .row[data-kind="model.started"]`)
	tb.waitFor(t, "the fork form in the inspector", `!!document.querySelector('[data-testid=fork-form]')`)
	evalJS[bool](t, tb, `(document.querySelector('#fork-to').value = 'math_agent', true)`)
	tb.click(t, `[data-testid=fork-button]`)
	tb.waitFor(t, "the fork's page, with the other route", `location.pathname.startsWith('/runs/') && !location.pathname.endsWith('/`+id+`') &&
	  (document.querySelector('[data-testid=story-route]')?.textContent || '').startsWith('supervisor → math_agent')`)
	// The fork's page links back to the model call it changed; the original's lists the fork.
	tb.waitFor(t, "the link back to the original", `document.querySelector('[data-testid=forked-from] a')?.dataset.runId === `+jsString(id))
	fork := evalJS[string](t, tb, `document.body.dataset.runId`)
	tb.click(t, `[data-testid=forked-from] a`)
	tb.waitFor(t, "the original's page listing the fork", `location.pathname.endsWith('/`+id+`') && document.querySelector('[data-testid=forks] a')?.dataset.runId === `+jsString(fork))
}
