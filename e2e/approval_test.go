package e2e_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// TestApproveFromThePage: a run of the approval flow pauses at its refund tool; its page says
// where and what it asks, and a person approves it there with a comment. The same page follows
// the resumed run to its end, and the answer carries the decision: one run, interrupted then
// resumed.
func TestApproveFromThePage(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	tb := newTab(t, nil)
	id := b.startRun(t, "approval", 0)
	tb.open(t, b.base+"/runs/"+id)
	tb.waitStatus(t, "interrupted")
	tb.waitVisible(t, "[data-testid=decision-form]")
	paused := evalJS[struct{ Info, Where string }](t, tb, `(() => {
	  const p = document.querySelector('[data-testid=run-paused]');
	  return {info: p.querySelector('[data-testid=interrupt-info]').textContent, where: p.querySelector('.hint').textContent}; })()`)
	if paused.Info != agents.ApprovalQuestion || !strings.Contains(paused.Where, "issue_refund") || !strings.Contains(paused.Where, "billing_agent") {
		t.Errorf("the paused run shows %+v, want the approval question at billing_agent's issue_refund", paused)
	}

	tb.click(t, "[data-testid=decision-comment]")
	tb.do(t, "type a comment", chromedp.SendKeys("[data-testid=decision-comment]", "bank statement checked"))
	tb.click(t, "[data-testid=approve]")
	tb.waitStatus(t, "completed")
	tb.waitFor(t, "the final answer", `document.querySelector('[data-testid=final-answer]')?.textContent.includes('approved: bank statement checked')`)
	if n := evalJS[int](t, tb, `document.querySelectorAll('[data-testid=run-paused]').length`); n != 0 {
		t.Errorf("the completed run still shows %d decision forms", n)
	}

	tr := b.trace(t, id)
	var kinds []string
	for _, e := range tr.Events {
		if e.Kind == traces.KindResumed || e.Kind == traces.KindRunFinished {
			kinds = append(kinds, string(e.Kind)+":"+string(runStatusOf(e)))
		}
	}
	if got := strings.Join(kinds, " "); got != "run.finished:interrupted resumed: run.finished:completed" {
		t.Errorf("run %s: %s, want it interrupted, resumed and completed in one trace", id, got)
	}
	// The header's clock counts the run's active time, from its first event to its last: the wait
	// for the decision is left out.
	var stopped, resumed time.Time
	for _, e := range tr.Events {
		switch {
		case e.Kind == traces.KindRunFinished && stopped.IsZero():
			stopped = e.Time
		case e.Kind == traces.KindResumed:
			resumed = e.Time
		}
	}
	active := tr.Events[len(tr.Events)-1].Time.Sub(tr.Events[0].Time) - resumed.Sub(stopped)
	tb.waitFor(t, "the active time in the header", `document.querySelector('[data-testid=elapsed]')?.textContent === `+strconv.Quote(web.Clock(active)))
	// The page's rows are the whole trace: it followed the resumed part live.
	if rows := evalJS[int](t, tb, `document.querySelectorAll('[data-testid=timeline-row]').length`); rows != len(tr.Events) {
		t.Errorf("the page shows %d rows, the trace has %d events", rows, len(tr.Events))
	}
}

// runStatusOf is the status a run.finished event states, "" for other events.
func runStatusOf(e traces.Event) traces.Status {
	if e.Run == nil {
		return ""
	}
	return e.Run.Status
}

// TestIndexAfterDecisions: with the runs kept in a database, as serve keeps them, an index page
// left open lists two runs waiting for a decision; one is approved and the other rejected on
// their pages, and the index, without a reload, and GET /api/runs then list both as their pages
// show them: completed, with every event.
func TestIndexAfterDecisions(t *testing.T) {
	t.Parallel()
	b := startStoredBaton(t)
	ids := []string{b.startRun(t, "approval", 0), b.startRun(t, "approval", 0)}
	for _, id := range ids {
		b.waitRunEnded(t, id, waitTimeout)
	}
	index := newTab(t, nil)
	index.open(t, b.base+"/")
	row := func(id string) string {
		return `document.querySelector('[data-testid=run-row]` + attrSel("data-run-id", id) + `')?.dataset.status`
	}
	for _, id := range ids {
		index.waitFor(t, "run "+id+" listed as interrupted", row(id)+` === 'interrupted'`)
	}

	runPage := newTab(t, index)
	for i, decision := range []string{"approve", "reject"} {
		runPage.open(t, b.base+"/runs/"+ids[i])
		runPage.click(t, "[data-testid="+decision+"]")
		runPage.waitStatus(t, "completed")
	}
	for _, id := range ids {
		index.waitFor(t, "run "+id+" listed as completed", row(id)+` === 'completed'`)
	}
	listed := map[string]live.RunSummary{}
	for _, r := range b.summaries(t) {
		listed[r.ID] = r
	}
	for _, id := range ids {
		tr := b.trace(t, id)
		if r := listed[id]; r.Status != traces.StatusCompleted || r.Events != int64(len(tr.Events)) {
			t.Errorf("GET /api/runs lists %s as %s with %d events; its page shows completed with %d", id, r.Status, r.Events, len(tr.Events))
		}
	}
}
