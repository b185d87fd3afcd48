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

// inspectedJS is the seq the inspector shows, "" when none.
const inspectedJS = `(document.querySelector('[data-testid=inspection]')?.dataset.seq || '')`

// selectedJS is the seq of the selected timeline row, "" when none.
const selectedJS = `(document.querySelector('#timeline-rows .row.selected')?.dataset.seq || '')`

// press sends keys to the element that has the focus.
func (tb *tab) press(t *testing.T, keys string) {
	t.Helper()
	tb.do(t, "press "+keys, chromedp.KeyEvent(keys))
}

// waitInspected waits until the selected row and the inspector both show event seq.
func (tb *tab) waitInspected(t *testing.T, seq string) {
	t.Helper()
	tb.waitFor(t, "the selection and the inspector on #"+seq,
		selectedJS+` === `+jsString(seq)+` && `+inspectedJS+` === `+jsString(seq))
}

// waitEvents waits until run id has recorded at least n events.
func (b *baton) waitEvents(t *testing.T, id string, n int) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for len(b.trace(t, id).Events) < n {
		if time.Now().After(deadline) {
			t.Fatalf("run %s has fewer than %d events after %s", id, n, waitTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKeyboardMovesSelectionAndInspector: j/k and, in the focused timeline, the arrow keys,
// Home and End move the selection, and the inspector follows it; the timeline is reached with
// Tab and scrolls with the keys.
func TestKeyboardMovesSelectionAndInspector(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	tb := newTab(t, nil)
	id := b.startRun(t, "supervisor", 0)
	n := len(b.waitRunEnded(t, id, waitTimeout).Events)
	tb.open(t, b.base+"/runs/"+id)

	tb.click(t, "#ev-3")
	tb.waitInspected(t, "3")
	tb.press(t, "j")
	tb.waitInspected(t, "4")
	tb.press(t, "kk")
	tb.waitInspected(t, "2")

	// Tab from the text filter lands on the timeline.
	tb.do(t, "focus the text filter", chromedp.Focus(chromedp.ID("filter-text")))
	tb.press(t, kb.Tab)
	tb.waitFor(t, "the timeline to have the focus", `document.activeElement?.closest('#timeline-rows') !== null`)
	tb.press(t, kb.ArrowDown)
	tb.waitInspected(t, "3")
	tb.press(t, kb.End)
	tb.waitInspected(t, itoa(n))
	tb.waitFor(t, "the last row scrolled into the timeline's view", `(() => {
	  const l = document.getElementById('timeline-rows').getBoundingClientRect();
	  const r = document.getElementById('ev-`+itoa(n)+`').getBoundingClientRect();
	  return r.top >= l.top - 1 && r.bottom <= l.bottom + 1; })()`)
	bottom := evalJS[float64](t, tb, `document.getElementById('timeline-rows').scrollTop`)
	if bottom == 0 {
		t.Fatalf("the timeline did not scroll to its last row")
	}
	tb.press(t, kb.PageUp)
	tb.waitFor(t, "PageUp to scroll the timeline", `document.getElementById('timeline-rows').scrollTop < `+itoa(int(bottom)))
	tb.press(t, kb.Home)
	tb.waitInspected(t, "1")
}

// TestIndexFollowsRunStatus: the index page's list of runs turns a running run completed, and
// lists a run started elsewhere, without a reload.
func TestIndexFollowsRunStatus(t *testing.T) {
	t.Parallel()
	supervisor, gate := gated(t, "supervisor")
	b := startBaton(t, supervisor)
	tb := newTab(t, nil)
	id := b.startRun(t, "supervisor", 0) // held before its first reply until the page saw it running
	tb.open(t, b.base+"/")
	row := `[data-testid=run-row]` + attrSel("data-run-id", id)
	if got := evalJS[string](t, tb, `document.querySelector('`+row+`')?.dataset.status || ''`); got != "running" {
		t.Fatalf("the new run is listed as %q, want running", got)
	}
	evalJS[bool](t, tb, `window.__sameDocument = true`)
	other := b.startRun(t, "transfer", 0)
	tb.waitFor(t, "the run started elsewhere to be listed", `!!document.querySelector('[data-testid=run-row]`+attrSel("data-run-id", other)+`')`)
	gate.Open()
	tb.waitFor(t, "the run to be listed as completed", `document.querySelector('`+row+`')?.dataset.status === 'completed'`)
	if text := evalJS[string](t, tb, `document.querySelector('`+row+`').innerText`); !strings.Contains(text, "completed") {
		t.Errorf("the row reads %q, want it to say completed", text)
	}
	if !evalJS[bool](t, tb, `window.__sameDocument === true`) {
		t.Errorf("the page reloaded to show the new status")
	}
}

// TestJoinLiveRunFollowsHead: a page opened on a run already going on shows its newest rows
// and keeps following them.
func TestJoinLiveRunFollowsHead(t *testing.T) {
	t.Parallel()
	gate := agentstest.NewGate()
	b := startBaton(t, gate.Flow(agentstest.Long(100))) // 11 replies of 10 tool calls
	tb := newTab(t, nil)
	id := b.startRun(t, "long", 100*time.Millisecond)
	holdAt(t, gate, 4)      // 30 tool calls done: the page opens on a run going on
	b.waitEvents(t, id, 40) // more rows than the timeline shows at once
	tb.open(t, b.base+"/runs/"+id)
	if s := tb.state(t); s.Status != string(traces.StatusRunning) {
		t.Fatalf("the run held mid-way shows status %s, want running", s.Status)
	}
	// The last row shown: a message folded into its call's row is in the list, hidden.
	const lastRowInView = `(() => {
	  const list = document.getElementById('timeline-rows');
	  const rows = Array.from(list.querySelectorAll('.row')).filter(r => r.checkVisibility());
	  const l = list.getBoundingClientRect(), r = rows[rows.length - 1].getBoundingClientRect();
	  return list.scrollHeight > list.clientHeight && r.bottom <= l.bottom + 1 && r.top >= l.top - 1; })()`
	if !evalJS[bool](t, tb, lastRowInView) {
		t.Errorf("the page opened away from the run's head: its last row is out of view")
	}
	first := len(tb.state(t).Seqs)
	gate.Open()
	tb.waitFor(t, "newer rows", `document.querySelectorAll('#timeline-rows .row').length > `+itoa(first))
	tb.waitFor(t, "the newest row in view", lastRowInView)
}

// TestNewEventsButtonCoversNothing: "New events", shown when one scrolled away from the head of
// a live run, sits beside the rows, not over them.
func TestNewEventsButtonCoversNothing(t *testing.T) {
	t.Parallel()
	gate := agentstest.NewGate()
	b := startBaton(t, gate.Flow(agentstest.Long(150))) // 16 replies of 10 tool calls
	tb := newTab(t, nil)
	id := b.startRun(t, "long", 0)
	holdAt(t, gate, 4)
	b.waitEvents(t, id, 40)
	tb.open(t, b.base+"/runs/"+id)
	evalJS[bool](t, tb, `(document.getElementById('timeline-rows').scrollTop = 0, true)`)
	// One more reply's rows arrive while the run still goes on (the button is for live runs).
	holdAt(t, gate, 5)
	tb.waitVisible(t, "#follow")
	overlap := evalJS[bool](t, tb, `(() => {
	  const b = document.getElementById('follow').getBoundingClientRect();
	  const l = document.getElementById('timeline-rows').getBoundingClientRect();
	  return b.top < l.bottom - 0.5 && b.bottom > l.top + 0.5; })()`)
	if overlap {
		t.Errorf("the New events button overlaps the timeline's rows")
	}
}

// TestEmptyInputSaysWhatToDo: pressing Run with an empty input explains in the page's words and
// starts nothing.
func TestEmptyInputSaysWhatToDo(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/")
	card := attrSel("data-testid", "flow-supervisor")
	evalJS[bool](t, tb, `(document.querySelector('`+card+` textarea').value = '  ', true)`)
	tb.click(t, card+" [data-testid=run-button]")
	errSel := card + " [data-testid=form-error]"
	tb.waitVisible(t, errSel)
	msg := evalJS[string](t, tb, `document.querySelector('`+errSel+`').innerText`)
	if strings.Contains(msg, `"input"`) || !strings.Contains(msg, "input box is empty") {
		t.Errorf("the page says %q, want words of the page, not of the JSON API", msg)
	}
	if !evalJS[bool](t, tb, `document.activeElement === document.querySelector('`+card+` textarea')`) {
		t.Errorf("the input box does not have the focus after the error")
	}
	if runs := evalJS[int](t, tb, `document.querySelectorAll('[data-testid=run-row]').length`); runs != 0 || len(b.runs(t)) != 0 {
		t.Errorf("an empty input started a run")
	}
}
