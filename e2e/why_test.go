package e2e_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestTransferWhy: clicking a model-chosen transfer in the tree shows why it happened; its
// "deciding call" link reaches the supervisor's model call whose reply called the transfer,
// and that call's inspector links back to the transfer.
func TestTransferWhy(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	id := b.startRun(t, "supervisor", 0)
	tr := b.waitRunEnded(t, id, waitTimeout)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+id)

	tb.click(t, `#graph .transfer.mode-llm`)
	tb.waitFor(t, "the inspector on a transfer with its why",
		`document.querySelector('[data-testid=inspection]')?.dataset.kind === 'transfer' && document.querySelector('[data-testid=transfer-why] .seq-link') !== null`)
	transfer := evalJS[string](t, tb, `document.querySelector('[data-testid=inspection]').dataset.seq`)
	decision := evalJS[string](t, tb, `document.querySelector('[data-testid=transfer-why]').dataset.decision`)
	if evalJS[bool](t, tb, `!Array.from(document.querySelectorAll('#inspector [data-testid=fed-message]')).some(m => m.innerText.includes('For context:'))`) {
		t.Errorf("transfer #%s's inspector does not list what its target received", transfer)
	}

	tb.click(t, `[data-testid=transfer-why] .seq-link`)
	tb.waitInspected(t, decision)
	if k := evalJS[string](t, tb, `document.querySelector('[data-testid=inspection]').dataset.kind`); k != "model.finished" {
		t.Fatalf("the deciding call #%s is a %s, want model.finished", decision, k)
	}
	var callID string
	for _, e := range tr.Events {
		if fmt.Sprint(e.Seq) == transfer {
			callID = e.Transfer.CallID
		}
	}
	if !evalJS[bool](t, tb, `document.querySelector('#inspector').innerText.includes(`+jsString(callID)+`)`) {
		t.Errorf("the deciding call #%s does not show the transfer's call id %s", decision, callID)
	}
	tb.click(t, `#inspector .related .seq-link[data-seq="`+transfer+`"]`)
	tb.waitInspected(t, transfer)
}

// timelineCount is what the timeline's filters show.
type timelineCount struct {
	Count  string   `json:"count"`
	Empty  bool     `json:"empty"` // the "no match" line is visible
	Shown  int      `json:"shown"`
	Groups []string `json:"groups"` // data-group of the visible rows
}

const timelineCountJS = `(() => {
  const rows = Array.from(document.querySelectorAll('[data-testid=timeline-row]')).filter(r => r.checkVisibility());
  return {count: document.querySelector('[data-testid=filter-count]').textContent,
    empty: !!document.querySelector('[data-testid=filter-empty]')?.checkVisibility(),
    shown: rows.length, groups: rows.map(r => r.dataset.group)};
})()`

// TestTimelineSearchAndKinds: a search looks in the events' whole content ("For context" is in
// the agents' inputs, never in a row's summary) and counts its matches; a search that matches
// nothing says so; checking two kinds shows the rows of both and only those.
func TestTimelineSearchAndKinds(t *testing.T) {
	t.Parallel()
	_, _, tb := openFinished(t, "supervisor")

	// search types text into the search box, as a user's typing does: one input event.
	search := func(text string) {
		t.Helper()
		tb.click(t, "#filter-text")
		evalJS[bool](t, tb, `(() => { const i = document.getElementById('filter-text'); i.value = `+jsString(text)+`;
		  i.dispatchEvent(new Event('input', {bubbles: true})); return true; })()`)
		tb.waitFor(t, "the hash to keep the search", `(new URLSearchParams(location.hash.slice(1)).get('q') || '') === `+jsString(text))
	}
	search("For context")
	c := evalJS[timelineCount](t, tb, timelineCountJS)
	if c.Shown == 0 || c.Empty || !strings.HasPrefix(c.Count, fmt.Sprint(c.Shown)+" of ") {
		t.Errorf("searching For context: %+v, want matches counted", c)
	}
	if evalJS[int](t, tb, `Array.from(document.querySelectorAll('[data-testid=timeline-row]')).filter(r => r.checkVisibility() && !r.querySelector('.row-summary').textContent.includes('For context')).length`) == 0 {
		t.Errorf("every row found by For context has it in its summary: the search does not look past summaries")
	}
	// The matches are marked where they show (For context shows in no summary), and only they.
	search("Research")
	marks := evalJS[[]string](t, tb, `Array.from(CSS.highlights.get('search') || []).map(r => r.toString())`)
	if len(marks) == 0 {
		t.Errorf("searching Research marks no match")
	}
	for _, m := range marks {
		if !strings.EqualFold(m, "research") {
			t.Errorf("searching Research marks %q", m)
			break
		}
	}

	search("no such words anywhere")
	c = evalJS[timelineCount](t, tb, timelineCountJS)
	if c.Shown != 0 || !c.Empty || !strings.HasPrefix(c.Count, "0 of ") {
		t.Errorf("a search with no match: %+v, want 0 rows and the no-match line", c)
	}
	if txt := evalJS[string](t, tb, `document.querySelector('[data-testid=filter-empty]').textContent`); !strings.Contains(txt, "no such words anywhere") {
		t.Errorf("the no-match line %q does not name the search", txt)
	}

	search("")
	if n := evalJS[int](t, tb, `(CSS.highlights.get('search') || {size: 0}).size`); n != 0 {
		t.Errorf("with no search, %d matches stay marked", n)
	}
	tb.click(t, `#filter-kind input[value=transfer]`)
	tb.click(t, `#filter-kind input[value=tool]`)
	tb.waitFor(t, "the timeline filtered to transfers and tools", `location.hash.includes('kind=tool%2Ctransfer')`)
	c = evalJS[timelineCount](t, tb, timelineCountJS)
	seen := map[string]bool{}
	for _, g := range c.Groups {
		seen[g] = true
	}
	if !seen["transfer"] || !seen["tool"] || len(seen) != 2 {
		t.Errorf("kinds transfer and tool checked: rows of %v shown", seen)
	}
}

// TestFailedTransferAndFirstError: on a run whose transfer eino refused, "failed only" keeps the
// failed rows alone, "First error" inspects the first of them, and the refused transfer's
// inspector shows eino's error.
func TestFailedTransferAndFirstError(t *testing.T) {
	t.Parallel()
	_, _, tb := openFinished(t, "transfer-unknown")

	tb.click(t, "#filter-failed")
	tb.waitFor(t, "only failed rows shown", `location.hash.includes('failed=1')`)
	c := evalJS[timelineCount](t, tb, timelineCountJS)
	if c.Shown == 0 || evalJS[int](t, tb, `Array.from(document.querySelectorAll('[data-testid=timeline-row]')).filter(r => r.checkVisibility() && r.dataset.failed !== 'true').length`) != 0 {
		t.Errorf("failed only: %+v, want the failed rows alone", c)
	}
	first := evalJS[string](t, tb, `document.querySelector('[data-testid=timeline-row][data-failed=true]').dataset.seq`)
	tb.click(t, "#ev-"+evalJS[string](t, tb, `Array.from(document.querySelectorAll('[data-testid=timeline-row][data-failed=true]')).pop().dataset.seq`))
	tb.click(t, "[data-testid=first-error]")
	tb.waitInspected(t, first)

	tb.click(t, `[data-testid=timeline-row][data-kind=transfer].failed`)
	tb.waitFor(t, "the refused transfer's inspector with eino's error", `(() => { const i = document.querySelector('[data-testid=inspection]');
	  return i?.dataset.kind === 'transfer' && i.innerText.includes('not found'); })()`)
}
