package e2e_test

import (
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// TestLargeRunSequenceOnDemand: the page of a finished run of 25,000 events comes without the
// Sequence view's data; opening the Sequence tab fetches it and draws the run's transfers, and
// opening the Session tab fetches what each agent was fed. The supervisor's summary charts its
// ~2,500 model calls in at most 40 bars, saying so.
func TestLargeRunSequenceOnDemand(t *testing.T) {
	t.Parallel()
	b := startBatonWith(t, nil, func(c *server.Config) { c.MaxIngestBody = 64 << 20 })
	id := importTrace(t, b, webtest.Large(25_000))
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+id)
	if n := evalJS[int](t, tb, `document.querySelectorAll('[data-testid=seq-data-deferred]').length`); n != 1 {
		t.Fatalf("the page holds the sequence data itself (%d deferred slots)", n)
	}
	tb.click(t, "[data-testid=view-sequence]")
	tb.waitFor(t, "the fetched sequence view drawing transfer arrows",
		`!document.querySelector('[data-testid=seq-data-deferred]') && document.querySelectorAll('[data-testid=sequence] [data-testid=seq-arrow][data-kind=transfer]').length > 0`)

	// What each agent was fed comes the same way, when the Session tab is first shown.
	if n := evalJS[int](t, tb, `document.querySelectorAll('[data-testid=session-histories-deferred]').length`); n != 1 {
		t.Fatalf("the page holds the session histories itself (%d deferred slots)", n)
	}
	tb.click(t, "#tab-btn-session")
	tb.waitFor(t, "the fetched session histories, the supervisor's with what it was fed",
		`!document.querySelector('[data-testid=session-histories-deferred]') && document.querySelectorAll('#tab-session [data-testid=session-history-supervisor] .seq-link').length > 0`)
	tb.click(t, "#tab-btn-timeline")

	tb.click(t, "[data-testid=view-tree]")
	tb.click(t, `[data-testid="node-supervisor"]`)
	tb.waitFor(t, "the supervisor's summary with its prompt chart",
		`document.querySelector('[data-testid=agent-summary][data-agent=supervisor] [data-testid=prompt-chart] rect[data-origin]') !== null`)
	chart := evalJS[struct {
		Bars, Labels, Last int
		Per                string
	}](t, tb, `(() => { const c = document.querySelector('[data-testid=agent-summary] [data-testid=prompt-chart]');
	  const bars = Array.from(c.querySelectorAll('g.bar'));
	  return {bars: bars.length, labels: c.querySelectorAll('g.bar text').length, last: Number(bars[bars.length-1].dataset.last),
	    per: c.querySelector('[data-testid=prompt-chart-per]')?.textContent || ''}; })()`)
	if chart.Bars == 0 || chart.Bars > 40 || chart.Labels > 10 || chart.Last < 1000 || !strings.Contains(chart.Per, "to a bar") {
		t.Errorf("the supervisor's prompt chart: %+v; want at most 40 bars and 10 labels for its %d calls, said so", chart, chart.Last)
	}
}

var measureLarge = flag.Bool("measure-large", false, "run TestMeasureLargeRunPage: the page of imported runs of 100k and 1M events (minutes)")

// TestMeasureLargeRunPage measures, in headless Chromium, a run page of webtest.Large runs of
// 100,000 and 1,000,000 events, imported: from navigation until interactive (script run, newest
// row present). Cold: the run's first view, asked for as soon as its import has answered (the
// server makes a large imported run's page then: the view waits for it), 3 runs imported one
// after another (each deleted after its view); warm: 2 views more of the last, its page kept.
// Each load is split into the server's answer and the browser's part (navigation timing), with
// the server's CPU time.
//
//	go test ./e2e -run TestMeasureLargeRunPage -measure-large -v
func TestMeasureLargeRunPage(t *testing.T) {
	if !*measureLarge {
		t.Skip("a measurement: run with -measure-large")
	}
	for _, n := range []int{100_000, 1_000_000} {
		b := startBatonWith(t, nil, func(c *server.Config) { c.MaxIngestBody = 1 << 30 })
		tr, _ := traces.EndImported(webtest.Large(n))
		last := tr.Events[len(tr.Events)-1].Seq
		tb := newTab(t, nil)
		// Each load's parts: the server's answer (request to its first byte), and the browser's
		// (the HTML's last byte to the load event, when the script has run), from the page's
		// navigation timing; and the CPU this process (the server, in it) spent meanwhile.
		var parts []string
		load := func(id string, i int) float64 {
			cpu0 := processCPU(t)
			t0 := time.Now()
			tb.do(t, "navigate", chromedp.Navigate(b.base+"/runs/"+id+"?load="+strconv.Itoa(i)))
			tb.waitForWithin(t, "the page interactive", `document.readyState === 'complete' && document.body.dataset.page === 'run' && !!document.getElementById('ev-`+strconv.FormatInt(last, 10)+`')`, 2*time.Minute)
			took := float64(time.Since(t0).Microseconds()) / 1000
			nav := evalJS[[]float64](t, tb, `(() => { const n = performance.getEntriesByType('navigation')[0];
			  return [n.responseStart - n.requestStart, n.responseEnd - n.responseStart, n.loadEventEnd - n.responseEnd]; })()`)
			parts = append(parts, fmt.Sprintf("%.0f ms: server %.0f, HTML %.0f, browser %.0f ms; server process CPU %.0f ms",
				took, nav[0], nav[1], nav[2], (processCPU(t)-cpu0).Seconds()*1000))
			return took
		}
		var cold, warm []float64
		var id string
		for i := range 3 {
			if id != "" {
				deleteRun(t, b, id)
			}
			id = importTrace(t, b, tr)
			cold = append(cold, load(id, i))
		}
		tr = traces.Trace{}
		for i := range 2 {
			warm = append(warm, load(id, 3+i))
		}
		size := htmlSize(t, b.base+"/runs/"+id)
		t.Logf("Large(%d), %d events: page HTML %d bytes; interactive, cold after %s (loads: %v ms); warm after %s (loads: %v ms); each load: %s",
			n, last, size, summarize(cold), cold, summarize(warm), warm, strings.Join(parts, "; "))
	}
}

// processCPU is the CPU time (user and system) this process has used so far.
func processCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// deleteRun deletes run id from b.
func deleteRun(t *testing.T, b *baton, id string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodDelete, b.base+"/api/runs/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE run %s: %d", id, res.StatusCode)
	}
}
