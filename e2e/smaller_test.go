package e2e_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestPageDetails: on a finished supervisor run, the first Tab stops on a skip link shown on
// screen, whose next Tab is in the content, past the header; with an older transfer selected, the
// newest is drawn as the others are, so that one edge looks selected; timeline names and the
// inspector's run path are cut to one line with "…", the path whole in its title; axe-core finds
// nothing, and leaves nothing of the legend or the zoom buttons (the tree's, the Sequence's, the
// Waterfall's) for review.
func TestPageDetails(t *testing.T) {
	t.Parallel()
	_, _, tb := openFinished(t, "supervisor")
	tb.press(t, kb.Tab)
	tb.waitFor(t, "the skip link focused on screen", `document.activeElement.dataset.testid === 'skip-link' && `+onScreenJS+`('[data-testid=skip-link]')`)
	tb.press(t, kb.Enter)
	tb.press(t, kb.Tab)
	tb.waitFor(t, "the next Tab in the content, past the header", `!!document.activeElement.closest('#content')`)

	stroke := `((sel) => getComputedStyle(document.querySelector(sel + ' .transfer-line')).stroke)`
	plain := evalJS[string](t, tb, stroke+`('[data-testid=transfer-edge][data-order="2"]')`)
	if evalJS[string](t, tb, stroke+`('[data-testid=transfer-edge][data-current=true]')`) == plain {
		t.Fatalf("the newest transfer is not drawn apart before anything is selected")
	}
	tb.click(t, `.transfer-badge[data-seq="`+evalJS[string](t, tb, `document.querySelector('[data-testid=transfer-edge][data-order="1"]').dataset.seq`)+`"]`)
	tb.waitFor(t, "transfer 1 selected", `!!document.querySelector('[data-testid=transfer-edge][data-order="1"].selected')`)
	if got := evalJS[string](t, tb, stroke+`('[data-testid=transfer-edge][data-current=true]')`); got != plain {
		t.Errorf("with transfer 1 selected the newest is drawn %s, the others %s", got, plain)
	}
	tb.inspect(t, `[data-testid=timeline-row][data-kind="model.started"][data-agent="math_agent"]`)
	tb.waitFor(t, "math_agent's model call inspected, with its run path", `!!document.querySelector('[data-testid=inspection] [data-testid=run-path]')`)
	path := evalJS[struct{ Wrap, Cut, Title string }](t, tb, `(() => { const p = document.querySelector('[data-testid=run-path]'), s = getComputedStyle(p);
	  return {wrap: s.whiteSpace, cut: s.textOverflow, title: p.title}; })()`)
	if path.Wrap != "nowrap" || path.Cut != "ellipsis" || len(path.Title) < len("eino run path") {
		t.Errorf("the run path: white-space %s, text-overflow %s, title %q", path.Wrap, path.Cut, path.Title)
	}
	if cut := evalJS[string](t, tb, `getComputedStyle(document.querySelector('.row-agent .chip-text')).textOverflow`); cut != "ellipsis" {
		t.Errorf("a timeline name is cut with %q", cut)
	}

	// axe-core: no violation, and nothing left for review on the legend or the zoom buttons (the
	// tree's, the Sequence's and the Waterfall's), a button's name matching its visible text too.
	for _, view := range []string{"tree", "sequence", "waterfall"} {
		tb.click(t, "[data-testid=view-"+view+"]")
		tb.waitFor(t, "the "+view+" view shown", `document.querySelector('[data-testid=view-`+view+`]').getAttribute('aria-selected') === 'true'`)
		tb.checkAxe(t, "a finished supervisor run, "+view+" view")
		review, err := chromedpRun(tb, chromedp.Evaluate[[]string](`axe.run(document, {rules: {'label-content-name-mismatch': {enabled: true}}}).then(r => r.incomplete.flatMap(i =>
		  i.nodes.map(n => i.id + ' ' + n.target.join(' '))).filter(s => /legend|zoom/.test(s)))`, chromedp.EvalAwaitPromise))
		if err != nil || len(review) > 0 {
			t.Errorf("%s view: axe-core leaves for review: %v (%v)", view, review, err)
		}
	}
}
