package e2e_test

import (
	"fmt"
	"math"
	"testing"
	"time"

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

// TestWaterfallIsLinear: on the supervisor flow run at a pace on real eino agents, the Waterfall
// tab draws a bar for every agent visit, model call and tool call, each starting where its
// event happened and as long as the work took on one linear scale (the events' own times, from
// the trace); the critical path is marked, from the first visit to the last; clicking a bar
// inspects its event, and the selection is marked in the waterfall.
func TestWaterfallIsLinear(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	id := b.startRun(t, "supervisor", 40*time.Millisecond)
	tr := b.waitRunEnded(t, id, waitTimeout)
	at := map[int64]float64{} // ms since the run's first event, by seq
	want := 0
	for _, e := range tr.Events {
		at[e.Seq] = float64(e.Time.Sub(tr.Events[0].Time).Microseconds()) / 1000
		switch e.Kind {
		case traces.KindAgentStarted, traces.KindModelStarted, traces.KindToolStarted:
			want++
		}
	}
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+id)
	tb.click(t, "[data-testid=view-waterfall]")
	tb.waitFor(t, fmt.Sprintf("the waterfall's %d bars", want),
		`document.querySelectorAll('[data-testid=waterfall] [data-testid=wf-bar]').length === `+itoa(want))
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
