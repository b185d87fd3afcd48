package e2e_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/traces"
	"github.com/chromedp/chromedp"
)

// seqArrow is a transfer arrow as the sequence view draws it.
type seqArrow struct {
	Order  int    `json:"order"`
	Mode   string `json:"mode"`
	Seq    int64  `json:"seq"`
	Failed string `json:"failed"`
}

const seqArrowsJS = `Array.from(document.querySelectorAll('[data-testid=sequence] [data-testid=seq-arrow][data-kind=transfer]'))
  .map(a => ({order: Number(a.dataset.order), mode: a.dataset.mode, seq: Number(a.dataset.seq), failed: a.dataset.failed}))`

// transfersOf returns the transfers of tr as the sequence view must number them: in order, from 1.
func transfersOf(tr traces.Trace) []seqArrow {
	var out []seqArrow
	for _, e := range tr.Events {
		if e.Transfer != nil {
			out = append(out, seqArrow{Order: len(out) + 1, Mode: e.Transfer.Mode, Seq: e.Seq, Failed: "false"})
		}
	}
	return out
}

// openSequence opens the Sequence tab of the run page tb shows and waits until it draws n
// transfer arrows.
func openSequence(t *testing.T, tb *tab, n int) {
	t.Helper()
	tb.click(t, "[data-testid=view-sequence]")
	tb.waitFor(t, fmt.Sprintf("the sequence view with %d transfer arrows", n),
		`document.querySelectorAll('[data-testid=sequence] [data-testid=seq-arrow][data-kind=transfer]').length === `+itoa(n))
}

// TestSequenceView: on the supervisor flow and on 8 specialists with 22 transfers, all run on
// real eino agents, the Sequence tab draws a lane per agent and an arrow per transfer numbered
// as the tree's edges, with bars nested in the lanes; clicking an arrow inspects that transfer;
// the tab is remembered on reload.
func TestSequenceView(t *testing.T) {
	t.Parallel()
	b := startBaton(t, agentstest.Specialists(8, 11))
	for _, c := range []struct {
		flow  string
		lanes int
	}{{"supervisor", 3}, {"specialists", 9}} {
		t.Run(c.flow, func(t *testing.T) {
			id := b.startRun(t, c.flow, 0)
			tr := b.waitRunEnded(t, id, waitTimeout)
			want := transfersOf(tr)
			tb := newTab(t, nil)
			tb.open(t, b.base+"/runs/"+id)
			openSequence(t, tb, len(want))
			if evalJS[bool](t, tb, `[...document.querySelectorAll('.legend .lg-link, .legend .lg-bundle')].some(e => e.offsetParent !== null)`) {
				t.Error("the Sequence view's legend shows the tree's parent-child lines and bundles")
			}
			checkWholeRun(t, tb, tr, len(want))
			if got := evalJS[[]seqArrow](t, tb, seqArrowsJS); !slices.Equal(got, want) {
				t.Errorf("transfer arrows %+v, want %+v", got, want)
			}
			// The tree numbers the same transfers the same way.
			tree := evalJS[[]seqArrow](t, tb, `Array.from(document.querySelectorAll('[data-testid=transfer-edge]'))
			  .map(a => ({order: Number(a.dataset.order), mode: a.dataset.mode, seq: Number(a.dataset.seq), failed: a.dataset.failed}))`)
			if !isSubset(tree, want) || len(tree) == 0 {
				t.Errorf("the tree's edges %+v are not among the sequence's arrows %+v", tree, want)
			}
			if n := evalJS[int](t, tb, `document.querySelectorAll('[data-testid=seq-lane]').length`); n != c.lanes {
				t.Errorf("%d lanes, want %d", n, c.lanes)
			}
			// Each model and tool bar lies inside a visit bar of its lane.
			if bad := evalJS[[]string](t, tb, `(() => {
			  const bars = Array.from(document.querySelectorAll('[data-testid=sequence] [data-testid=seq-bar]'));
			  const visits = bars.filter(b => b.dataset.kind === 'agent').map(b => b.getBoundingClientRect());
			  return bars.filter(b => b.dataset.kind !== 'agent').filter(b => { const r = b.getBoundingClientRect();
			    return !visits.some(v => r.left >= v.left - 0.5 && r.right <= v.right + 0.5 && r.top >= v.top && r.bottom <= v.bottom); })
			    .map(b => b.dataset.kind + ' #' + b.dataset.seq); })()`); len(bad) > 0 {
				t.Errorf("bars outside any visit: %v", bad)
			}
			if n := evalJS[int](t, tb, `document.querySelectorAll('[data-testid=sequence] [data-testid=seq-bar][data-kind=model]').length`); n == 0 {
				t.Errorf("no model call bars")
			}
			// A bar's tooltip is written as the pointer comes over it.
			tip := evalJS[string](t, tb, `(() => { const b = document.querySelector('[data-testid=sequence] [data-testid=seq-bar][data-kind=model]');
			  b.dispatchEvent(new PointerEvent('pointerover', {bubbles: true})); return b.querySelector('title')?.textContent || ''; })()`)
			if !strings.Contains(tip, "model call") || !strings.Contains(tip, " ms") {
				t.Errorf("a model bar's tooltip is %q, want its kind and duration", tip)
			}
			pick := want[len(want)/2]
			tb.click(t, fmt.Sprintf(`[data-testid=seq-arrow][data-order="%d"][data-kind=transfer]`, pick.Order))
			tb.waitInspected(t, itoa(int(pick.Seq)))
			if k := evalJS[string](t, tb, `document.querySelector('[data-testid=inspection]').dataset.kind`); k != "transfer" {
				t.Errorf("clicking arrow %d inspected a %s", pick.Order, k)
			}
			tb.open(t, b.base+"/runs/"+id)
			tb.waitFor(t, "the Sequence tab kept on reload", `document.querySelector('[data-testid=view-sequence]').getAttribute('aria-selected') === 'true'`)
		})
	}
}

// TestSequenceLiveAndTravel: a page that watches the specialists' run from its start with the
// Sequence tab open ends with what a page opened afterwards draws, from the live socket's deltas
// alone; a page opened as of an event draws only the transfers up to it, and following the run
// again draws them all.
func TestSequenceLiveAndTravel(t *testing.T) {
	t.Parallel()
	b := startBaton(t, agentstest.Specialists(8, 11))
	tb := newTab(t, nil)
	tb.open(t, b.base+"/")
	evalJS[bool](t, tb, `(localStorage.setItem('baton.view', 'sequence'), true)`)
	id := b.startRun(t, "specialists", 15*time.Millisecond)
	tb.open(t, b.base+"/runs/"+id)
	tr := b.waitRunEnded(t, id, waitTimeout)
	want := transfersOf(tr)
	tb.waitFor(t, "the run's end", `document.body.dataset.status === 'completed'`)
	// Zoomed to fit, the whole run is in view: every transfer is drawn.
	tb.click(t, `[data-zoom=fit]`)
	tb.waitFor(t, "every transfer drawn live", `document.querySelectorAll('[data-testid=sequence] [data-testid=seq-arrow][data-kind=transfer]').length === `+itoa(len(want)))
	live := evalJS[string](t, tb, drawnJS)
	fresh := newTab(t, nil)
	fresh.open(t, b.base+"/")
	evalJS[bool](t, fresh, `(localStorage.setItem('baton.view', 'sequence'), true)`)
	fresh.open(t, b.base+"/runs/"+id)
	fresh.waitFor(t, "the sequence drawn", `document.querySelectorAll('[data-testid=seq-arrow][data-kind=transfer]').length === `+itoa(len(want)))
	if got := evalJS[string](t, fresh, drawnJS); got != live {
		t.Errorf("the live page draws other bars or arrows, or elsewhere, than a fresh page:\nlive  %s\nfresh %s", live, got)
	}

	at := want[2].Seq
	fresh.open(t, fmt.Sprintf("%s/runs/%s?at=%d", b.base, id, at))
	fresh.waitFor(t, "three transfers as of the third", `document.querySelectorAll('[data-testid=seq-arrow][data-kind=transfer]').length === 3`)
	if n := evalJS[int](t, fresh, `document.querySelectorAll('[data-testid=seq-bar].open').length`); n == 0 {
		t.Errorf("as of #%d no bar is open, though the run went on", at)
	}
	fresh.click(t, "[data-testid=follow-head]")
	fresh.waitFor(t, "every transfer again at the head", `document.querySelectorAll('[data-testid=seq-arrow][data-kind=transfer]').length === `+itoa(len(want)))
}

// drawnJS lists what the sequence view draws, each bar and arrow by its kind and event, with
// where it is on the time axis: a page that took a run as live deltas must list what a page
// that loaded it whole lists.
const drawnJS = `Array.from(document.querySelectorAll('[data-testid=sequence] [data-testid=seq-bar], [data-testid=sequence] [data-testid=seq-arrow]'))
  .map(e => { const r = (v) => Math.round(Number(v) * 10) / 10;
    return e.dataset.testid === 'seq-bar'
      ? 'bar ' + e.dataset.kind + ' #' + e.dataset.seq + ' ' + e.dataset.agent + (e.dataset.count ? ' x' + e.dataset.count : '') +
        (e.classList.contains('open') ? ' open' : '') + (e.classList.contains('failed') ? ' failed' : '') + ' @' + r(e.getAttribute('x')) + '+' + r(e.getAttribute('width'))
      : 'arrow ' + e.dataset.kind + e.dataset.order + ' #' + e.dataset.seq + ' ' + e.dataset.mode + ' ' + e.dataset.failed + ' @' + r(e.querySelector('line').getAttribute('x1')); })
  .sort().join('\n')`

// TestSequenceMerges: zoomed out to the whole of a run of 1,000 events in one lane, its 300 tool
// calls, far narrower than a pixel each, are drawn as merged bars that still count every call.
func TestSequenceMerges(t *testing.T) {
	t.Parallel()
	b := startBaton(t, agentstest.LongTurns(300, 10))
	id := b.startRun(t, "long", 0)
	tr := b.waitRunEnded(t, id, waitTimeout)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+id)
	openSequence(t, tb, 0)
	tb.waitFor(t, "the bars drawn", `document.querySelectorAll('[data-testid=seq-bar]').length > 0`)
	if merged := checkWholeRun(t, tb, tr, 0); merged == 0 {
		t.Errorf("zoomed out to the whole run, no bar merges calls")
	}
}

// checkWholeRun zooms the sequence view tb shows out as far as it goes and checks that the whole
// run of tr is then in the panel, every transfer arrow drawn, and that its model and tool call
// bars, merged or not, account for each of the run's calls once; it returns how many bars merge
// calls.
func checkWholeRun(t *testing.T, tb *tab, tr traces.Trace, transfers int) int {
	t.Helper()
	tb.waitFor(t, "the whole run zoomed out", `(() => { const box = document.getElementById('seq-scroll');
	  for (let i = 0; i < 30; i++) { const w = box.scrollWidth; document.querySelector('[data-zoom=out]').click(); if (box.scrollWidth >= w) return true; }
	  return false; })()`)
	got := evalJS[struct {
		Fits      bool `json:"fits"`
		Transfers int  `json:"transfers"`
		Calls     int  `json:"calls"`
		Merged    int  `json:"merged"`
	}](t, tb, `(() => { const box = document.getElementById('seq-scroll');
	  const calls = Array.from(box.querySelectorAll('[data-testid=seq-bar]:not([data-kind=agent])'));
	  return {fits: box.scrollWidth <= box.clientWidth,
	    transfers: box.querySelectorAll('[data-testid=seq-arrow][data-kind=transfer]').length,
	    calls: calls.reduce((n, b) => n + Number(b.dataset.count || 1), 0),
	    merged: calls.filter(b => b.dataset.count).length}; })()`)
	calls := 0
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelStarted || e.Kind == traces.KindToolStarted {
			calls++
		}
	}
	if !got.Fits || got.Transfers != transfers || got.Calls != calls {
		t.Errorf("zoomed out to the whole run: fits %v, %d transfer arrows, bars for %d calls (%d merged bars); want it to fit, %d arrows, %d calls",
			got.Fits, got.Transfers, got.Calls, got.Merged, transfers, calls)
	}
	tb.click(t, `[data-zoom=fit]`)
	return got.Merged
}

// TestSequenceDeltasMatchWhole: the sequence view fed deltas that take each path a live update
// can (a bar or arrow appended, a bar that ends mended by id, a bar and an arrow that go before
// others of their kind, an event before the axis's end, a head with no bar of its own, a new
// lane's group) draws what it draws when given their end state whole.
func TestSequenceDeltasMatchWhole(t *testing.T) {
	t.Parallel()
	_, _, tb := openFinished(t, "supervisor")
	tb.click(t, "[data-testid=view-sequence]")
	got, err := chromedpRun(tb, chromedp.Evaluate[[]string](`(async () => {
	  const lanes = JSON.parse(document.getElementById('seq-data').dataset.json).lanes;
	  const feed = async (full, head, bars, arrows) => {
	    const el = document.createElement('div');
	    el.id = 'seq-data';
	    el.hidden = true;
	    el.dataset.json = JSON.stringify({full, head, now: head * 10, lanes, bars, arrows});
	    document.getElementById('seq-data').replaceWith(el);
	    await new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
	    return `+drawnJS+`;
	  };
	  // [id, lane, kind, name, seq, end, t0, t1, tokens, failed, parent] and
	  // [id, kind, order, from, to, seq, t, mode, failed], at 10 ms an event.
	  const bar = (id, lane, kind, seq, end) => [id, lane, kind, kind + id, seq, end, seq * 10, (end || seq) * 10, 0, false, -1];
	  const arrow = (id, kind, order, seq, failed) => [id, kind, order, 0, 1, seq, seq * 10, kind === 'transfer' ? 'llm' : '', failed];
	  const end = {bars: [bar(0, 0, 'agent', 1, 0), bar(1, 0, 'model', 2, 4), bar(2, 0, 'tool', 5, 12),
	      bar(3, 1, 'agent', 11, 20), bar(4, 0, 'model', 13, 14), bar(5, 0, 'tool', 3, 4), bar(6, 0, 'model', 5, 6)],
	    arrows: [arrow(0, 'transfer', 1, 6, true), arrow(1, 'transfer', 2, 11, false), arrow(2, 'call', 1, 2, false)]};
	  await feed(true, 10, [bar(0, 0, 'agent', 1, 0), end.bars[1], bar(2, 0, 'tool', 5, 0)], [arrow(0, 'transfer', 1, 6, false)]);
	  await feed(false, 14, [end.bars[2], bar(3, 1, 'agent', 11, 0), end.bars[4]], [end.arrows[1]]); // ends, a new lane
	  await feed(false, 16, [end.bars[5]], [end.arrows[0]]);           // #3 is before the axis's end; #16 is the head's alone
	  const live = await feed(false, 20, [end.bars[3], end.bars[6]], [end.arrows[2]]); // both go before others of their kind
	  const whole = await feed(true, 20, end.bars, end.arrows);
	  return [live, whole];
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	live, whole := got[0], got[1]
	if live != whole {
		t.Errorf("fed as deltas the view draws\n%s\nbut given whole\n%s", live, whole)
	}
	if n := strings.Count(whole, "bar "); n != 7 || strings.Count(whole, "arrow ") != 3 {
		t.Errorf("given whole the view draws %d bars and %d arrows, want 7 and 3:\n%s", n, strings.Count(whole, "arrow "), whole)
	}
}
