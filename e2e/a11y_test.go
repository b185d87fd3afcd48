package e2e_test

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/baton-dev/baton/internal/agentstest"
)

// axeSource is axe-core's browser build (see testdata/README.md): a test fixture only, never
// served by Baton.
//
//go:embed testdata/axe.min.js
var axeSource string

// axeViolation is one rule axe-core found broken, with the elements that break it.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

func (v axeViolation) String() string {
	return v.ID + " (" + v.Impact + "): " + v.Help + "\n\t" + strings.Join(v.Nodes, "\n\t")
}

// axeRunJS runs every axe-core rule on the page and lists the violations.
const axeRunJS = `axe.run(document, {resultTypes: ['violations']}).then(r => r.violations.map(v => ({
  id: v.id, impact: v.impact || '', help: v.help,
  nodes: v.nodes.map(n => n.target.join(' ') + ': ' + (n.failureSummary || '').replace(/\s+/g, ' '))})))`

// checkAxe fails t with each axe-core violation on the page as it is now; where says which page
// state was checked.
func (tb *tab) checkAxe(t *testing.T, where string) {
	t.Helper()
	if !evalJS[bool](t, tb, `typeof window.axe === 'object'`) {
		if _, err := chromedpRun(tb, chromedp.Evaluate[chromedp.Void](axeSource)); err != nil {
			t.Fatalf("load axe-core: %v", err)
		}
	}
	vs, err := chromedpRun(tb, chromedp.Evaluate[[]axeViolation](axeRunJS, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("run axe-core on %s: %v", where, err)
	}
	for _, v := range vs {
		t.Errorf("%s: %s", where, v)
	}
}

// view sets the tab's viewport and preferred colour scheme ("light" or "dark").
func (tb *tab) view(t *testing.T, width, height int64, scheme string) {
	t.Helper()
	tb.do(t, "emulate "+scheme+" at "+itoa(int(width))+"px",
		chromedp.EmulateViewport(width, height),
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
			})
			return err
		}))
	// What the page does about the new size (a ResizeObserver fitting the tree again) runs at its
	// next frame: let two pass before anything is measured.
	evalJS[bool](t, tb, `(window.__e2eFrames = 0, requestAnimationFrame(() => requestAnimationFrame(() => { window.__e2eFrames = 2; })), true)`)
	tb.waitFor(t, "the page laid out at "+itoa(int(width))+"px", `window.__e2eFrames === 2`)
}

// TestAccessibility runs every axe-core rule on the index page, a completed run with the inspector
// open on an event and on an agent, with the sequence view open, the compare page, a failed run
// and the waterfall zoomed in, light at 1280 and 1440 px and dark at 800 and 1920 px (the colours
// do not change with the width); any violation fails. Layout and colours change in place, so each page loads once.
func TestAccessibility(t *testing.T) {
	t.Parallel()
	b := startBaton(t, agentstest.FailingTool())
	done := b.startRun(t, "supervisor", 0)
	failed := b.startRun(t, "failing_tool", 0)
	paused := b.startRun(t, "approval", 0)
	b.waitRunEnded(t, done, waitTimeout)
	b.waitRunEnded(t, failed, waitTimeout)
	b.waitRunEnded(t, paused, waitTimeout)
	tb := newTab(t, nil)
	for _, p := range []struct {
		name, path string
		ready      func()
	}{
		{"index", "/", func() {}},
		{"completed run, inspector open", "/runs/" + done, func() {
			tb.inspect(t, `[data-testid=timeline-row][data-kind="model.started"][data-agent="math_agent"]`)
		}},
		{"completed run, agent summarised", "/runs/" + done, func() {
			tb.click(t, `[data-testid="node-supervisor"]`)
			tb.waitFor(t, "the supervisor's prompt chart", `document.querySelector('[data-testid=agent-summary] [data-testid=prompt-chart]') !== null`)
		}},
		{"completed run, sequence view open", "/runs/" + done, func() { openSequence(t, tb, 4) }},
		{"compare", "/compare?flows=supervisor,supervisor-agenttool", func() {}},
		{"failed run", "/runs/" + failed, func() {
			tb.waitFor(t, "the error inspected", `document.querySelector('[data-testid=inspection]')?.dataset.kind === 'error'`)
		}},
		{"run waiting for a decision", "/runs/" + paused, func() { tb.waitVisible(t, "[data-testid=decision-form]") }},
		// Last: the page remembers the view, and the pages above read the tree's.
		{"completed run, waterfall view zoomed in", "/runs/" + done, func() {
			tb.click(t, "[data-testid=view-waterfall]")
			tb.waitFor(t, "the waterfall's bars", `document.querySelectorAll('[data-testid=waterfall] [data-testid=wf-bar]').length > 0`)
			tb.click(t, "[data-testid=wf-zoom-in]")
			tb.waitFor(t, "the waterfall zoomed in", `document.getElementById('wf-scroll').scrollWidth > document.getElementById('wf-scroll').clientWidth`)
		}},
	} {
		tb.view(t, viewWidth, viewHeight, "light")
		tb.open(t, b.base+p.path)
		p.ready()
		for _, v := range []struct {
			width, height int64
			scheme        string
		}{{1280, 800, "light"}, {1440, 900, "light"}, {800, 900, "dark"}, {1920, 1080, "dark"}} {
			tb.view(t, v.width, v.height, v.scheme)
			tb.checkAxe(t, fmt.Sprintf("%s, %s at %d px", p.name, v.scheme, v.width))
		}
	}
}
