package e2e_test

import (
	"encoding/json"
	"flag"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
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

var measureBig = flag.Bool("measure-big", false, "run TestMeasureBigPage: the run page of real runs of 1k, 10k and 100k events (minutes)")

// TestMeasureBigPage measures the run page of finished real runs of about 1,000, 10,000 and
// 100,000 events (agentstest.LongTurns, 300 tool calls a reply): its HTML's size, the time from
// navigation until the page is interactive (loaded, its script run, the newest row present),
// then a click on a row until the inspector shows it, and a search of the whole run until its
// count is shown, in headless Chromium. Only with -measure-big:
//
//	go test ./e2e -run TestMeasureBigPage -measure-big -v
func TestMeasureBigPage(t *testing.T) {
	if !*measureBig {
		t.Skip("a measurement: run with -measure-big")
	}
	for _, ticks := range []int{300, 3_000, 33_300} {
		b := startBaton(t, agentstest.LongTurns(ticks, 300))
		id := b.startRun(t, "long", 0)
		readyBy := time.Now().Add(5 * time.Minute)
		for b.runStatus(t, id) == traces.StatusRunning {
			if time.Now().After(readyBy) {
				t.Fatalf("LongTurns(%d) still runs after 5 minutes", ticks)
			}
			time.Sleep(100 * time.Millisecond) // a measurement's setup: wait for the run to end
		}
		var list []struct {
			ID     string `json:"id"`
			Events int    `json:"events"`
		}
		res, err := http.Get(b.base + "/api/runs")
		if err != nil || json.NewDecoder(res.Body).Decode(&list) != nil || len(list) == 0 || list[0].ID != id {
			t.Fatalf("the run list: %v %+v", err, list)
		}
		res.Body.Close()
		n := list[0].Events
		size := htmlSize(t, b.base+"/runs/"+id)
		tb := newTab(t, nil)
		var loads, clicks, searches []float64
		for i := range 3 {
			t0 := time.Now()
			tb.do(t, "navigate", chromedp.Navigate(b.base+"/runs/"+id+"?load="+strconv.Itoa(i)))
			tb.waitForWithin(t, "the page interactive", `document.readyState === 'complete' && document.body.dataset.page === 'run' && !!document.getElementById('ev-`+strconv.Itoa(n)+`')`, time.Minute)
			loads = append(loads, float64(time.Since(t0).Microseconds())/1000)
			t1 := time.Now()
			tb.inspect(t, "#ev-"+strconv.Itoa(n-1))
			clicks = append(clicks, float64(time.Since(t1).Microseconds())/1000)
			q := []string{`"n":17}`, "no such text", `"n":23}`}[i]
			took, err := chromedpRun(tb, chromedp.Evaluate[float64](`new Promise((done) => {
			  const el = document.getElementById('filter-text'), count = document.getElementById('filter-count');
			  const t0 = performance.now(); el.value = `+jsString(q)+`; el.dispatchEvent(new Event('input', {bubbles: true}));
			  const look = () => / of \d+ events$/.test(count.textContent) &&
			    count.textContent.startsWith('0 ') === `+strconv.FormatBool(q == "no such text")+` ? done(performance.now() - t0) : requestAnimationFrame(look);
			  look();
			})`, chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatalf("search %q: %v", q, err)
			}
			searches = append(searches, took)
		}
		t.Logf("LongTurns(%d), %d events: page HTML %d bytes; interactive after %s; click to inspector %s; search to its count %s",
			ticks, n, size, summarize(loads), summarize(clicks), summarize(searches))
	}
}

// TestLiveTimelineFolds: a page watching a run that outgrows twice pageRows rows live keeps at
// most that many rows (the oldest fold back into the gap, which says how many), goes on following
// the newest, moves a folded selection with j, and loads the folded rows back; a page filtering
// the run keeps at most as many too, and its count, the server's once it folds, stays right.
func TestLiveTimelineFolds(t *testing.T) {
	t.Parallel()
	gate := agentstest.NewGate()
	b := startBaton(t, gate.Flow(agentstest.LongTurns(450, 50))) // 9 replies of 50 tool calls, then the answer
	t.Cleanup(gate.Open)
	id := b.startRun(t, "long", 0)
	holdAt(t, gate, 1)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+id)
	tb.waitVisible(t, "#ev-2")
	tb.inspect(t, "#ev-2")
	// A second page filters the timeline to tool rows: by itself while it holds every row, by
	// the server once it folds some.
	filtered := newTab(t, tb)
	filtered.open(t, b.base+"/runs/"+id+"#kind=tool")
	const rowsJS = `document.querySelectorAll('#timeline-rows > .row').length`
	// The most rows the list held after any change to it.
	for _, p := range []*tab{tb, filtered} {
		p.do(t, "watch the row count", chromedp.Evaluate[chromedp.Void](`window.mostRows = `+rowsJS+`;
		  new MutationObserver(() => { window.mostRows = Math.max(window.mostRows, `+rowsJS+`); })
		    .observe(document.getElementById('timeline-rows'), {childList: true});`))
	}

	// Every tool call done, the answer held before its model's callbacks: the run is live, its rows
	// all sent but the last reply's tool messages, which the answer's model call records.
	holdAt(t, gate, 10)
	// The stream's events may trail the held call a little: wait until the page has them all.
	n := 0
	for settled := false; !settled; {
		n = len(b.trace(t, id).Events)
		tb.waitFor(t, "row #"+itoa(n), `!!document.getElementById('ev-`+itoa(n)+`')`)
		settled = len(b.trace(t, id).Events) == n
	}
	if n < 3*pageRows {
		t.Fatalf("the held run has %d events: too few to outgrow the page", n)
	}
	if most, cap := evalJS[int](t, tb, `window.mostRows`), 2*pageRows; most > cap {
		t.Errorf("the timeline held %d rows at once, want at most %d", most, cap)
	}
	tools := 0
	for _, e := range b.trace(t, id).Events {
		if web.KindGroup(e.Kind) == "tool" {
			tools++
		}
	}
	filtered.waitFor(t, "the tool rows counted over the whole run", `document.getElementById('filter-count').textContent === '`+
		itoa(tools)+` of `+itoa(n)+` events' && !!document.getElementById('ev-`+itoa(n-1)+`')`)
	if most, cap := evalJS[int](t, filtered, `window.mostRows`), 2*pageRows; most > cap {
		t.Errorf("the filtered timeline held %d rows at once, want at most %d", most, cap)
	}
	if shown := evalJS[[]string](t, filtered, `Array.from(document.querySelectorAll('#timeline-rows > .row')).filter(r => !r.hidden).map(r => r.dataset.group)`); slices.ContainsFunc(shown, func(g string) bool { return g != "tool" }) {
		t.Errorf("the filtered timeline shows rows of other kinds: %v", shown)
	}
	g := evalJS[struct {
		After, Before, Folded string
		Text                  string
		First                 int64
	}](t, tb, `(() => { const g = document.querySelector('#timeline-rows > [data-testid=timeline-gap]');
	  return {after: g.dataset.after, before: g.dataset.before, folded: g.dataset.folded || '', text: g.textContent.trim(),
	    first: Number(document.querySelector('#timeline-rows > .row').dataset.seq)}; })()`)
	folded := strconv.FormatInt(g.First-1, 10)
	if g.After != "0" || g.Before != strconv.FormatInt(g.First, 10) || g.Folded != folded ||
		g.Text != "Show events #1\u2013#"+folded+" ("+folded+" folded)" {
		t.Errorf("the gap before row #%d: after %s, before %s, folded %s, %q; want every earlier row folded in it", g.First, g.After, g.Before, g.Folded, g.Text)
	}
	if !evalJS[bool](t, tb, `(() => { const l = document.getElementById('timeline-rows');
	  return l.scrollHeight - l.scrollTop - l.clientHeight < 40; })()`) {
		t.Errorf("the page stopped following the run's newest rows")
	}

	// j moves on from the folded selection, which comes back to be left.
	tb.press(t, "j")
	tb.waitFor(t, "the row after #2 inspected", selectedJS+` > 2 && `+selectedJS+` < 10 && `+inspectedJS+` === `+selectedJS)

	// Pressing the gaps brings every folded row back.
	for i := 0; evalJS[bool](t, tb, `!!document.querySelector('[data-testid=timeline-gap]')`); i++ {
		if i > 10 {
			t.Fatal("the gaps did not load")
		}
		before := evalJS[int](t, tb, rowsJS)
		tb.click(t, "[data-testid=timeline-gap] button")
		tb.waitFor(t, "the gap's rows", rowsJS+` > `+itoa(before))
	}
	// Every row is back but the messages folded into their call's row, which only the rows that
	// came live carry (hidden).
	var want []int64
	for _, r := range web.NewTimeline(b.trace(t, id), 0) {
		if r.EchoOf == 0 {
			want = append(want, r.Seq)
		}
	}
	shown := evalJS[[]int64](t, tb, `Array.from(document.querySelectorAll('#timeline-rows > .row')).filter(r => !r.hidden).map(r => Number(r.dataset.seq))`)
	if !slices.Equal(shown, want) {
		t.Errorf("after loading the gaps the page shows %d rows (#%v..), want the run's %d: #%v..", len(shown), shown[:min(3, len(shown))], len(want), want[:3])
	}
}
