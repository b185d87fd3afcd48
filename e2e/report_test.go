package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/baton-dev/baton/agents/agentstest"
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
			embedded := evalJS[string](t, tb, `JSON.parse(document.getElementById('report-trace').textContent).run.input`)
			if embedded != tr.Run.Input {
				t.Errorf("the embedded trace's input is %q, want %q", embedded, tr.Run.Input)
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
// set, a script beside the embedded trace and the report's own, an <img src=x> or a <b>.
func checkReportClean(t *testing.T, tb *tab) {
	t.Helper()
	got := evalJS[struct {
		XSS     string   `json:"xss"`
		Scripts []string `json:"scripts"`
		Marks   int      `json:"marks"`
	}](t, tb, `({xss: typeof window.__xss, scripts: Array.from(document.querySelectorAll('script')).map(s => s.id || s.getAttribute('src') || 'inline'),
	  marks: document.querySelectorAll('img[src="x"], b').length})`)
	if got.XSS != "undefined" {
		t.Errorf("window.__xss is %s: the payload ran", got.XSS)
	}
	if strings.Join(got.Scripts, " ") != "report-trace inline" {
		t.Errorf("scripts %q, want the embedded trace and the report's own", got.Scripts)
	}
	if got.Marks != 0 {
		t.Errorf("%d <img src=x> or <b> elements: markup from the trace became elements", got.Marks)
	}
}
