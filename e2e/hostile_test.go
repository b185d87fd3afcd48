package e2e_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/baton-dev/baton/internal/agentstest"
)

// TestHostileMarkupStaysText runs agentstest.Hostile, whose model output, tool arguments, tool
// result, session key and value and flow title carry <script>, <img onerror> and <b> markup, and
// checks that the index page, the run page, the inspector and the session tab show it as text and
// never run it. "escaping" runs with the page's Content-Security-Policy bypassed, so that only
// Baton's escaping stands between the payload and window.__xss; "as served" keeps the CSP.
func TestHostileMarkupStaysText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		bypassCSP bool
	}{{"escaping", true}, {"as served", false}} {
		t.Run(tc.name, func(t *testing.T) {
			b := startBaton(t)
			tb := newTab(t, nil)
			if tc.bypassCSP {
				tb.do(t, "bypass CSP", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
					_, err := chromedp.Call(ctx, page.SetBypassCSP, page.SetBypassCSPParams{Enabled: true})
					return err
				}))
			}
			tb.open(t, b.base+"/")
			card := attrSel("data-testid", "flow-hostile")
			if title := evalJS[string](t, tb, `document.querySelector('`+card+` :is(h3, h4)').innerText`); !strings.Contains(title, agentstest.ImgTag) {
				t.Errorf("index: the hostile flow's title reads %q, want the literal %s", title, agentstest.ImgTag)
			}
			checkNoInjection(t, tb, "index page")

			tb.click(t, card+" [data-testid=run-button]")
			tb.waitFor(t, "the run page", runPageLoaded)
			tb.waitStatus(t, "completed")
			checkNoInjection(t, tb, "run page")

			// Every kind checked: messages folded into their calls' rows show too.
			evalJS[bool](t, tb, `(() => { document.querySelectorAll('#filter-kind input').forEach(c => { c.checked = true; });
			  document.querySelector('#filter-kind input').dispatchEvent(new Event('change', {bubbles: true})); return true; })()`)
			// Each case: the nth row of a kind, and what its inspector must show as text.
			for _, c := range []struct {
				kind string
				nth  int
				want []string
			}{
				{"message", 0, []string{agentstest.ScriptTag}},                                               // "Echoing <script>... as asked."
				{"tool.started", 0, []string{agentstest.ScriptTag}},                                          // echo's JSON arguments
				{"tool.finished", 0, []string{agentstest.ImgTag, agentstest.ScriptTag}},                      // echo's result
				{"session.set", 0, []string{agentstest.HostileSessionKey, agentstest.ImgTag}},                // key and value
				{"model.finished", 1, []string{agentstest.ScriptTag, agentstest.ImgTag, agentstest.BoldTag}}, // the answer
			} {
				seq := evalJS[string](t, tb, `document.querySelectorAll('[data-testid=timeline-row][data-kind=`+jsString(c.kind)+`]')[`+itoa(c.nth)+`]?.dataset.seq || ''`)
				if seq == "" {
					t.Errorf("no %s row #%d in the timeline", c.kind, c.nth+1)
					continue
				}
				tb.click(t, "#ev-"+seq)
				tb.waitFor(t, "the inspector on event "+seq, `document.querySelector('[data-testid=inspection]')?.dataset.seq === `+jsString(seq))
				text := evalJS[string](t, tb, `document.getElementById('inspector').innerText`)
				for _, w := range c.want {
					if !strings.Contains(text, w) {
						t.Errorf("inspector of %s #%s does not show %s as text:\n%s", c.kind, seq, w, text)
					}
				}
				checkNoInjection(t, tb, "inspector of "+c.kind)
			}

			tb.click(t, "#tab-btn-session")
			row := `[data-testid=session-value]` + attrSel("data-key", agentstest.HostileSessionKey)
			tb.waitVisible(t, row)
			if text := evalJS[string](t, tb, `document.querySelector('`+row+`').innerText`); !strings.Contains(text, agentstest.ImgTag) {
				t.Errorf("session value row reads %q, want the literal %s", text, agentstest.ImgTag)
			}
			checkNoInjection(t, tb, "session tab")
		})
	}
}

// checkNoInjection fails t when the payload ran or became markup: window.__xss set, a script
// other than the page's own, an <img src=x> or a <b> element.
func checkNoInjection(t *testing.T, tb *tab, where string) {
	t.Helper()
	got := evalJS[struct {
		XSS     string   `json:"xss"`
		Scripts []string `json:"scripts"`
		Imgs    int      `json:"imgs"`
		Bold    int      `json:"bold"`
	}](t, tb, `({xss: typeof window.__xss, scripts: Array.from(document.querySelectorAll('script')).map(s => s.getAttribute('src') || 'inline: ' + s.textContent),
	  imgs: document.querySelectorAll('img[src="x"]').length, bold: document.querySelectorAll('b').length})`)
	if got.XSS != "undefined" {
		t.Errorf("%s: window.__xss is %s: the payload ran", where, got.XSS)
	}
	if !slices.Equal(got.Scripts, []string{"/static/app.js"}) {
		t.Errorf("%s: scripts %q, want only /static/app.js", where, got.Scripts)
	}
	if got.Imgs != 0 || got.Bold != 0 {
		t.Errorf("%s: %d <img src=x> and %d <b> elements: markup from the trace became elements", where, got.Imgs, got.Bold)
	}
}
