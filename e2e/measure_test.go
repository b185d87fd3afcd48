package e2e_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/traces"
)

// The measurement tests log numbers and assert only correctness; `go test -run TestMeasure -v
// ./e2e/` reproduces them. They do not call t.Parallel, so they run before the other tests
// start and have the machine to themselves.

// TestMeasureLatency measures how long after the server records an event its timeline row is
// in the page (DOM insertion, and the next animation frame after it), for runs followed live at
// a demo pace. Both clocks are the machine's wall clock.
func TestMeasureLatency(t *testing.T) {
	supervisor, supervisorGate := gated(t, "supervisor")
	agenttool, agenttoolGate := gated(t, "agenttool")
	b := startBaton(t, supervisor, agenttool)
	gates := map[string]*agentstest.Gate{"supervisor": supervisorGate, "agenttool": agenttoolGate}
	tb := newTab(t, nil)
	tb.do(t, "note websocket arrivals", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: arrivalsJS})
		return err
	}))
	var dom, frame, arrival, handling []float64
	catchUp := 0
	byKind := map[traces.Kind][]float64{}
	for _, flow := range []string{"supervisor", "agenttool"} {
		id := b.startRun(t, flow, 150*time.Millisecond)
		tb.open(t, b.base+"/runs/"+id)
		tb.startRecording(t)
		gates[flow].Open() // the run waited before its first reply until the page was ready
		tb.waitStatus(t, "completed")
		rec := tb.recording(t)
		arrivals := evalJS[map[string]float64](t, tb, `window.__e2eArrivals`)
		final := tb.state(t)
		tr := b.trace(t, id)
		if !contiguous(final.Seqs, len(tr.Events)) {
			t.Fatalf("%s: rows %v, want 1..%d", flow, final.Seqs, len(tr.Events))
		}
		for _, e := range tr.Events {
			key := strconv.FormatInt(e.Seq, 10)
			at, ok := rec.DOM[key]
			if slices.Contains(rec.Initial, e.Seq) {
				continue // rendered with the page, not live
			}
			if !ok {
				t.Fatalf("%s: row #%d is in the page, but the recorder never saw it added", flow, e.Seq)
			}
			recorded := float64(e.Time.UnixNano()) / 1e6
			if recorded < arrivals["open"] {
				catchUp++ // recorded while the page loaded: it came with the socket's first message
				continue
			}
			dom = append(dom, at-recorded)
			if arr, ok := firstArrival(arrivals, e.Seq); ok {
				arrival = append(arrival, arr-recorded)
				handling = append(handling, at-arr)
			}
			byKind[e.Kind] = append(byKind[e.Kind], at-recorded)
			if f, ok := rec.Frame[key]; ok {
				frame = append(frame, f-recorded)
			}
		}
	}
	if len(dom) < 60 {
		t.Fatalf("only %d rows arrived live; the page loaded too late to measure", len(dom))
	}
	t.Logf("events recorded after the page's live socket opened (%d more were recorded while it loaded):", catchUp)
	t.Logf("event recorded -> row in the DOM: %s", summarize(dom))
	t.Logf("event recorded -> next frame:     %s", summarize(frame))
	t.Logf("of which: recorded -> live message in the page %s; message -> row in the DOM %s", summarize(arrival), summarize(handling))
	for _, k := range slices.Sorted(maps.Keys(byKind)) {
		t.Logf("  %-18s %s", k, summarize(byKind[k]))
	}
}

// arrivalsJS wraps WebSocket so that the page notes, per live message, when it arrived
// (window.__e2eArrivals[seq] = Date.now()), before app.js handles it, and when the socket opened
// (window.__e2eArrivals.open).
const arrivalsJS = `(() => {
  const Native = window.WebSocket;
  window.__e2eArrivals = {};
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('open', () => { window.__e2eArrivals.open = Date.now(); });
      this.addEventListener('message', (ev) => {
        const now = Date.now();
        try { const m = JSON.parse(ev.data); if (typeof m.seq === 'number' && !(m.seq in window.__e2eArrivals)) window.__e2eArrivals[m.seq] = now; } catch (e) {}
      });
    }
  };
})()`

// firstArrival returns when the first live message that covers event seq arrived.
func firstArrival(arrivals map[string]float64, seq int64) (float64, bool) {
	best, found := 0.0, int64(0)
	for k, at := range arrivals {
		s, err := strconv.ParseInt(k, 10, 64)
		if err != nil || s < seq { // "open", or an earlier message
			continue
		}
		if found == 0 || s < found {
			best, found = at, s
		}
	}
	return best, found != 0
}

// TestMeasureLoad measures the run page of the longest run, agentstest.Long(1000) (thousands of
// events): loading it once the run is over, and following it live at zero pace.
func TestMeasureLoad(t *testing.T) {
	b := startBaton(t, agentstest.Long(1000))
	tb := newTab(t, nil)

	// Followed live: the page opens as the run starts and must end with every row once.
	start := time.Now()
	id := b.startRun(t, "long", 0)
	tb.open(t, b.base+"/runs/"+id)
	opened := time.Since(start)
	tb.startRecording(t)
	tb.waitForWithin(t, "the live page to show the end of the run", `document.querySelector('[data-testid=run-status]')?.dataset.status === 'completed'`, 90*time.Second)
	shown := time.Since(start)
	rec := tb.recording(t)
	evs, traceSize := b.eventTimes(t, id)
	n := len(evs)
	// The page opened with the run's newest rows (at most pageRows), then every later one once.
	final := tb.state(t)
	if len(final.Seqs) < min(n, pageRows) || !slices.Equal(final.Seqs, span64(final.Seqs[0], int64(n))) {
		t.Fatalf("live page: %d rows from #%v, want #1..#%d once each from the newest %d at its opening", len(final.Seqs), final.Seqs[:min(1, len(final.Seqs))], n, pageRows)
	}
	ran := evs[n-1].Time.Sub(evs[0].Time)
	lag := "(the last row came with the page)"
	if at, ok := rec.DOM[strconv.Itoa(n)]; ok {
		lag = fmt.Sprintf("%.0f ms after run.finished", at-float64(evs[n-1].Time.UnixNano())/1e6)
	}
	t.Logf("Long(1000) followed live: %d events in %s; page loaded %s after the POST, showed completed after %s; last row %s; trace JSON %d bytes",
		n, ran.Round(time.Millisecond), opened.Round(time.Millisecond), shown.Round(time.Millisecond), lag, traceSize)

	// Loaded after the end: the newest rows are server-rendered.
	size := htmlSize(t, b.base+"/runs/"+id)
	var totals []float64
	for i := range 3 {
		t0 := time.Now()
		tb.do(t, "navigate", chromedp.Navigate(b.base+"/runs/"+id+"?load="+strconv.Itoa(i)))
		tb.waitFor(t, "the last row", `!!document.getElementById('ev-`+strconv.Itoa(n)+`') && document.readyState === 'complete'`)
		total := float64(time.Since(t0).Microseconds()) / 1000
		totals = append(totals, total)
		nav := evalJS[navTiming](t, tb, `performance.getEntriesByType('navigation')[0].toJSON()`)
		t.Logf("load %d: %.0f ms until the last row is present; navigation timing: first byte %.0f ms, last byte %.0f ms, parsed %.0f ms, DOMContentLoaded (app.js run) %.0f ms, load %.0f ms; HTML %d bytes (%d over the wire)",
			i+1, total, nav.ResponseStart, nav.ResponseEnd, nav.DOMInteractive, nav.DOMContentLoadedEventEnd, nav.LoadEventEnd, nav.DecodedBodySize, nav.TransferSize)
	}
	if s := tb.state(t); !slices.Equal(s.Seqs, span64(int64(n-pageRows+1), int64(n))) {
		t.Errorf("loaded page: %d rows, want its newest %d", len(s.Seqs), pageRows)
	}
	t.Logf("run page of Long(1000), %d events: HTML %d bytes (%.1f KiB per 100 events); load until the last row: %s",
		n, size, float64(size)/1024/float64(n)*100, summarize(totals))

	// A search over every row's whole content, by the server since the page holds only the
	// newest rows: from the input event until the count is shown.
	var searches []float64
	for i := range 6 {
		q := []string{"tick", "no such text"}[i%2]
		took, err := chromedpRun(tb, chromedp.Evaluate[float64](`new Promise((done) => {
		  const el = document.getElementById('filter-text'), count = document.getElementById('filter-count');
		  const t0 = performance.now(); el.value = `+jsString(q)+`; el.dispatchEvent(new Event('input', {bubbles: true}));
		  const look = () => / of \d+ events$/.test(count.textContent) &&
		    count.textContent.startsWith('0 ') === `+strconv.FormatBool(i%2 == 1)+` ? done(performance.now() - t0) : requestAnimationFrame(look);
		  look();
		})`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		searches = append(searches, took)
	}
	t.Logf("searching the whole content of %d rows (a word in many / in none, alternately), by the server: %s", n, summarize(searches))
}

// eventTimes returns the seq and time of every event of run id, read straight from the trace
// JSON (traces.Unmarshal checks every field, which takes seconds for Long(1000)'s 18 MB under
// -race), and the JSON's size.
func (b *baton) eventTimes(t *testing.T, id string) ([]eventTime, int) {
	t.Helper()
	data := b.traceJSON(t, id)
	var doc struct{ Events []eventTime }
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.Events) == 0 {
		t.Fatalf("trace of %s: %v (%d events)", id, err, len(doc.Events))
	}
	return doc.Events, len(data)
}

type eventTime struct {
	Seq  int64
	Time time.Time
}

// navTiming is the part of a PerformanceNavigationTiming entry the load test reports.
type navTiming struct {
	ResponseStart            float64 `json:"responseStart"`
	ResponseEnd              float64 `json:"responseEnd"`
	DOMInteractive           float64 `json:"domInteractive"`
	DOMContentLoadedEventEnd float64 `json:"domContentLoadedEventEnd"`
	LoadEventEnd             float64 `json:"loadEventEnd"`
	DecodedBodySize          int64   `json:"decodedBodySize"`
	TransferSize             int64   `json:"transferSize"`
}

// htmlSize returns the size of the page at url.
func htmlSize(t *testing.T, url string) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
	return len(body)
}

// summarize returns the median, p95 and max of ms, in milliseconds.
func summarize(ms []float64) string {
	if len(ms) == 0 {
		return "no samples"
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	q := func(p float64) float64 { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return fmt.Sprintf("median %.1f ms, p95 %.1f ms, max %.1f ms (n=%d)", q(0.5), q(0.95), s[len(s)-1], len(s))
}

// seqTicks is the tick calls of TestMeasureSequence's run: 1,000 (3,300 events) in the suite,
// 3,000 (9,900 events) for the README's figure.
var seqTicks = flag.Int("seqticks", 1000, "tick calls of TestMeasureSequence's run (3000: about 10,000 events)")

// TestMeasureSequence measures the Sequence view of a long run (agentstest.LongTurns(n, 10),
// -seqticks n): the time each frame's redraw takes while the view scrolls by half a screen at a
// time (all of them, and those that drew the SVG again), zoomed in, out, and out to the whole
// run, and how many SVG elements it keeps (only those in view, with half a screen either side).
func TestMeasureSequence(t *testing.T) {
	b := startBaton(t, agentstest.LongTurns(*seqTicks, 10))
	id := b.startRun(t, "long", 0)
	tr := b.waitRunEnded(t, id, 90*time.Second)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/")
	evalJS[bool](t, tb, `(localStorage.setItem('baton.view', 'sequence'), true)`)
	// The page of a long run takes its time to load on a loaded machine: allow it more.
	ctx, cancel := context.WithTimeout(tb.ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(b.base+"/runs/"+id)); err != nil {
		t.Fatalf("load the run page: %v", err)
	}
	tb.waitFor(t, "the sequence drawn", `document.querySelectorAll('[data-testid=seq-bar]').length > 0`)
	// Each redraw's cost: from its frame's start to a frame callback queued after it.
	const scrollJS = `(async () => {
	  const box = document.getElementById('seq-scroll');
	  const costs = [];
	  box.scrollLeft = 0;
	  // A view with nothing to scroll redraws on a resize instead.
	  const still = box.scrollWidth <= box.clientWidth;
	  const rebuilt = []; // the costs of the redraws that drew the SVG again (a scroll within what is drawn need not)
	  for (let i = 0; i < 30; i++) {
	    const layer = box.querySelector('svg g');
	    const done = new Promise((res) => still
	      ? (dispatchEvent(new Event('resize')), requestAnimationFrame((ts) => res(performance.now() - ts)))
	      : box.addEventListener('scroll', () => requestAnimationFrame((ts) => res(performance.now() - ts)), {once: true}));
	    box.scrollLeft += box.clientWidth / 2;
	    costs.push(await done);
	    if (box.querySelector('svg g') !== layer) rebuilt.push(costs[costs.length - 1]);
	    if (box.scrollLeft + box.clientWidth >= box.scrollWidth - 2) box.scrollLeft = 0;
	  }
	  return {costs, rebuilt, nodes: box.querySelectorAll('svg *').length, width: box.scrollWidth};
	})()`
	type result struct {
		Costs   []float64 `json:"costs"`
		Rebuilt []float64 `json:"rebuilt"`
		Nodes   int       `json:"nodes"`
		Width   int       `json:"width"`
	}
	// In: 10 px per event; out: 2 px (Fit's floor); whole: zoomed out until the run stops
	// shrinking, the whole run in view.
	for _, z := range []string{"in", "out", "whole"} {
		if z == "whole" {
			tb.waitFor(t, "the whole run zoomed out", `(() => { const box = document.getElementById('seq-scroll');
			  for (let i = 0; i < 20; i++) { const w = box.scrollWidth; document.querySelector('[data-zoom=out]').click(); if (box.scrollWidth >= w) return true; }
			  return false; })()`)
		} else {
			for range 4 {
				tb.click(t, `[data-zoom=`+z+`]`)
			}
		}
		r, err := chromedpRun(tb, chromedp.Evaluate[result](scrollJS, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("sequence of %d events, zoomed %s (%d px wide): a frame while scrolling %s; of which drew again: %s; %d SVG elements kept",
			len(tr.Events), z, r.Width, summarize(r.Costs), summarize(r.Rebuilt), r.Nodes)
	}
	tb.click(t, `[data-zoom=fit]`)
	for _, where := range []string{"head", "start"} {
		r, err := chromedpRun(tb, chromedp.Evaluate[deltaCosts](seqDeltaJS(where, 40), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("sequence of %d events, a live delta with the view at its %s: taken %s; with its frame %s; drew %d of %d",
			len(tr.Events), where, summarize(r.Take), summarize(r.Total), r.Drew, len(r.Total))
	}
}

// deltaCosts is what seqDeltaJS measures: for each delta, the time to take it in (from the
// fragment landing to the end of the page's reactions to it) and that plus the view's frame
// callback that shows it.
type deltaCosts struct {
	Take  []float64 `json:"take"`
	Total []float64 `json:"total"`
	Drew  int       `json:"drew"` // how many deltas drew the SVG again
}

// seqDeltaJS feeds the sequence view n live #seq-data deltas shaped as the live socket sends a
// run's tool calls (one opens a bar, the next closes it), after the run it shows, with the view
// at the run's head (following) or at its start, and measures each.
func seqDeltaJS(where string, n int) string {
	return `(async () => {
	  const box = document.getElementById('seq-scroll');
	  const s = JSON.parse(document.getElementById('seq-data').dataset.json);
	  let head = s.head, now = s.now, id = Math.max(...s.bars.map((b) => b[0])) + 1;
	  box.scrollLeft = '` + where + `' === 'head' ? box.scrollWidth : 0;
	  await new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
	  const take = [], total = [];
	  let drew = 0;
	  for (let i = 0; i < ` + strconv.Itoa(n) + `; i++) {
	    head++; now += 0.5;
	    const open = i % 2 === 0;
	    if (open) id++;
	    const bar = [id, 0, 'tool', 'tick', open ? head : head - 1, open ? 0 : head, open ? now : now - 0.5, now, 0, false, -1];
	    const el = document.createElement('div');
	    el.id = 'seq-data';
	    el.hidden = true;
	    el.dataset.json = JSON.stringify({full: false, head, now, lanes: s.lanes, bars: [bar], arrows: []});
	    const layer = box.querySelector('svg g');
	    // Frame callbacks on either side of the one the delta asks for: its cost is between them,
	    // whatever the wait for the frame.
	    let from = 0;
	    requestAnimationFrame(() => { from = performance.now(); });
	    const t0 = performance.now();
	    document.getElementById('seq-data').replaceWith(el);
	    await Promise.resolve(); // the view's mutation observer has run
	    const t1 = performance.now();
	    const frame = await new Promise((res) => requestAnimationFrame(() => res(performance.now() - from)));
	    take.push(t1 - t0);
	    total.push(t1 - t0 + frame);
	    if (box.querySelector('svg g') !== layer) drew++;
	    // Let the frames a redraw causes (a scroll to the head) pass before the next delta.
	    await new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
	  }
	  return {take, total, drew};
	})()`
}

// span64 returns from, from+1, ..., to.
func span64(from, to int64) []int64 {
	var s []int64
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}
