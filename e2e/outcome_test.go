package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/traces"
)

// paceJS is the pace slider as a page shows it.
const paceJS = `(() => { const p = document.getElementById('pace');
  return p ? {value: Number(p.value), disabled: p.disabled, label: document.getElementById('pace-value').textContent} : null; })()`

type paceView struct {
	Value    int    `json:"value"`
	Disabled bool   `json:"disabled"`
	Label    string `json:"label"`
}

// TestPaceIsTheRunsOwn: a pace changed in one tab shows in the other; once the run is over both
// show its pace, fixed; "Run again" starts the next run at that pace.
func TestPaceIsTheRunsOwn(t *testing.T) {
	t.Parallel()
	supervisor, gate := gated(t, "supervisor")
	b := startBaton(t, supervisor)
	one := newTab(t, nil)
	two := newTab(t, one)
	id := b.startRun(t, "supervisor", 200*time.Millisecond)
	holdAt(t, gate, 1) // the run waits for its first reply while the tabs act
	one.open(t, b.base+"/runs/"+id)
	two.open(t, b.base+"/runs/"+id)
	if s := two.state(t); s.Status != string(traces.StatusRunning) {
		t.Fatalf("the run held at its first reply shows status %s, want running", s.Status)
	}
	for i, tb := range []*tab{one, two} {
		if got := evalJS[paceView](t, tb, paceJS); got.Value != 200 || got.Disabled {
			t.Fatalf("viewer %d: pace %+v, want the run's 200 ms, movable", i+1, got)
		}
	}
	// Two steps left in the tab in front: 100 ms, which the server keeps and sends to the other.
	two.do(t, "move the pace slider", chromedp.Focus(chromedp.ID("pace")), chromedp.KeyEvent(kb.ArrowLeft+kb.ArrowLeft))
	one.waitFor(t, "the other tab to show the new pace", `document.getElementById('pace').value === '100' &&
	  document.getElementById('pace-value').textContent === '100 ms'`)
	gate.Open() // the next run, "Run again", is not held

	for _, tb := range []*tab{one, two} {
		tb.waitStatus(t, "completed")
		tb.waitFor(t, "the slider fixed at the run's pace", `document.getElementById('pace').disabled && document.getElementById('pace').value === '100'`)
	}
	// A page opened on the finished run shows its pace, not the server's default (0).
	three := newTab(t, one)
	three.open(t, b.base+"/runs/"+id)
	if got := evalJS[paceView](t, three, paceJS); got.Value != 100 || !got.Disabled || got.Label != "100 ms" {
		t.Errorf("a page opened after the run: pace %+v, want 100 ms, fixed", got)
	}

	three.click(t, "#run-again")
	three.waitFor(t, "the new run's page", `location.pathname !== `+jsString("/runs/"+id)+` && document.readyState === 'complete' && document.body.dataset.page === 'run'`)
	if got := evalJS[paceView](t, three, paceJS); got.Value != 100 {
		t.Errorf("Run again started a run at %d ms, want the original run's 100 ms", got.Value)
	}
}

// TestFailedRunShowsWhy: a failed run opens on its error event; the header gives the whole
// reason; "Jump to error" comes back to it from anywhere.
func TestFailedRunShowsWhy(t *testing.T) {
	t.Parallel()
	b := startBaton(t, agentstest.FailingTool())
	tb := newTab(t, nil)
	id := b.startRun(t, "failing_tool", 0)
	tr := b.waitRunEnded(t, id, waitTimeout)
	var errSeq string
	for _, e := range tr.Events {
		if e.Kind == traces.KindError {
			errSeq = itoa(int(e.Seq))
		}
	}
	if errSeq == "" || tr.Run.Status != traces.StatusFailed {
		t.Fatalf("the failing flow ended %s with no error event", tr.Run.Status)
	}
	tb.open(t, b.base+"/runs/"+id)
	tb.waitInspected(t, errSeq)
	if kind := evalJS[string](t, tb, `document.querySelector('[data-testid=inspection]').dataset.kind`); kind != "error" {
		t.Errorf("the inspector opened on a %s event, want the error", kind)
	}

	reason := evalJS[struct {
		Text     string `json:"text"`
		Clipped  bool   `json:"clipped"`
		Scrolls  bool   `json:"scrolls"`
		Ellipsis string `json:"ellipsis"`
	}](t, tb, `(() => { const el = document.querySelector('[data-testid=run-error]');
	  return {text: el.innerText, clipped: el.scrollWidth > el.clientWidth + 1,
	    scrolls: el.scrollHeight > el.clientHeight + 1, ellipsis: getComputedStyle(el).textOverflow}; })()`)
	for _, want := range []string{agentstest.ErrFlaky.Error(), "node path"} {
		if !strings.Contains(reason.Text, want) {
			t.Errorf("the header's failure reason %q lacks %q", reason.Text, want)
		}
	}
	if reason.Clipped || reason.Ellipsis == "ellipsis" {
		t.Errorf("the failure reason is cut off sideways: %+v", reason)
	}

	tb.click(t, "#ev-2")
	tb.waitInspected(t, "2")
	tb.click(t, "[data-testid=jump-to-error]")
	tb.waitInspected(t, errSeq)
}

// TestFinalAnswerShows: once a run watched live completes, the header shows its final answer,
// the supervisor's last words, with a link to their event.
func TestFinalAnswerShows(t *testing.T) {
	t.Parallel()
	supervisor, gate := gated(t, "supervisor")
	b := startBaton(t, supervisor)
	tb := newTab(t, nil)
	id := b.startRun(t, "supervisor", 0)
	holdAt(t, gate, 8) // before the supervisor's last reply, its answer
	tb.open(t, b.base+"/runs/"+id)
	tb.waitFor(t, "every transfer", `document.querySelectorAll('[data-testid=transfer-edge]').length === `+itoa(len(supervisorEdges)))
	if s := tb.state(t); s.Status != string(traces.StatusRunning) {
		t.Fatalf("the run held before its answer shows status %s, want running", s.Status)
	}
	if evalJS[bool](t, tb, `!!document.querySelector('[data-testid=final-answer]')`) {
		t.Errorf("a final answer shows while the run goes on")
	}
	gate.Open()
	tb.waitStatus(t, "completed")
	tr := b.trace(t, id)
	var want traces.Event
	for _, e := range tr.Events {
		if e.Kind == traces.KindMessage && e.Agent == "supervisor" && e.Message.Role == "assistant" && len(e.Message.ToolCalls) == 0 && e.Message.Content != "" {
			want = e
		}
	}
	if want.Seq == 0 {
		t.Fatalf("the supervisor said nothing in words")
	}
	tb.waitVisible(t, "[data-testid=final-answer]")
	got := evalJS[struct {
		Text  string `json:"text"`
		Seq   string `json:"seq"`
		Agent string `json:"agent"`
	}](t, tb, `(() => { const a = document.querySelector('[data-testid=final-answer]');
	  return {text: a.innerText, seq: a.dataset.seq, agent: a.dataset.agent}; })()`)
	if !strings.Contains(got.Text, want.Message.Content) || got.Seq != itoa(int(want.Seq)) || got.Agent != "supervisor" {
		t.Errorf("final answer %+v, want #%d by supervisor: %q", got, want.Seq, want.Message.Content)
	}
	tb.click(t, "#run-outcome .seq-link")
	tb.waitInspected(t, got.Seq)
}

// TestFinalAnswerIsTheRunsLastWord: the header credits the answer the run ended with to the agent
// that said it: in pipeline the editor, after the collector's and the writer's intermediate
// output; in agenttool-exit the concierge, after an exit that ended only its AgentTool call. The
// answer's link opens that event.
func TestFinalAnswerIsTheRunsLastWord(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	for _, tc := range []struct{ flow, by string }{{"pipeline", "editor"}, {"agenttool-exit", "concierge"}} {
		t.Run(tc.flow, func(t *testing.T) {
			tb := newTab(t, nil)
			runFromIndex(t, tb, b, tc.flow, 0)
			tb.waitStatus(t, "completed")
			tr := b.trace(t, runID(t, evalJS[string](t, tb, `location.href`)))
			var last traces.Event
			for _, e := range tr.Events {
				if m := e.Message; m != nil && m.Role == "assistant" && m.Content != "" && len(m.ToolCalls) == 0 {
					last = e
				}
			}
			if last.Agent != tc.by {
				t.Fatalf("%s's last words are %s's (#%d), want %s's", tc.flow, last.Agent, last.Seq, tc.by)
			}
			tb.waitVisible(t, "[data-testid=final-answer]")
			got := evalJS[struct{ Text, Seq, Agent string }](t, tb, `(() => { const a = document.querySelector('[data-testid=final-answer]');
			  return {text: a.querySelector('.answer').textContent, seq: a.dataset.seq, agent: a.dataset.agent}; })()`)
			if got.Text != last.Message.Content || got.Seq != itoa(int(last.Seq)) || got.Agent != tc.by {
				t.Errorf("final answer #%s by %s: %q\nwant #%d by %s: %q", got.Seq, got.Agent, got.Text, last.Seq, tc.by, last.Message.Content)
			}
			tb.click(t, "#run-outcome .seq-link")
			tb.waitInspected(t, itoa(int(last.Seq)))
		})
	}
}
