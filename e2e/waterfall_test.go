package e2e_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/baton-dev/baton/traces"
)

// wfBar is a bar of the Waterfall view as drawn: where, and the times it stands for.
type wfBar struct {
	Seq      int64   `json:"seq"`
	Kind     string  `json:"kind"`
	X        float64 `json:"x"`
	W        float64 `json:"w"`
	T0       float64 `json:"t0"`
	T1       float64 `json:"t1"`
	Critical bool    `json:"critical"`
}

const wfBarsJS = `Array.from(document.querySelectorAll('[data-testid=waterfall] [data-testid=wf-bar]')).map(b => ({
  seq: Number(b.dataset.seq), kind: b.dataset.kind, x: Number(b.getAttribute('x')), w: Number(b.getAttribute('width')),
  t0: Number(b.dataset.t0), t1: Number(b.dataset.t1), critical: b.dataset.critical === 'true'}))`

// openSupervisorWaterfall runs supervisor to its end and opens its Waterfall, once every bar is
// drawn; it returns the tab, each event's time in ms since the run's first (by seq) and the
// number of bars (an agent visit, model call or tool call each).
func openSupervisorWaterfall(t *testing.T) (tb *tab, at map[int64]float64, bars int) {
	t.Helper()
	b := startBaton(t)
	id := b.startRun(t, "supervisor", 40*time.Millisecond)
	tr := b.waitRunEnded(t, id, waitTimeout)
	at = map[int64]float64{}
	for _, e := range tr.Events {
		at[e.Seq] = float64(e.Time.Sub(tr.Events[0].Time).Microseconds()) / 1000
		switch e.Kind {
		case traces.KindAgentStarted, traces.KindModelStarted, traces.KindToolStarted:
			bars++
		}
	}
	tb = newTab(t, nil)
	tb.open(t, b.base+"/runs/"+id)
	tb.click(t, "[data-testid=view-waterfall]")
	tb.waitFor(t, fmt.Sprintf("the waterfall's %d bars", bars),
		`document.querySelectorAll('[data-testid=waterfall] [data-testid=wf-bar]').length === `+itoa(bars))
	return tb, at, bars
}

// TestWaterfallIsLinear: on the supervisor flow run at a pace on real eino agents, the Waterfall
// tab draws a bar for every agent visit, model call and tool call, each starting where its
// event happened and as long as the work took on one linear scale (the events' own times, from
// the trace); the critical path is marked, from the first visit to the last; clicking a bar
// inspects its event, and the selection is marked in the waterfall.
func TestWaterfallIsLinear(t *testing.T) {
	t.Parallel()
	tb, at, _ := openSupervisorWaterfall(t)
	bars := evalJS[[]wfBar](t, tb, wfBarsJS)

	// One scale, fitted from the first bar and the one that ends last; x0 is the run's start.
	first, last := bars[0], bars[0]
	for _, b := range bars {
		if b.T1 > last.T1 {
			last = b
		}
	}
	k := (last.X + last.W - first.X) / (last.T1 - first.T0) // px per ms
	x0 := first.X - first.T0*k
	if k <= 0 || last.T1 < 100 {
		t.Fatalf("scale %v px/ms over %v ms: the paced run should take longer", k, last.T1)
	}
	for _, b := range bars {
		if math.Abs(b.T0-at[b.Seq]) > 0.002 {
			t.Errorf("the %s bar of #%d starts at %v ms, its event at %v ms", b.Kind, b.Seq, b.T0, at[b.Seq])
		}
		if x := x0 + b.T0*k; math.Abs(b.X-x) > 0.5 {
			t.Errorf("the %s bar of #%d is at x %.1f, want %.1f: not proportional to its time", b.Kind, b.Seq, b.X, x)
		}
		if w := math.Max(2, (b.T1-b.T0)*k); math.Abs(b.W-w) > 0.5 {
			t.Errorf("the %s bar of #%d is %.1f px wide, want %.1f for %.1f ms", b.Kind, b.Seq, b.W, w, b.T1-b.T0)
		}
	}
	// The handoffs follow one another: the first visit and the one that ends the run are on the
	// critical path, and so is the last thing the final visit waited for.
	if !first.Critical || !last.Critical {
		t.Errorf("critical path: the first bar %v, the last %v; want both on it", first.Critical, last.Critical)
	}
	if evalJS[bool](t, tb, `getComputedStyle(document.querySelector('[data-testid=wf-bar][data-critical=true]')).strokeWidth === getComputedStyle(document.querySelector('[data-testid=wf-bar][data-critical=false]') || document.body).strokeWidth`) {
		t.Error("the critical path is not drawn otherwise than the rest")
	}

	var model wfBar
	for _, b := range bars {
		if b.Kind == "model" {
			model = b
		}
	}
	tb.click(t, fmt.Sprintf(`[data-testid=waterfall] [data-testid=wf-bar][data-seq="%d"]`, model.Seq))
	tb.waitInspected(t, itoa(int(model.Seq)))
	tb.waitFor(t, "the clicked row marked as the selection",
		fmt.Sprintf(`document.querySelector('[data-testid=waterfall] .wf-row.selected')?.dataset.seq === '%d'`, model.Seq))
}

// wfScale checks that bars lie on one linear scale of the events' times, at (ms by seq), and
// returns it: px per ms, and the x of the run's start.
func wfScale(t *testing.T, bars []wfBar, at map[int64]float64) (k, x0 float64) {
	t.Helper()
	first, last := bars[0], bars[0]
	for _, b := range bars {
		if b.T1 > last.T1 {
			last = b
		}
	}
	k = (last.X + last.W - first.X) / (last.T1 - first.T0)
	x0 = first.X - first.T0*k
	for _, b := range bars {
		if math.Abs(b.T0-at[b.Seq]) > 0.002 {
			t.Errorf("the %s bar of #%d starts at %v ms, its event at %v ms", b.Kind, b.Seq, b.T0, at[b.Seq])
		}
		if x := x0 + b.T0*k; math.Abs(b.X-x) > 0.5 {
			t.Errorf("the %s bar of #%d is at x %.1f, want %.1f: not proportional to its time", b.Kind, b.Seq, b.X, x)
		}
		if w := math.Max(2, (b.T1-b.T0)*k); math.Abs(b.W-w) > 0.5 {
			t.Errorf("the %s bar of #%d is %.1f px wide, want %.1f for %.1f ms", b.Kind, b.Seq, b.W, w, b.T1-b.T0)
		}
	}
	return k, x0
}

// wfZoomJS is the Waterfall's scroller and axis: how far it scrolls, and each tick's x with the
// time its label says.
const wfZoomJS = `(() => {
  const box = document.querySelector('[data-testid=waterfall]');
  const ticks = Array.from(box.querySelectorAll('.wf-axis text')).map(t => {
    const [n, unit] = t.textContent.split(' ');
    return {x: Number(t.previousSibling.getAttribute('x1')), ms: t.textContent === '0' ? 0 : Number(n) * (unit === 's' ? 1000 : 1)};
  });
  return {scrollWidth: box.scrollWidth, clientWidth: box.clientWidth, left: box.scrollLeft, ticks};
})()`

type wfZoom struct {
	ScrollWidth, ClientWidth, Left float64
	Ticks                          []struct{ X, MS float64 }
}

// TestWaterfallZoom: on the supervisor flow run at a pace on real eino agents, the Waterfall's
// + button, the + key and ctrl + wheel zoom in time as the Sequence view's do: each time the bars
// stay proportional to their events' times on the new, larger scale, the axis's ticks say the
// times at their places on it, and the time area scrolls; Fit (and the 0 key) returns to the
// whole run in the panel, as it opened. The Sequence view's keys are the same. A model call's row is named by the model the call named
// (the scripted model reports "scripted"), with its agent in its tooltip.
func TestWaterfallZoom(t *testing.T) {
	t.Parallel()
	tb, at, want := openSupervisorWaterfall(t)
	allBars := `document.querySelectorAll('[data-testid=waterfall] [data-testid=wf-bar]').length === ` + itoa(want)
	k0, _ := wfScale(t, evalJS[[]wfBar](t, tb, wfBarsJS), at)
	if z := evalJS[wfZoom](t, tb, wfZoomJS); z.ScrollWidth > z.ClientWidth+1 {
		t.Fatalf("fitted, the waterfall scrolls: %v px in %v", z.ScrollWidth, z.ClientWidth)
	}

	// scaleIs waits until the bars are drawn at k px per ms, and checks them and the axis there.
	scaleIs := func(what string, k float64) {
		t.Helper()
		tb.waitFor(t, what, fmt.Sprintf(`(() => { const b = Array.from(document.querySelectorAll('[data-testid=waterfall] [data-testid=wf-bar]'))
		  .find(b => b.dataset.t1 - b.dataset.t0 > 50); return b && Math.abs(b.getAttribute('width') / (b.dataset.t1 - b.dataset.t0) - %v) < 0.01 * %v; })()`, k, k))
		tb.waitFor(t, "every bar drawn", allBars)
		got, x0 := wfScale(t, evalJS[[]wfBar](t, tb, wfBarsJS), at)
		if math.Abs(got-k) > 0.01*k {
			t.Errorf("%s: %v px per ms, want %v", what, got, k)
		}
		z := evalJS[wfZoom](t, tb, wfZoomJS)
		if len(z.Ticks) < 2 {
			t.Fatalf("%s: the axis has %d ticks in view", what, len(z.Ticks))
		}
		for _, tick := range z.Ticks {
			if x := x0 + tick.MS*got; math.Abs(tick.X-x) > 1 {
				t.Errorf("%s: the tick of %v ms is at x %.1f, its time at %.1f", what, tick.MS, tick.X, x)
			}
			if tick.X < z.Left || tick.X > z.Left+z.ClientWidth {
				t.Errorf("%s: a tick at x %.1f is out of view (%.1f to %.1f)", what, tick.X, z.Left, z.Left+z.ClientWidth)
			}
		}
	}
	tb.click(t, "[data-testid=wf-zoom-in]")
	scaleIs("the + button zooms in 1.5 times", k0*1.5)
	tb.do(t, "focus the waterfall", chromedp.Focus(chromedp.ID("wf-scroll")))
	tb.press(t, "+")
	scaleIs("the + key zooms in 1.5 times more", k0*2.25)
	if z := evalJS[wfZoom](t, tb, wfZoomJS); z.ScrollWidth < z.ClientWidth*1.5 {
		t.Errorf("zoomed in 2.25 times, the time area is %v px in a view of %v: it should scroll", z.ScrollWidth, z.ClientWidth)
	}
	mid := evalJS[struct{ X, Y float64 }](t, tb, `(() => { const r = document.getElementById('wf-scroll').getBoundingClientRect();
	  return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()`)
	tb.do(t, "ctrl + wheel up over the waterfall", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{
			Type: input.DispatchMouseEventTypeMouseWheel, X: mid.X, Y: mid.Y, DeltaX: 0.001, DeltaY: -100, Modifiers: 2}) // 2: ctrl; a zero deltaX is left out, and refused
		return err
	}))
	scaleIs("ctrl + wheel zooms in 1.25 times", k0*2.25*1.25)
	tb.press(t, "0")
	scaleIs("the 0 key fits the whole run again", k0)
	tb.press(t, "+")
	scaleIs("the + key zooms in again", k0*1.5)
	tb.click(t, "[data-testid=wf-zoom-fit]")
	scaleIs("Fit fits the whole run again", k0)
	if z := evalJS[wfZoom](t, tb, wfZoomJS); z.ScrollWidth > z.ClientWidth+1 || z.Left != 0 {
		t.Errorf("after Fit the waterfall scrolls (%v px in %v, at %v): not the whole run", z.ScrollWidth, z.ClientWidth, z.Left)
	}

	// The Sequence view takes the same keys: + zooms it in, 0 fits it again.
	tb.click(t, "[data-testid=view-sequence]")
	tb.waitFor(t, "the sequence drawn", `document.querySelectorAll('[data-testid=sequence] [data-testid=seq-bar]').length > 0`)
	seqWidth := `document.querySelector('#seq-scroll .seq-canvas').getBoundingClientRect().width`
	before := evalJS[float64](t, tb, seqWidth)
	tb.do(t, "focus the sequence", chromedp.Focus(chromedp.ID("seq-scroll")))
	tb.press(t, "+")
	tb.waitFor(t, "the + key zooms the sequence in", seqWidth+` > `+jsFloat(before*1.3))
	tb.press(t, "0")
	tb.waitFor(t, "the 0 key fits the sequence again", `Math.abs(`+seqWidth+` - `+jsFloat(before)+`) < 1`)
	tb.click(t, "[data-testid=view-waterfall]")

	// At 800 px the panels stack and the page scrolls: both time views still have room for rows.
	tb.view(t, 800, 900, "light")
	for _, v := range []string{"waterfall", "sequence"} {
		tb.click(t, "[data-testid=view-"+v+"]")
		if h := evalJS[float64](t, tb, `document.querySelector('[data-testid=`+v+`]').clientHeight`); h < 300 {
			t.Errorf("at 800 px the %s view is %v px tall: it shows no rows", v, h)
		}
		// The axis's labels neither run into one another nor past the view.
		if bad := evalJS[[]string](t, tb, `(() => { const box = document.querySelector('[data-testid=`+v+`]').getBoundingClientRect(), out = [];
		  const ls = Array.from(document.querySelectorAll('[data-testid=`+v+`] :is(.seq-axis, .wf-axis) text')).map(t => [t.textContent, t.getBoundingClientRect()]).sort((a, b) => a[1].left - b[1].left);
		  ls.forEach(([s, r], i) => { if (r.right > box.right + 0.5) out.push(s + ' cut'); if (i > 0 && r.left < ls[i - 1][1].right + 2) out.push(ls[i - 1][0] + ' and ' + s + ' touch'); });
		  return out; })()`); len(bad) > 0 {
			t.Errorf("at 800 px the %s axis: %v", v, bad)
		}
	}
	tb.click(t, "[data-testid=view-waterfall]")
	tb.view(t, 1280, 800, "light")

	// Its legend is its own: of the tree's, only "failed" (a red outline) applies to its bars.
	if lg := evalJS[[]string](t, tb, `Array.from(document.querySelectorAll('.legend .lg')).filter(l => l.checkVisibility()).map(l => l.textContent)`); !slices.Equal(lg, []string{"failed"}) {
		t.Errorf("the waterfall's legend shows %q, want only failed", lg)
	}

	// Model rows say the model: the scripted model names itself "scripted".
	rows := evalJS[[]string](t, tb, `Array.from(document.querySelectorAll('[data-testid=waterfall] .wf-row.kind-model')).map(r => r.getAttribute('aria-label'))`)
	if len(rows) == 0 {
		t.Fatal("no model rows")
	}
	for _, r := range rows {
		if !strings.HasPrefix(r, "model scripted of ") {
			t.Errorf("a model row is named %q, want the model's name and its agent (model scripted of …)", r)
		}
	}
	if names := evalJS[[]string](t, tb, `Array.from(document.querySelectorAll('[data-testid=waterfall] .wf-names text.wf-call')).map(t => t.textContent)`); !slices.Contains(names, "model scripted") {
		t.Errorf("the names column shows %q, want model rows named \"model scripted\"", names)
	}
}

// labelsInViewJS lists the labels of the time view v (waterfall or sequence) that are drawn
// where the reader cannot read them: under the sticky names column, or past the view's right end.
const labelsInViewJS = `((v) => {
  const box = document.querySelector('[data-testid=' + v + ']'), r = box.getBoundingClientRect();
  const names = box.querySelector(v === 'waterfall' ? '.wf-names' : '.seq-labels').getBoundingClientRect();
  const right = r.left + box.clientWidth, out = [];
  for (const t of box.querySelectorAll(v === 'waterfall' ? '.wf-texts text' : 'text.seq-bar-label')) {
    const b = t.getBoundingClientRect();
    if (b.width === 0) continue; // hidden
    if (b.left < names.right - 0.5 || b.right > right + 0.5) out.push(t.textContent + ' (#' + t.dataset.seq + ') at ' + Math.round(b.left) + '..' + Math.round(b.right));
  }
  return out.length === 0 ? '' : out.join(', ') + ' outside ' + Math.round(names.right) + '..' + Math.round(right);
})`

// scrollUnderNamesJS scrolls the time view v so that its widest bar drawn (a call's, for the
// sequence, whose visits carry no label) starts px (at most a third of it) under the names
// column, or so that its bar that ends first after the column's right edge ends px under it,
// and returns that bar's seq.
const scrollUnderNamesJS = `((v, which, px) => {
  const box = document.querySelector('[data-testid=' + v + ']');
  const names = box.querySelector(v === 'waterfall' ? '.wf-names' : '.seq-labels').getBoundingClientRect();
  let bars = Array.from(box.querySelectorAll(v === 'waterfall' ? '[data-testid=wf-bar]' : '[data-testid=seq-bar]:not([data-kind=agent])'))
    .map(b => [b, b.getBoundingClientRect()]);
  let pick, delta;
  if (which === 'widest') {
    pick = bars.sort((x, y) => y[1].width - x[1].width)[0];
    delta = pick[1].left - (names.right - Math.min(px, pick[1].width / 3));
  } else {
    pick = bars.filter(([, r]) => r.right > names.right + px && r.width < box.clientWidth / 4).sort((x, y) => x[1].right - y[1].right)[0];
    delta = pick[1].right - (names.right - px);
  }
  box.scrollLeft += delta;
  return Number(pick[0].dataset.seq);
})`

// TestBarLabelsStayInView: zoomed in, the Waterfall's and the Sequence's labels on or beside
// bars never slide under the names column, which stays on the left as the time area scrolls: a
// bar that starts under it has its label in its part in view, one that ends under it has none.
func TestBarLabelsStayInView(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	id := b.startRun(t, "supervisor", 40*time.Millisecond)
	b.waitRunEnded(t, id, waitTimeout)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+id)
	tb.view(t, 1280, 800, "light")
	for _, v := range []struct{ view, zoomIn, scroll string }{
		{"waterfall", "[data-testid=wf-zoom-in]", "wf-scroll"},
		{"sequence", "#view-sequence [data-zoom=in]", "seq-scroll"},
	} {
		tb.click(t, "[data-testid=view-"+v.view+"]")
		tb.waitFor(t, "the "+v.view+" drawn", `document.querySelectorAll('[data-testid=`+v.view+`] [data-testid$=-bar]').length > 0`)
		for range 5 {
			tb.click(t, v.zoomIn)
		}
		tb.waitFor(t, "the "+v.view+" zoomed in", `(() => { const b = document.getElementById('`+v.scroll+`'); return b.scrollWidth > 4 * b.clientWidth; })()`)
		for _, c := range []struct {
			which string
			px    int
		}{{"widest", 100}, {"ends", 20}} {
			seq := evalJS[int](t, tb, scrollUnderNamesJS+`('`+v.view+`', '`+c.which+`', `+itoa(c.px)+`)`)
			what := fmt.Sprintf("%s: the bar of #%d (%s) %d px under the names: its labels in view", v.view, seq, c.which, c.px)
			tb.waitFor(t, what, labelsInViewJS+`('`+v.view+`') === ''`)
			if bad := evalJS[string](t, tb, labelsInViewJS+`('`+v.view+`')`); bad != "" {
				t.Errorf("%s: %s", what, bad)
			}
			if c.which == "widest" { // the label is moved into the bar's part in view, not hidden
				tb.waitFor(t, v.view+": the widest bar's label shown in its part in view", fmt.Sprintf(`(() => {
				  const box = document.querySelector('[data-testid=%s]');
				  const l = box.querySelector('text[data-seq="%d"]'), n = box.querySelector('.wf-names, .seq-labels').getBoundingClientRect();
				  if (!l || l.getBoundingClientRect().width === 0) return false;
				  return Math.abs(l.getBoundingClientRect().left - n.right) < 8; })()`, v.view, seq))
			}
		}
	}
}
