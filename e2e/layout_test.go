package e2e_test

import (
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// onScreenJS reports whether the element sel selects is drawn whole inside the viewport and is
// what the browser hits at its centre.
const onScreenJS = `((sel) => {
  const el = document.querySelector(sel);
  if (!el || !el.checkVisibility({visibilityProperty: true})) return false;
  const r = el.getBoundingClientRect();
  if (r.width === 0 || r.left < 0 || r.top < 0 || r.right > innerWidth || r.bottom > innerHeight) return false;
  const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return !!at && el.contains(at);
})`

// TestNarrowInspectorDrawer: at 800 px the inspector is a drawer; clicking a row opens it on
// screen, on that event; Esc closes it, and the next Esc clears the filters as before.
func TestNarrowInspectorDrawer(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	id := b.startRun(t, "supervisor", 0)
	b.waitRunEnded(t, id, waitTimeout)
	tb := newTab(t, nil)
	tb.view(t, 800, 900, "light")
	tb.open(t, b.base+"/runs/"+id)
	if evalJS[bool](t, tb, onScreenJS+`('#inspector-panel')`) {
		t.Fatal("the inspector's drawer is on screen before anything was inspected")
	}
	seq := tb.inspect(t, `[data-testid=timeline-row][data-kind="model.started"][data-agent="math_agent"]`)
	tb.waitFor(t, "the inspector's drawer on screen", onScreenJS+`('#inspector-panel') && `+onScreenJS+`('[data-testid=inspection] header')`)
	if got := evalJS[string](t, tb, `document.querySelector('[data-testid=inspection]').dataset.seq`); got != seq {
		t.Fatalf("the drawer inspects #%s, want #%s", got, seq)
	}
	tb.press(t, kb.Escape)
	tb.waitFor(t, "the drawer closed", `!`+onScreenJS+`('#inspector-panel')`)

	// The close button closes it too, and j opens it on the next event.
	tb.press(t, "j")
	tb.waitFor(t, "the drawer open again by j", onScreenJS+`('#inspector-panel')`)
	tb.click(t, "[data-testid=drawer-close]")
	tb.waitFor(t, "the drawer closed by its button", `!`+onScreenJS+`('#inspector-panel')`)
}

// TestSplitters: the splitters between the panels move by keys and by dragging, are remembered
// across a reload, and a double-click puts them back.
func TestSplitters(t *testing.T) {
	t.Parallel()
	b, id, tb := openFinished(t, "supervisor")
	treeWidth := `document.querySelector('.tree-panel').getBoundingClientRect().width`
	before := evalJS[float64](t, tb, treeWidth)
	tb.do(t, "widen the tree by keys", chromedp.Focus(chromedp.ID("split-cols")), chromedp.KeyEvent(kb.ArrowRight+kb.ArrowRight+kb.ArrowRight))
	if got := evalJS[string](t, tb, `document.getElementById('split-cols').getAttribute('aria-valuenow')`); got != "61" {
		t.Fatalf("after three → the column splitter is at %s%%, want 61", got)
	}
	if after := evalJS[float64](t, tb, treeWidth); after < before+30 {
		t.Fatalf("three → widened the tree from %.0f to %.0f px, want more", before, after)
	}
	if sel := evalJS[int](t, tb, `document.querySelectorAll('.row.selected').length`); sel != 0 {
		t.Fatal("the arrow keys on a splitter travelled in time too")
	}

	// Drag the row splitter to 30% of the main area's height.
	pt := evalJS[struct{ X, Y, Target float64 }](t, tb, `(() => {
	  const s = document.getElementById('split-rows').getBoundingClientRect();
	  const m = document.querySelector('.run-main').getBoundingClientRect();
	  return {x: s.left + s.width / 2, y: s.top + s.height / 2, target: m.top + m.height * 0.3};
	})()`)
	tb.do(t, "drag the row splitter",
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, pt.X, pt.Y, chromedp.ButtonType(input.MouseButtonLeft), chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, pt.X, (pt.Y+pt.Target)/2, chromedp.ButtonType(input.MouseButtonLeft)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, pt.X, pt.Target, chromedp.ButtonType(input.MouseButtonLeft)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, pt.X, pt.Target, chromedp.ButtonType(input.MouseButtonLeft), chromedp.ClickCount(1)))
	tb.waitFor(t, "the row splitter at 30%", `document.getElementById('split-rows').getAttribute('aria-valuenow') === '30'`)

	tb.open(t, b.base+"/runs/"+id)
	got := evalJS[[]string](t, tb, `['split-cols', 'split-rows'].map(id => document.getElementById(id).getAttribute('aria-valuenow'))`)
	if got[0] != "61" || got[1] != "30" {
		t.Fatalf("after a reload the splitters are at %v, want [61 30]", got)
	}
	tb.do(t, "double-click the column splitter", chromedp.DoubleClick(chromedp.ID("split-cols")))
	tb.waitFor(t, "the column splitter reset", `document.getElementById('split-cols').getAttribute('aria-valuenow') === '55' && localStorage.getItem('baton.split-cols') === null`)
}
