package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
)

// breakout is input that would end the report's embedded JSON and run a script if it were not
// escaped; the tab fails the test on any dialog.
const breakout = `</script><script>alert(1)</script><!-- ` + agentstest.ScriptTag

// TestReportOffline downloads runs' reports from the run page's route, opens each from file:// in
// a tab whose network is off, and checks that it makes no request, shows the tree, the transfers
// and the timeline of the trace it embeds, inspects on click and with the keys, and shows hostile
// text as text.
func TestReportOffline(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	for _, tc := range []struct{ flow, input string }{{"hostile", breakout}, {"supervisor", ""}} {
		t.Run(tc.flow, func(t *testing.T) {
			body := map[string]any{"flow": tc.flow, "pace_ms": 0}
			if tc.input != "" {
				body["input"] = tc.input
			}
			var created struct{ ID string }
			if err := json.Unmarshal(b.post(t, "/api/runs", body, http.StatusCreated), &created); err != nil {
				t.Fatal(err)
			}
			tr := b.waitRunEnded(t, created.ID, waitTimeout)
			file := downloadReport(t, b, tr)
			tb, requests := openOffline(t, "file://"+file)
			waitReportReady(t, tb)

			if got := evalJS[int](t, tb, `document.querySelectorAll('[data-testid=timeline-row]').length`); got != len(tr.Events) {
				t.Errorf("the timeline has %d rows, want the trace's %d events", got, len(tr.Events))
			}
			if got := evalJS[int](t, tb, `document.querySelectorAll('#graph .node').length`); got != len(tr.Agents) {
				t.Errorf("the tree has %d nodes, want the trace's %d agents", got, len(tr.Agents))
			}
			var transfers []traces.Event
			for _, e := range tr.Events {
				if e.Kind == traces.KindTransfer {
					transfers = append(transfers, e)
				}
			}
			if got := evalJS[int](t, tb, `document.querySelectorAll('[data-testid=transfer-edge]').length`); got != len(transfers) {
				t.Errorf("the tree draws %d transfers, want %d", got, len(transfers))
			}
			html, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if embedded, err := templates.ReadReportTrace(html); err != nil || embedded.Run.Input != tr.Run.Input || len(embedded.Events) != len(tr.Events) {
				t.Errorf("the embedded trace reads back as input %q with %d events (%v), want %q with %d",
					embedded.Run.Input, len(embedded.Events), err, tr.Run.Input, len(tr.Events))
			}

			// Click the first row, then step with the keys.
			tb.click(t, "#ev-1")
			tb.waitFor(t, "the inspector on event 1", `document.querySelector('#inspector [data-testid=inspection]')?.dataset.seq === '1'`)
			tb.do(t, "press j", chromedp.KeyEvent("j"))
			tb.waitFor(t, "the inspector on event 2", `document.querySelector('#inspector [data-testid=inspection]')?.dataset.seq === '2'`)
			if len(transfers) > 0 {
				seq := itoa(int(transfers[0].Seq))
				tb.click(t, `[data-testid=transfer-edge][data-order="1"]`)
				tb.waitFor(t, "the inspector on transfer "+seq, `document.querySelector('#inspector [data-testid=inspection]')?.dataset.seq === `+jsString(seq))
			}
			tb.click(t, "#graph .node")
			tb.waitVisible(t, "#inspector [data-testid=agent-summary]")

			if tc.input != "" {
				// agent.started #2 holds the input as the agent's first message.
				tb.click(t, `[data-testid=timeline-row][data-kind="agent.started"]`)
				tb.waitVisible(t, "#inspector [data-testid=inspection]")
				if text := evalJS[string](t, tb, `document.getElementById('inspector').innerText`); !strings.Contains(text, breakout) {
					t.Errorf("the inspector does not show the input as text:\n%s", text)
				}
				checkReportClean(t, tb)
			}
			if got := requests(); len(got) != 0 {
				t.Errorf("the report made requests: %q", got)
			}
		})
	}
}

// downloadReport saves GET /runs/:id/report.html, checked to be an attachment, in a temporary
// directory and returns its path.
func downloadReport(t *testing.T, b *baton, tr traces.Trace) string {
	t.Helper()
	res, err := http.Get(b.base + "/runs/" + tr.Run.ID + "/report.html")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET report: %d %.300s", res.StatusCode, data)
	}
	want := `attachment; filename="baton-` + tr.Run.Flow + "-" + tr.Run.ID + `.html"`
	if got := res.Header.Get("Content-Disposition"); got != want {
		t.Errorf("Content-Disposition %q, want %q", got, want)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// openOffline opens url in a new tab with networking off, and returns the tab and a function
// that lists the URLs the tab requested other than url itself.
func openOffline(t *testing.T, url string) (*tab, func() []string) {
	t.Helper()
	tb := newTab(t, nil)
	var (
		mu   sync.Mutex
		seen []string
		wg   sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(tb.ctx)
	sent := chromedp.Events(ctx, network.RequestWillBeSent)
	wg.Go(func() {
		for ev, err := range sent {
			if err != nil {
				return
			}
			if ev.Request != nil && ev.Request.URL != url {
				mu.Lock()
				seen = append(seen, ev.Request.URL)
				mu.Unlock()
			}
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	tb.do(t, "turn the network off", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
			MatchedNetworkConditions: []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}},
		})
		return err
	}))
	tb.open(t, url)
	return tb, func() []string {
		// A round trip to the page, so that what it did before is reported.
		_ = evalJS[bool](t, tb, `true`)
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// checkReportClean fails t when hostile text ran or became markup in the report: window.__xss
// set, a script beside the packs, the embedded trace and the report's own, an <img src=x> or a
// <b>.
func checkReportClean(t *testing.T, tb *tab) {
	t.Helper()
	got := evalJS[struct {
		XSS     string   `json:"xss"`
		Scripts []string `json:"scripts"`
		Marks   int      `json:"marks"`
	}](t, tb, `({xss: typeof window.__xss, scripts: Array.from(document.querySelectorAll('script:not(.report-pack)')).map(s => s.id || s.getAttribute('src') || 'inline'),
	  marks: document.querySelectorAll('img[src="x"], b').length})`)
	if got.XSS != "undefined" {
		t.Errorf("window.__xss is %s: the payload ran", got.XSS)
	}
	if strings.Join(got.Scripts, " ") != "report-trace inline" {
		t.Errorf("scripts %q beside the packs, want the embedded trace and the report's own", got.Scripts)
	}
	if got.Marks != 0 {
		t.Errorf("%d <img src=x> or <b> elements: markup from the trace became elements", got.Marks)
	}
}

// waitReportReady waits until the report has put its rows in and gone where its address says.
func waitReportReady(t *testing.T, tb *tab) {
	t.Helper()
	tb.waitFor(t, "the report's rows", `document.body.dataset.ready === 'true'`)
}

// TestReportTimeTravel: in the report of the finished pipeline run, opened from file:// with the
// network off, the keys step back to just before its first transfer, where the tree has no
// transfer edge and the session no value; one step on draws the edge, End returns to the whole
// run, and #at= opens right where the steps led.
func TestReportTimeTravel(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	var created struct{ ID string }
	if err := json.Unmarshal(b.post(t, "/api/runs", map[string]any{"flow": "pipeline", "pace_ms": 0}, http.StatusCreated), &created); err != nil {
		t.Fatal(err)
	}
	tr := b.waitRunEnded(t, created.ID, waitTimeout)
	file := downloadReport(t, b, tr)
	tb, requests := openOffline(t, "file://"+file)
	waitReportReady(t, tb)
	head := tb.state(t)
	if len(head.Edges) < 2 || len(head.Values) == 0 {
		t.Fatalf("the finished pipeline run's report shows edges %v, values %v: want transfers and session values", head.Edges, head.Values)
	}
	first := int(head.Edges[0].Seq)
	before := first - 1

	tb.do(t, "step to the first event and on to just before the first transfer",
		chromedp.KeyEvent(kb.Home), chromedp.KeyEvent(strings.Repeat(kb.ArrowRight, before-1)))
	tb.waitFor(t, "the report as of #"+itoa(before), `document.body.dataset.at === `+jsString(itoa(before)))
	checkBefore := func(where string) {
		t.Helper()
		tb.waitFor(t, where+": the scrubber and the inspector on #"+itoa(before),
			`document.getElementById('scrub-range').value === `+jsString(itoa(before))+
				` && document.querySelector('[data-testid=scrub-seq]').textContent === `+jsString(itoa(before))+
				` && document.querySelector('#inspector [data-testid=inspection]')?.dataset.seq === `+jsString(itoa(before))+
				` && document.querySelector('[data-testid=follow-head]').checkVisibility()`)
		s := tb.state(t)
		// Before the first transfer only what the agents before it set is there: collector's
		// answer (its OutputKey, stored during its own run), none of the later stages'.
		if len(s.Edges) != 0 || len(s.Values) >= len(head.Values) || slices.ContainsFunc(s.Values, func(v sessionValue) bool { return v.SetBy != head.Edges[0].From }) {
			t.Errorf("%s: edges %v, values %v: want no edge, and values set by %s alone, before the first transfer", where, s.Edges, s.Values, head.Edges[0].From)
		}
		if s.Nodes[head.Edges[0].To] != "idle" {
			t.Errorf("%s: %s is %q, want idle before it was transferred to", where, head.Edges[0].To, s.Nodes[head.Edges[0].To])
		}
		if s.Status != "completed" || len(s.Seqs) != len(head.Seqs) {
			t.Errorf("%s: status %s with %d rows, want the run's own, completed, with the whole run's %d", where, s.Status, len(s.Seqs), len(head.Seqs))
		}
		if got := evalJS[string](t, tb, runAtJS); got != "at event "+itoa(before)+" of "+itoa(len(head.Seqs)) {
			t.Errorf("%s: the header says %q, want at event %d of %d", where, got, before, len(head.Seqs))
		}
		if n := evalJS[int](t, tb, `document.querySelectorAll('#timeline-rows .row.future').length`); n != len(head.Seqs)-before {
			t.Errorf("%s: %d rows dimmed, want the %d after #%d", where, n, len(head.Seqs)-before, before)
		}
	}
	checkBefore("stepped back")

	tb.do(t, "step onto the transfer", chromedp.KeyEvent(kb.ArrowRight))
	tb.waitFor(t, "the first transfer edge", `document.body.dataset.at === `+jsString(itoa(first))+
		` && document.querySelectorAll('#graph [data-testid=transfer-edge]').length === 1`)

	tb.do(t, "return to the last event", chromedp.KeyEvent(kb.End))
	tb.waitFor(t, "the whole run again", `!document.body.hasAttribute('data-at') && !document.querySelector('.row.future')`+
		` && document.querySelectorAll('#graph [data-testid=transfer-edge]').length === `+itoa(len(head.Edges)))
	if s := tb.state(t); s.Status != "completed" || len(s.Values) != len(head.Values) {
		t.Errorf("back at the end: status %s, values %v, want completed with %v", s.Status, s.Values, head.Values)
	}
	if got := requests(); len(got) != 0 {
		t.Errorf("the report made requests: %q", got)
	}

	tb.open(t, "file://"+file+"#at="+itoa(before))
	waitReportReady(t, tb)
	checkBefore("opened with #at=")
}

// TestReportSequenceAndZoom: the report of a finished supervisor run, opened from file:// with
// the network off, has the run page's Sequence tab, drawn from its packed data: a lane per agent
// and the transfers' arrows numbered as the tree's edges; clicking an arrow inspects that
// transfer; and the tree's zoom buttons zoom it.
func TestReportSequenceAndZoom(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	id := b.startRun(t, "supervisor", 0)
	tr := b.waitRunEnded(t, id, waitTimeout)
	want := transfersOf(tr)
	tb, requests := openOffline(t, "file://"+downloadReport(t, b, tr))
	waitReportReady(t, tb)

	openSequence(t, tb, len(want))
	if got := evalJS[[]seqArrow](t, tb, seqArrowsJS); !slices.Equal(got, want) {
		t.Errorf("transfer arrows %+v, want %+v", got, want)
	}
	if n := evalJS[int](t, tb, `document.querySelectorAll('[data-testid=seq-lane]').length`); n != len(tr.Agents) {
		t.Errorf("%d lanes, want one per agent: %d", n, len(tr.Agents))
	}
	pick := want[len(want)/2]
	tb.click(t, fmt.Sprintf(`[data-testid=seq-arrow][data-order="%d"][data-kind=transfer]`, pick.Order))
	tb.waitFor(t, "the inspector on transfer "+itoa(pick.Order), `document.querySelector('#inspector [data-testid=inspection]')?.dataset.seq === `+jsString(itoa(int(pick.Seq)))+
		` && document.querySelector('#inspector [data-testid=inspection]').dataset.kind === 'transfer'`)
	tb.waitFor(t, "the arrow marked as the selection", fmt.Sprintf(`document.querySelector('[data-testid=seq-arrow][data-order="%d"][data-kind=transfer]').classList.contains('selected')`, pick.Order))

	tb.click(t, "[data-testid=view-tree]")
	zoom := func() float64 { return evalJS[float64](t, tb, `Number(document.getElementById('graph').dataset.zoom)`) }
	z0 := zoom()
	tb.click(t, "[data-testid=zoom-in]")
	tb.waitFor(t, "the tree zoomed in", `Number(document.getElementById('graph').dataset.zoom) > `+strconv.FormatFloat(z0, 'f', -1, 64))
	z1 := zoom()
	tb.click(t, "[data-testid=zoom-out]")
	tb.waitFor(t, "the tree zoomed out", `Number(document.getElementById('graph').dataset.zoom) < `+strconv.FormatFloat(z1, 'f', -1, 64))
	if w := evalJS[string](t, tb, `document.querySelector('#graph svg').getAttribute('width')`); w != evalJS[string](t, tb, `String(Math.round(Number(document.getElementById('graph').dataset.width) * Number(document.getElementById('graph').dataset.zoom)))`) {
		t.Errorf("the tree's SVG is %s px wide, not its width at the zoom shown", w)
	}
	if got := requests(); len(got) != 0 {
		t.Errorf("the report made requests: %q", got)
	}
}
