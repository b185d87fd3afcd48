package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// legibleJS measures the tree as drawn: the zoom (drawn width over the viewBox's), and the
// smallest rendered text of the SVG in screen pixels (the overview's larger names and badges
// included), with what it says.
const legibleJS = `(() => {
  const svg = document.querySelector('#graph svg');
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  let least = 1e9, which = '';
  for (const t of svg.querySelectorAll('text')) {
    if (t.getBoundingClientRect().width === 0 || !t.textContent.trim()) continue; // drawn text only
    const px = parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a;
    if (px < least) { least = px; which = t.textContent; }
  }
  return {scale, least, which, minZoom: Number(document.getElementById('graph').dataset.minZoom),
    overview: document.getElementById('graph-scroll').classList.contains('overview')};
})()`

type legibility struct {
	Scale, Least, MinZoom float64
	Which                 string
	Overview              bool
}

// importTrace adds tr to b through POST /api/traces and returns its run's id.
func importTrace(t *testing.T, b *baton, tr traces.Trace) string {
	t.Helper()
	data, err := traces.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(b.base+"/api/traces", "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct{ ID string }
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK {
		t.Fatalf("import: %d %v", res.StatusCode, err)
	}
	return out.ID
}

// TestBigTreeZoomPanAndBundles: a run with 8 specialists and 22 transfers, imported, opens with
// its tree too big for the panel at the legible zoom fitted whole, as an overview: no text drawn
// under web.MinFont px, every name whole, the specialists in columns about as wide as the panel, under
// a one-row legend and a header whose figures wrap clear of the controls. The buttons,
// Ctrl+wheel and the keyboard zoom (0 fits, as in the time views; 1 is 1:1); a drag pans without inspecting what it started on; a
// bundle's count expands it into its numbered edges, one of which inspects to the list of the
// bundle's transfers; "Every transfer" draws them all; at 1:1 a minimap shows the whole tree and
// pans it; and axe-core finds nothing.
func TestBigTreeZoomPanAndBundles(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	tr := webtest.Fan(8, 22)
	g := web.NewGraph(tr)
	id := importTrace(t, b, tr)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+id)
	tb.waitVisible(t, "[data-testid=bundle-badge]")
	// checkVisibility says an SVG group hidden by display: none is visible: ask for its box.
	evalJS[bool](t, tb, `(window.drawn = (el) => !!el && el.getBoundingClientRect().width > 0, true)`)

	// The page's head leaves the tree its room: the legend is one row of its own, not a column
	// beside the zoom buttons, and the run's figures wrap rather than run under the controls (at
	// 1000 px, the narrowest wide layout, too).
	legend := evalJS[struct{ Rows, HeadPx float64 }](t, tb, `({
	  rows: new Set(Array.from(document.querySelectorAll('.tree-panel .legend > *')).map(e => Math.round(e.getBoundingClientRect().top))).size,
	  headPx: document.querySelector('.tree-panel .panel-head').getBoundingClientRect().height})`)
	if legend.Rows != 1 || legend.HeadPx > 90 {
		t.Errorf("the tree's legend takes %.0f rows, its panel head %.0f px", legend.Rows, legend.HeadPx)
	}
	const figuresUnderControls = `(() => {
	  const s = document.querySelector('[data-testid=run-stats]').getBoundingClientRect();
	  const c = document.querySelector('.top .controls').getBoundingClientRect();
	  return s.right > c.left && s.bottom > c.top && s.top < c.bottom; })()`
	for _, w := range []int64{viewWidth, 1000} {
		tb.view(t, w, viewHeight, "light")
		if evalJS[bool](t, tb, figuresUnderControls) {
			t.Errorf("at %d px the run's figures run under the controls", w)
		}
	}
	tb.view(t, viewWidth, viewHeight, "light")

	l := evalJS[legibility](t, tb, legibleJS)
	if l.Scale >= l.MinZoom || !l.Overview || l.Least < web.MinFont-0.01 {
		t.Errorf("opened at zoom %.3f (legible from %.3f, overview %v), smallest text %.1fpx (%q)", l.Scale, l.MinZoom, l.Overview, l.Least, l.Which)
	}
	if got := evalJS[inside](t, tb, insidePanelJS+`(11)`); len(got.Out) > 0 {
		t.Errorf("opened with %v outside the panel", got.Out)
	}
	// The specialists are listed in columns under the supervisor: at the legible zoom the tree
	// is about as wide as the panel (1.2 panels at 1280x800; one column per specialist made it
	// 2.6).
	wide := evalJS[struct{ Drawn, Panel float64 }](t, tb, `({drawn: document.querySelector('#graph svg').viewBox.baseVal.width * Number(document.getElementById('graph').dataset.minZoom),
	  panel: document.getElementById('graph-scroll').clientWidth})`)
	if wide.Drawn > 1.25*wide.Panel {
		t.Errorf("at the legible zoom the tree is %.0f px wide in a panel of %.0f", wide.Drawn, wide.Panel)
	}
	names := evalJS[[]string](t, tb, `Array.from(document.querySelectorAll('#graph .node')).filter(n =>
	  n.querySelector('.node-name').textContent !== n.dataset.agent || !n.getAttribute('aria-label').startsWith(n.dataset.agent) ||
	  !n.querySelector('title').textContent.startsWith(n.dataset.agent)).map(n => n.dataset.agent)`)
	if len(names) > 0 {
		t.Errorf("names not drawn whole, or missing from the title or accessible name: %v", names)
	}

	tb.checkAxe(t, "8 specialists, transfers bundled")

	zoom := func() float64 { return evalJS[legibility](t, tb, legibleJS).Scale }
	z0 := zoom()
	in := `document.getElementById('zoom-level').textContent === '` + itoa(int(math.Round(l.Scale*1.25*100))) + `%'`
	tb.click(t, "#zoom-in")
	tb.waitFor(t, "zoomed in by the button", in)
	if z := zoom(); math.Abs(z-z0*1.25) > 0.01 {
		t.Errorf("zoom %.3f after +, want %.3f", z, z0*1.25)
	}
	box := evalJS[struct{ X, Y float64 }](t, tb, `(() => { const r = document.getElementById('graph-scroll').getBoundingClientRect();
	  return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()`)
	tb.do(t, "Ctrl+wheel out over the tree", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		return mouse(ctx, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseWheel, X: box.X, Y: box.Y, DeltaX: 1e-6, DeltaY: 300, Modifiers: 2}) // Ctrl; a zero DeltaX would be left out, which Chromium refuses
	}))
	tb.waitFor(t, "zoomed out by the wheel", `Number(document.getElementById('graph').dataset.zoom) < 1.0`)
	tb.click(t, "#zoom-fit")
	tb.waitFor(t, "fitted again, with no minimap", `Math.abs(Number(document.getElementById('graph').dataset.zoom) - `+jsFloat(l.Scale)+`) < 0.002 && !document.getElementById('minimap').checkVisibility()`)
	tb.do(t, "focus the tree", chromedp.Focus(chromedp.ID("graph-scroll")))
	tb.press(t, "+")
	tb.waitFor(t, "zoomed in by the key", in)
	// 0 fits, as it does in the time views; 1 shows the tree 1:1.
	tb.press(t, "0")
	tb.waitFor(t, "fitted again by the 0 key", `Math.abs(Number(document.getElementById('graph').dataset.zoom) - `+jsFloat(l.Scale)+`) < 0.002`)
	// A key that scrolls moves the tree by the reader's hand: no fit is left to settle.
	tb.press(t, kb.ArrowDown)
	tb.waitFor(t, "no fit left once the reader moved the tree", `!('fitFor' in document.getElementById('graph-scroll').dataset)`)
	tb.press(t, "+")
	tb.waitFor(t, "zoomed in by the key again", in)
	tb.press(t, "1")
	tb.waitFor(t, "reset to 1:1 by the 1 key", `document.getElementById('zoom-level').textContent === '100%'`)
	// At 1:1 the tree is larger than the panel: the minimap shows every agent and the part in
	// view; a click at its far corner brings that corner into view.
	tb.waitFor(t, "the minimap shown with every agent", `document.getElementById('minimap').checkVisibility() && document.querySelectorAll('#minimap .mini-node').length === `+itoa(len(g.Nodes))+
		` && !!document.querySelector('#minimap .mini-view')`)
	corner := evalJS[struct{ X, Y float64 }](t, tb, `(() => { const r = document.getElementById('minimap').getBoundingClientRect(); return {x: r.right - 3, y: r.bottom - 3}; })()`)
	tb.do(t, "click the minimap's far corner", chromedp.MouseClickXY(corner.X, corner.Y))
	tb.waitFor(t, "the tree's far corner in view", `(() => { const b = document.getElementById('graph-scroll');
	  return b.scrollLeft + b.clientWidth >= b.scrollWidth - 2 && b.scrollTop + b.clientHeight >= b.scrollHeight - 2; })()`)
	tb.press(t, "1")

	// Drag from the supervisor's box to the right: the tree pans left by as much, and the
	// click that ends the drag summarises nothing.
	from := evalJS[struct{ X, Y, Left float64 }](t, tb, `(() => { const r = document.querySelector('[data-testid=node-supervisor] .node-box').getBoundingClientRect();
	  return {x: r.left + r.width / 2, y: r.top + r.height / 2, left: document.getElementById('graph-scroll').scrollLeft}; })()`)
	tb.do(t, "drag the tree", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if err := mouse(ctx, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMousePressed, X: from.X, Y: from.Y, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1}); err != nil {
			return err
		}
		for _, dx := range []float64{10, 60, 120} {
			if err := mouse(ctx, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: from.X + dx, Y: from.Y, Button: input.MouseButtonLeft, Buttons: 1}); err != nil {
				return err
			}
		}
		return mouse(ctx, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseReleased, X: from.X + 120, Y: from.Y, Button: input.MouseButtonLeft, ClickCount: 1})
	}))
	if left := evalJS[float64](t, tb, `document.getElementById('graph-scroll').scrollLeft`); math.Abs(from.Left-120-left) > 2 {
		t.Errorf("scrolled to %.0f after a 120px drag from %.0f", left, from.Left)
	}
	if evalJS[bool](t, tb, `!!document.querySelector('[data-testid=agent-summary]')`) {
		t.Errorf("the drag summarised the agent it started on")
	}

	// The bundle to network_specialist: ×4, expanded into its three newest numbered edges.
	var bundle web.TransferBundle
	for _, x := range g.Bundles {
		if x.From == "supervisor" {
			bundle = x
		}
	}
	key := jsString(bundle.From + "→" + bundle.To)
	badge := `[data-testid=bundle-badge][data-bundle=` + key + `]`
	if got := evalJS[string](t, tb, `document.querySelector('`+badge+`').textContent.trim()`); got != "×4" {
		t.Errorf("the bundle's badge says %q, want ×4", got)
	}
	// The bundle, reached by keyboard, inspects its newest transfer, which lists them all.
	evalJS[bool](t, tb, `(document.querySelector('[data-testid=transfer-bundle][data-bundle=`+key+`]').focus(), true)`)
	tb.press(t, kb.Enter)
	tb.waitFor(t, "the bundle's newest transfer inspected, listing them all", inspectedJS+` === '`+strconv.FormatInt(bundle.Seq, 10)+`'`+
		` && document.querySelectorAll('[data-testid=pair-transfers] .seq-link').length === `+itoa(bundle.Count))
	edgeSel := `[data-testid=transfer-edge][data-order="` + itoa(bundle.Orders[0]) + `"]`
	if evalJS[bool](t, tb, `drawn(document.querySelector('`+edgeSel+`'))`) {
		t.Errorf("a bundled edge is drawn before its bundle is expanded")
	}
	tb.click(t, badge)
	tb.waitFor(t, "the bundle expanded", `drawn(document.querySelector('`+edgeSel+`'))`)
	shown := evalJS[[]int](t, tb, `Array.from(document.querySelectorAll('[data-testid=transfer-edge][data-bundle=`+key+`]')).filter(e => drawn(e)).map(e => Number(e.dataset.order))`)
	if len(shown) != len(bundle.Orders) || evalJS[bool](t, tb, `drawn(document.querySelector('`+badge+`'))`) {
		t.Errorf("expanded, the bundle shows edges %v (want %v) and its badge is visible: %v", shown, bundle.Orders, evalJS[bool](t, tb, `drawn(document.querySelector('`+badge+`'))`))
	}
	// Its oldest drawn edge's number, clicked, inspects that transfer, which lists them all too.
	var oldest int64
	for _, e := range g.Transfers {
		if e.Order == bundle.Orders[0] {
			oldest = e.Seq
		}
	}
	tb.click(t, `.transfer-badge[data-seq="`+strconv.FormatInt(oldest, 10)+`"] text:not(.earlier)`) // its number: the group also holds the far "+1"
	tb.waitFor(t, "that transfer's inspector listing its bundle", inspectedJS+` === '`+strconv.FormatInt(oldest, 10)+`'`+
		` && document.querySelectorAll('[data-testid=pair-transfers] .seq-link').length === `+itoa(bundle.Count))

	tb.click(t, "#expand-transfers")
	tb.waitFor(t, "every drawn transfer shown", `Array.from(document.querySelectorAll('[data-testid=transfer-edge]')).filter(e => drawn(e)).length === `+itoa(len(g.Transfers))+
		` && !drawn(document.querySelector('[data-testid=transfer-bundle]'))`)
	tb.checkAxe(t, "8 specialists, every transfer shown")
}

// mouse dispatches one mouse event to the tab of ctx.
func mouse(ctx context.Context, p input.DispatchMouseEventParams) error {
	_, err := chromedp.Call(ctx, input.DispatchMouseEvent, p)
	return err
}

func jsFloat(f float64) string { b, _ := json.Marshal(f); return string(b) }
