package e2e_test

import (
	"testing"
	"time"
)

// TestDiffTwoPickedRuns: in the runs list a user picks two runs and asks for their diff; the diff
// page names the first divergence. The runs list filters the runs with handoff findings; the run
// page of a run with a handoff bug lists the linter's finding under the header, and a run page
// opens its inspector on the handoff story.
func TestDiffTwoPickedRuns(t *testing.T) {
	t.Parallel()
	b := startStoredBaton(t)
	super := b.startRun(t, "supervisor", 0)
	unknown := b.startRun(t, "transfer-unknown", 0)
	b.waitRunEnded(t, super, 20*time.Second)
	b.waitRunEnded(t, unknown, 20*time.Second)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/")
	rowOf := func(id string) string { return `[data-testid=run-row]` + attrSel("data-run-id", id) }
	tb.waitFor(t, "both runs listed", `!!document.querySelector('`+rowOf(super)+`') && !!document.querySelector('`+rowOf(unknown)+`')`)
	// The runs list keeps, on asking, the runs with handoff findings, and shows their count.
	evalJS[bool](t, tb, `(document.querySelector('[data-testid=filter-findings]').checked = true, true)`)
	tb.click(t, `[data-testid=run-filters] button[type=submit]`)
	tb.waitFor(t, "only the run with findings listed", `location.search.includes('findings=1') &&
	  document.querySelectorAll('[data-testid=run-row]').length === 1 && !!document.querySelector('`+rowOf(unknown)+` [data-testid=finding-count]')`)
	tb.open(t, b.base+"/")
	tb.waitFor(t, "both runs listed again", `!!document.querySelector('`+rowOf(super)+`') && !!document.querySelector('`+rowOf(unknown)+`')`)
	tb.click(t, rowOf(super)+` [data-testid=diff-pick]`)
	tb.click(t, rowOf(unknown)+` [data-testid=diff-pick]`)
	tb.click(t, `[data-testid=diff-picked]`)
	tb.waitFor(t, "the diff page naming the first divergence", `location.pathname === '/diff' &&
	  document.querySelector('[data-testid=first-divergence]')?.dataset.what === 'routing decision' &&
	  document.querySelectorAll('[data-testid=diff-turn]').length > 2`)

	tb.open(t, b.base+"/runs/"+unknown)
	tb.waitFor(t, "the refused transfer among the findings", `!document.querySelector('[data-testid=findings]').hidden &&
	  document.querySelector('[data-testid=finding]')?.dataset.rule === 'refused-transfer'`)
	tb.click(t, `[data-testid=finding] .seq-link`)
	tb.waitFor(t, "the finding's event inspected", `(document.querySelector('[data-testid=inspector]')?.textContent || '').includes('refunds_agent')`)

	tb.open(t, b.base+"/runs/"+super)
	tb.waitFor(t, "the story in the inspector", `(document.querySelector('[data-testid=story-route]')?.textContent || '').startsWith('supervisor → research_agent → supervisor')`)
	tb.click(t, `#run-story .story-handoff .seq-link`)
	tb.waitFor(t, "the first handoff inspected", `(document.querySelector('[data-testid=inspector]')?.textContent || '').includes('research_agent') &&
	  !document.querySelector('#inspector #run-story')`)
}
