package e2e_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/baton-dev/baton/web"
)

// runAtJS is what the header says of where the page stands ("at event N of M"), "" at the head.
const runAtJS = `(document.querySelector('[data-testid=run-at]')?.textContent || '').trim().replace(/\s+/g, ' ')`

// TestTimeTravel: on the finished pipeline run, the keys step the page back to just before its
// first transfer, where the tree has no transfer edge and the session no value; one step on
// draws the edge, End returns to the whole run, and ?at= opens right where the steps led.
func TestTimeTravel(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	var run struct{ ID string }
	if err := json.Unmarshal(b.post(t, "/api/runs", map[string]any{"flow": "pipeline", "pace_ms": 0}, 201), &run); err != nil {
		t.Fatal(err)
	}
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+run.ID)
	tb.waitStatus(t, "completed")
	head := tb.state(t)
	if len(head.Edges) < 2 || len(head.Values) == 0 {
		t.Fatalf("the finished pipeline run shows edges %v, values %v: want transfers and session values", head.Edges, head.Values)
	}
	first := int(head.Edges[0].Seq)
	before := first - 1

	// At the head the scrubber sits at the last event; Home goes to the first, → steps on.
	tb.do(t, "step to the first event and on to just before the first transfer",
		chromedp.KeyEvent(kb.Home), chromedp.KeyEvent(strings.Repeat(kb.ArrowRight, before-1)))
	tb.waitFor(t, "the page as of #"+itoa(before), `document.body.dataset.at === `+jsString(itoa(before)))
	checkBefore := func(where string) {
		t.Helper()
		s := tb.state(t)
		// Before the first transfer only what the agents before it set is there: collector's
		// answer (its OutputKey, stored during its own run), none of the later stages'.
		if len(s.Edges) != 0 || len(s.Values) >= len(head.Values) || slices.ContainsFunc(s.Values, func(v sessionValue) bool { return v.SetBy != head.Edges[0].From }) {
			t.Errorf("%s: edges %v, values %v: want no edge, and values set by %s alone, before the first transfer", where, s.Edges, s.Values, head.Edges[0].From)
		}
		if slices.Contains(s.Histories, head.Edges[0].To) {
			t.Errorf("%s: %s has a history before it was transferred to", where, head.Edges[0].To)
		}
		if s.Status != "completed" || len(s.Seqs) != len(head.Seqs) {
			t.Errorf("%s: status %s with %d rows, want the run's own, completed, with the whole run's %d", where, s.Status, len(s.Seqs), len(head.Seqs))
		}
		if got := evalJS[string](t, tb, runAtJS); got != "at event "+itoa(before)+" of "+itoa(len(head.Seqs)) {
			t.Errorf("%s: the header says %q, want at event %d of %d", where, got, before, len(head.Seqs))
		}
		tb.waitFor(t, where+": the scrubber and the inspector on #"+itoa(before),
			`document.getElementById('scrub-range').value === `+jsString(itoa(before))+
				` && document.querySelector('[data-testid=inspection]')?.dataset.seq === `+jsString(itoa(before))+
				` && document.querySelector('[data-testid=follow-head]').checkVisibility()`)
	}
	checkBefore("stepped back")

	// An agent clicked there is summarised as of that event: the last stage has made no model
	// call yet.
	last := head.Edges[len(head.Edges)-1].To
	tb.click(t, attrSel("data-testid", "node-"+last)+" .node-box")
	tb.waitFor(t, last+"'s summary as of #"+itoa(before), `document.querySelector('[data-testid=agent-summary]')?.dataset.agent === `+jsString(last)+
		` && !document.querySelector('[data-testid=agent-summary] [data-testid=prompt-calls] tr[data-seq]')`)
	tb.do(t, "step back onto #"+itoa(before), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowLeft))
	tb.waitFor(t, "the page as of #"+itoa(before)+" again", `document.body.dataset.at === `+jsString(itoa(before))+
		` && document.querySelector('[data-testid=inspection]')?.dataset.seq === `+jsString(itoa(before)))

	tb.do(t, "step onto the transfer", chromedp.KeyEvent(kb.ArrowRight))
	tb.waitFor(t, "the first transfer edge", `document.body.dataset.at === `+jsString(itoa(first))+
		` && document.querySelectorAll('#graph [data-testid=transfer-edge]').length === 1`)

	tb.do(t, "return to the head", chromedp.KeyEvent(kb.End))
	tb.waitFor(t, "the whole run again", `!document.body.hasAttribute('data-at') && !location.search.includes('at=')`+
		` && document.querySelectorAll('#graph [data-testid=transfer-edge]').length === `+itoa(len(head.Edges)))
	if s := tb.state(t); s.Status != "completed" || len(s.Values) != len(head.Values) || evalJS[string](t, tb, runAtJS) != "" {
		t.Errorf("back at the head: status %s, values %v, header %q, want completed with %v, at no earlier event", s.Status, s.Values, evalJS[string](t, tb, runAtJS), head.Values)
	}

	tb.open(t, b.base+"/runs/"+run.ID+"?at="+itoa(before))
	checkBefore("opened with ?at=")
}

// TestTimeTravelLive: stepping back on a live run keeps the page at its point while the rest of
// the run arrives in the timeline, its header saying where it stands and, once the run ends, that
// it completed; Follow returns to the newest event, finished, with every edge.
func TestTimeTravelLive(t *testing.T) {
	t.Parallel()
	pipeline, gate := gated(t, "pipeline")
	b := startBaton(t, pipeline)
	var run struct{ ID string }
	if err := json.Unmarshal(b.post(t, "/api/runs", map[string]any{"flow": "pipeline", "pace_ms": 50}, 201), &run); err != nil {
		t.Fatal(err)
	}
	holdAt(t, gate, 4) // before editor's first reply: two transfers done, two to come
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+run.ID)
	tb.waitFor(t, "the first transfer, live", `document.querySelectorAll('#graph [data-testid=transfer-edge]').length >= 1`)
	if s := tb.state(t); s.Status != "running" {
		t.Fatalf("the run held mid-way shows status %s, want running", s.Status)
	}
	rows := len(tb.state(t).Seqs)
	tb.do(t, "step back to the first event", chromedp.KeyEvent(kb.Home))
	tb.waitFor(t, "the page as of #1", `document.body.dataset.at === '1' && document.querySelectorAll('#graph [data-testid=transfer-edge]').length === 0`)
	gate.Open()
	tb.waitFor(t, "the rest of the run in the timeline, dimmed", `document.querySelector('[data-testid=timeline-row][data-kind="run.finished"]')?.classList.contains('future')`)
	// The header keeps the run's own status, now completed, and where the page stands in it.
	tb.waitStatus(t, "completed")
	last := b.trace(t, run.ID).Events
	tb.waitFor(t, "the header at event 1 of the whole run", runAtJS+` === 'at event 1 of `+itoa(len(last))+`'`)
	if s := tb.state(t); len(s.Edges) != 0 || len(s.Seqs) <= rows || s.URL == "" || !strings.Contains(s.URL, "at=1") {
		t.Errorf("after the run ended, away from the head: edges %v, %d rows (%d before), url %s: want the page still at #1 with new rows", s.Edges, len(s.Seqs), rows, s.URL)
	}
	tb.click(t, "[data-testid=follow-head]")
	tb.waitStatus(t, "completed")
	tb.waitFor(t, "the whole run after Follow", `!document.body.hasAttribute('data-at') && !document.querySelector('.row.future')`+
		` && document.querySelectorAll('#graph [data-testid=transfer-edge]').length >= 2 && !document.querySelector('[data-testid=follow-head]').checkVisibility()`)
}

// TestTravelKeepsTheOutcomeInReach: stepped back to its first event, a completed run's page says
// "at event 1 of M", not "running", and still shows the run's status and final answer, whose
// link inspects the answer; Follow returns to the head, where the header says no more of it.
func TestTravelKeepsTheOutcomeInReach(t *testing.T) {
	t.Parallel()
	b, id, tb := openFinished(t, "supervisor")
	tr := b.trace(t, id)
	answer := web.NewStats(tr).Outcome
	tb.waitStatus(t, "completed")
	tb.waitVisible(t, "[data-testid=final-answer]")

	tb.do(t, "step back to the first event", chromedp.KeyEvent(kb.Home))
	tb.waitFor(t, "the page as of #1", `document.body.dataset.at === '1' && document.querySelectorAll('#graph [data-testid=transfer-edge]').length === 0`)
	if got := evalJS[string](t, tb, runAtJS); got != "at event 1 of "+itoa(len(tr.Events)) {
		t.Errorf("the header says %q, want at event 1 of %d", got, len(tr.Events))
	}
	if s := tb.state(t); s.Status != "completed" {
		t.Errorf("the header's status is %q, want the run's own, completed", s.Status)
	}
	if evalJS[bool](t, tb, `document.querySelector('[data-testid=run-summary], #run-summary').innerText.includes('running')`) {
		t.Errorf("the header says running: %q", evalJS[string](t, tb, `document.getElementById('run-summary').innerText`))
	}
	tb.waitVisible(t, "[data-testid=final-answer]")
	if got := evalJS[string](t, tb, `document.querySelector('[data-testid=final-answer]').dataset.seq`); got != itoa(int(answer.AnswerSeq)) {
		t.Errorf("the final answer shown is #%s, want the run's, #%d", got, answer.AnswerSeq)
	}
	tb.click(t, "#run-outcome .seq-link")
	tb.waitFor(t, "the inspector on the answer", `document.querySelector('[data-testid=inspection]')?.dataset.seq === `+jsString(itoa(int(answer.AnswerSeq))))

	tb.click(t, "[data-testid=follow-head]")
	tb.waitFor(t, "the head, with nothing said of an earlier event", `!document.body.hasAttribute('data-at') && `+runAtJS+` === ''`)
}
