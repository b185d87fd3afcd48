package e2e_test

import (
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/baton-dev/baton/agents/agentstest"
	"github.com/baton-dev/baton/traces"
)

// pageRows is how many timeline rows a run page opens with (server.pageRows).
const pageRows = 400

// TestBigRunTimeline: the page of a run longer than pageRows events opens with its newest rows
// and a gap; a search finds rows the page had not loaded (the server searches the whole run and
// counts); a jump to an early event (?at=), k at the first loaded row, Home and scrolling up
// load the rows they need.
func TestBigRunTimeline(t *testing.T) {
	t.Parallel()
	b := startBaton(t, agentstest.Long(200))
	id := b.startRun(t, "long", 0)
	tr := b.waitRunEnded(t, id, waitTimeout)
	n := int64(len(tr.Events))
	if n < pageRows+100 {
		t.Fatalf("the long run has %d events: too few to test paging", n)
	}
	var tick3 int64 // tick 3's tool.started: only it and the calls around it hold its argument
	for _, e := range tr.Events {
		if e.Kind == traces.KindToolStarted && e.Tool != nil && e.Tool.Arguments == `{"n":3}` {
			tick3 = e.Seq
			break
		}
	}
	if tick3 == 0 {
		t.Fatal("no tool.started of tick 3 in the trace")
	}
	firstLoaded := n - pageRows + 1
	rowsJS := `document.querySelectorAll('[data-testid=timeline-row]')`
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+id)
	if s := tb.state(t); len(s.Seqs) != pageRows || s.Seqs[0] != firstLoaded || s.Seqs[len(s.Seqs)-1] != n {
		t.Fatalf("the page opened with %d rows (#%v..), want the newest %d: #%d..#%d", len(s.Seqs), s.Seqs[:1], pageRows, firstLoaded, n)
	}
	if got := evalJS[string](t, tb, `document.querySelector('[data-testid=timeline-gap]')?.dataset.before || ''`); got != strconv.FormatInt(firstLoaded, 10) {
		t.Fatalf("the gap before the rows stops before #%s, want #%d", got, firstLoaded)
	}

	// Search: the server finds tick 3's rows, far before the loaded ones, and counts them.
	tb.do(t, "search for tick 3's argument", chromedp.SendKeys(chromedp.ID("filter-text"), `"n":3}`))
	// Settled: tick 3's row shown, only rows that hold the text, and the count says how many.
	shownJS := `Array.from(` + rowsJS + `).filter(r => !r.hidden)`
	tb.waitFor(t, "tick 3's row found by the server", `document.getElementById('ev-`+itoa(int(tick3))+`')?.checkVisibility() && `+
		shownJS+`.every(r => r.dataset.search.includes('"n":3}')) && document.getElementById('filter-count').textContent === `+
		shownJS+`.length + ' of `+strconv.FormatInt(n, 10)+` events'`)
	if shown := evalJS[int](t, tb, shownJS+`.length`); shown < 2 || shown > 6 {
		t.Fatalf("%d rows hold tick 3's argument, want its call, its start and its result", shown)
	}
	tb.press(t, kb.Escape) // out of the field
	tb.press(t, kb.Escape) // the filters cleared: the newest rows again
	tb.waitFor(t, "the newest rows back", rowsJS+`.length === `+itoa(pageRows)+` && !!document.getElementById('ev-`+strconv.FormatInt(n, 10)+`')`)

	// k at the first loaded row loads the row before it.
	tb.inspect(t, "#ev-"+strconv.FormatInt(firstLoaded, 10))
	tb.press(t, "k")
	tb.waitInspected(t, strconv.FormatInt(firstLoaded-1, 10))

	// Home in the timeline: the run's first row.
	tb.press(t, kb.Home)
	tb.waitInspected(t, "1")

	// Scrolling up to the gap above the newest rows loads the rows it stands for.
	tb.open(t, b.base+"/runs/"+id)
	tb.do(t, "scroll the timeline to its top", chromedp.Evaluate[chromedp.Void](`document.getElementById('timeline-rows').scrollTop = 0`))
	tb.waitFor(t, "earlier rows loaded", rowsJS+`.length > `+itoa(pageRows)+` && !!document.getElementById('ev-`+strconv.FormatInt(firstLoaded-1, 10)+`')`)

	// A page opened at an early event loads and inspects its row.
	at := strconv.FormatInt(tick3, 10)
	tb.open(t, b.base+"/runs/"+id+"?at="+at)
	tb.waitInspected(t, at)
	if kind := evalJS[string](t, tb, `document.querySelector('[data-testid=scrub-kind]').textContent`); kind != string(traces.KindToolStarted) {
		t.Fatalf("the scrubber names #%s %q, want tool.started", at, kind)
	}
}

