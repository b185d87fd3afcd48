package e2e_test

import (
	"bytes"
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/baton-dev/baton/traces"
)

// inspectorFed is the inspector's list of fed messages.
type fedMessage struct {
	Role string `json:"role"`
	From string `json:"from"`
	Text string `json:"text"`
}

const inspectorFedJS = `Array.from(document.querySelectorAll('#inspector [data-testid=fed-message]')).map(m =>
  ({role: m.dataset.role, from: m.dataset.from || '', text: m.innerText}))`

// originLabel is a fed message's origin as the inspector shows it.
type originLabel struct {
	Origin string `json:"origin"`
	Label  string `json:"label"`
	From   string `json:"from"`
	Source string `json:"source"`
}

const inspectorOriginsJS = `Array.from(document.querySelectorAll('#inspector [data-testid=fed-message]')).map(m =>
  ({origin: m.dataset.origin || '', label: m.querySelector('[data-testid=origin-label]')?.textContent || '',
    from: m.dataset.from || '', source: m.dataset.source || ''}))`

// inspect clicks the timeline row that sel selects and waits until the inspector shows its
// event; it returns the event's seq.
func (tb *tab) inspect(t *testing.T, sel string) string {
	t.Helper()
	seq := evalJS[string](t, tb, `document.querySelector(`+jsString(sel)+`)?.dataset.seq || ''`)
	if seq == "" {
		t.Fatalf("no timeline row %s", sel)
	}
	tb.click(t, "#ev-"+seq)
	tb.waitFor(t, "the inspector on event #"+seq, `document.querySelector('[data-testid=inspection]')?.dataset.seq === `+jsString(seq))
	return seq
}

// filterState is the timeline as filtered, with the URL's hash.
type filterState struct {
	Hash      string   `json:"hash"`
	Select    string   `json:"select"`
	Shown     []string `json:"shown"`  // data-agent of the visible rows
	Hidden    int      `json:"hidden"` // rows hidden by the filter
	Folded    int      `json:"folded"` // research_agent's message rows folded into their calls' rows
	Inspected string   `json:"inspected"`
}

const filterStateJS = `(() => {
  const rows = Array.from(document.querySelectorAll('[data-testid=timeline-row]'));
  return {hash: location.hash, select: document.getElementById('filter-agent').value,
    shown: rows.filter(r => r.checkVisibility()).map(r => r.dataset.agent),
    hidden: rows.filter(r => !r.checkVisibility()).length,
    folded: rows.filter(r => r.dataset.echoOf && r.dataset.agent === 'research_agent').length,
    inspected: document.querySelector('[data-testid=inspection]')?.dataset.seq || ''};
})()`

// TestInspectorAndFilters: clicking a model call's row lists its input messages with their
// roles and origin labels, a rewrite's link reaches the event it came from; clicking a node
// summarises that agent and its summary filters the timeline to it; the URL keeps the filter and
// the selection through a reload.
func TestInspectorAndFilters(t *testing.T) {
	t.Parallel()
	b, id, tb := openFinished(t, "supervisor")

	tb.inspect(t, `[data-testid=timeline-row][data-kind="model.started"][data-agent="math_agent"]`)
	fed := evalJS[[]fedMessage](t, tb, inspectorFedJS)
	var roles []string
	forContext := false
	for _, m := range fed {
		roles = append(roles, m.Role)
		if m.Role == "" {
			t.Errorf("fed message without a role: %+v", m)
		}
		forContext = forContext || strings.Contains(m.Text, "For context:")
	}
	t.Logf("math_agent's first model call: %d input messages, roles %v", len(fed), roles)
	if !forContext {
		t.Errorf("math_agent's model input lists no \"For context:\" message: %+v", fed)
	}
	if !slices.Contains(roles, "system") || !slices.Contains(roles, "user") {
		t.Errorf("roles %v, want the system instruction and user messages", roles)
	}

	// Origins: each message is labelled; a "For context:" rewrite names the agent that said it
	// and links the event it came from, which a click inspects.
	origins := evalJS[[]originLabel](t, tb, inspectorOriginsJS)
	var rewrite *originLabel
	for i, o := range origins {
		if o.Label == "" || o.Origin == "" {
			t.Errorf("message %d shows no origin label: %+v", i, o)
		}
		if o.Origin == "for context" && rewrite == nil {
			rewrite = &origins[i]
		}
	}
	if rewrite == nil || rewrite.From != "supervisor" || rewrite.Label != "For context" || rewrite.Source == "" {
		t.Fatalf("math_agent's first For context message: %+v (all: %+v)", rewrite, origins)
	}
	tb.click(t, `#inspector [data-testid=fed-message][data-source="`+rewrite.Source+`"] .seq-link`)
	tb.waitFor(t, "the inspector on the rewrite's source", `(() => { const i = document.querySelector('[data-testid=inspection]');
	  return i?.dataset.seq === `+jsString(rewrite.Source)+` && i.dataset.agent === 'supervisor' && i.dataset.kind === 'model.finished'; })()`)

	// A node summarises its agent, with its prompts by origin; the summary filters on request.
	tb.click(t, `[data-testid="node-research_agent"]`)
	tb.waitFor(t, "research_agent's summary with its prompt chart",
		`document.querySelector('[data-testid=agent-summary][data-agent=research_agent] [data-testid=prompt-chart] rect[data-origin]') !== null`)
	tb.click(t, `[data-testid=agent-summary] [data-filter-agent]`)
	tb.waitFor(t, "the timeline filtered to research_agent", `document.getElementById('filter-agent').value === 'research_agent'`)
	tb.inspect(t, `[data-testid=timeline-row][data-kind="model.finished"][data-agent="research_agent"]`)
	before := evalJS[filterState](t, tb, filterStateJS)
	checkFiltered(t, "after clicking the node", before, b.trace(t, id).Events)
	if !strings.Contains(before.Hash, "agent=research_agent") || !strings.Contains(before.Hash, "seq=") {
		t.Errorf("hash %q does not keep the selection", before.Hash)
	}

	tb.do(t, "reload", chromedp.Reload())
	tb.waitFor(t, "the reloaded page to restore the selection",
		`document.readyState === 'complete' && document.querySelector('[data-testid=inspection]')?.dataset.seq === `+jsString(before.Inspected))
	after := evalJS[filterState](t, tb, filterStateJS)
	if after.Hash != before.Hash || after.Select != "research_agent" || len(after.Shown) != len(before.Shown) {
		t.Errorf("after the reload: %+v, want what was before: %+v", after, before)
	}
	checkFiltered(t, "after the reload", after, b.trace(t, id).Events)
}

// checkFiltered checks that the timeline shows research_agent's rows, all of them but the
// messages folded into their calls' rows, and only them.
func checkFiltered(t *testing.T, when string, fs filterState, events []traces.Event) {
	t.Helper()
	want := 0
	for _, e := range events {
		if e.Agent == "research_agent" {
			want++
		}
	}
	want -= fs.Folded
	if len(fs.Shown) != want || fs.Hidden != len(events)-want {
		t.Errorf("%s: %d rows shown and %d hidden, want research_agent's %d of %d", when, len(fs.Shown), fs.Hidden, want, len(events))
	}
	for _, a := range fs.Shown {
		if a != "research_agent" {
			t.Errorf("%s: a row of %q shows in the timeline filtered to research_agent", when, a)
			break
		}
	}
}

// screenshotOut is where TestScreenshot also writes its pictures (see screenshotPath); relative
// paths are taken from the module root. Only `go test ./e2e -run TestScreenshot -screenshot
// docs/screenshot.png` refreshes the README's pictures: a plain test run leaves the checkout as
// it was.
var screenshotOut = flag.String("screenshot", "", "also write TestScreenshot's pictures to this `file` and beside it (relative to the module root)")

// screenshotSuffixes name TestScreenshot's pictures: -screenshot's file, and the story's, the
// Sequence view's and the Waterfall's beside it.
var screenshotSuffixes = []string{"", "-story", "-sequence", "-waterfall"}

// screenshotPath is the picture of suffix as seen from the test's directory, e2e/.
func screenshotPath(suffix string) string {
	out := *screenshotOut
	if !filepath.IsAbs(out) {
		out = filepath.Join("..", out)
	}
	return strings.TrimSuffix(out, ".png") + suffix + ".png"
}

// screenshotPaths are the files -screenshot names, none without it.
func screenshotPaths() []string {
	if *screenshotOut == "" {
		return nil
	}
	var paths []string
	for _, suffix := range screenshotSuffixes {
		paths = append(paths, screenshotPath(suffix))
	}
	return paths
}

// TestScreenshot follows a supervisor run to its end at 1280x800 and takes four pictures: the
// handoff story (the inspector with nothing selected), the Sequence view, the Waterfall, and the
// inspector on math_agent's first model call, scrolled to where its "For context:" input starts.
// It writes them to the test's artifact directory (kept with -artifacts) and, with -screenshot
// FILE, to FILE (the inspector) and beside it FILE's name with -story, -sequence and -waterfall.
func TestScreenshot(t *testing.T) {
	t.Parallel()
	supervisor, gate := gated(t, "supervisor")
	b := startBaton(t, supervisor)
	tb := newTab(t, nil) // first: it may have to start the browser
	id := b.startRun(t, "supervisor", 100*time.Millisecond)
	holdAt(t, gate, 1) // the page opens on the run live, and follows it to its end
	tb.open(t, b.base+"/runs/"+id)
	if s := tb.state(t); s.Status != "running" {
		t.Errorf("the run held at its first reply shows status %s: the screenshot shows no live page", s.Status)
	}
	gate.Open()
	tb.waitStatus(t, "completed")
	if evalJS[bool](t, tb, `!document.getElementById('follow').hidden`) {
		tb.click(t, "#follow") // "New events ↓" stays over the last row until clicked
	}
	shots := map[string][]byte{}
	tb.waitFor(t, "the handoff story in the inspector", `!!document.querySelector('#inspector [data-testid=run-story]')`)
	tb.waitFor(t, "no animation running", `document.getAnimations().every(a => a.playState !== 'running')`)
	shots["-story"] = capture(t, tb)
	openSequence(t, tb, 4)
	shots["-sequence"] = capture(t, tb)
	tb.click(t, "[data-testid=view-waterfall]")
	tb.waitFor(t, "the waterfall's bars", `document.querySelectorAll('[data-testid=waterfall] [data-testid=wf-bar]').length > 0`)
	tb.waitFor(t, "no animation running", `document.getAnimations().every(a => a.playState !== 'running')`)
	shots["-waterfall"] = capture(t, tb)
	tb.click(t, "[data-testid=view-tree]")
	tb.inspect(t, `[data-testid=timeline-row][data-kind="model.started"][data-agent="math_agent"]`)
	// Scroll the inspector, as a reader would, to the first message eino rewrote "For context:".
	tb.waitFor(t, "the inspector scrolled to the For context: messages", forContextJS)
	// Let the newest transfer's flash end, and the clock stop, before the picture; the inspector
	// may have been drawn again meanwhile: scroll it again.
	tb.waitFor(t, "no animation running", `document.getAnimations().every(a => a.playState !== 'running')`)
	tb.waitFor(t, "the inspector still at the For context: messages", forContextJS)
	// The picture is of the last frame drawn: let the scrolled one be drawn first.
	evalJS[bool](t, tb, `(window.__e2eFrames = 0, requestAnimationFrame(() => requestAnimationFrame(() => { window.__e2eFrames = 2; })), true)`)
	tb.waitFor(t, "the scrolled inspector drawn", `window.__e2eFrames === 2`)
	shots[""] = capture(t, tb)
	for suffix, shot := range shots {
		paths := []string{filepath.Join(t.ArtifactDir(), "screenshot"+suffix+".png")}
		if *screenshotOut != "" {
			paths = append(paths, screenshotPath(suffix))
		}
		for _, path := range paths {
			if err := os.WriteFile(path, shot, 0o644); err != nil {
				t.Fatalf("write %s: %v", path, err)
			}
			t.Logf("wrote %s (%d bytes)", path, len(shot))
		}
	}
}

// forContextJS scrolls the inspector, as a reader would, to the first message eino rewrote "For
// context:", and says whether it is there.
const forContextJS = `(() => {
  const m = Array.from(document.querySelectorAll('#inspector [data-testid=fed-message]')).find(m => m.innerText.includes('For context:'));
  m?.previousElementSibling?.scrollIntoView({block: 'start'});
  return !!m && document.getElementById('inspector').scrollTop > 0; })()`

// capture is a picture of tb's page, checked to be the size of the viewport.
func capture(t *testing.T, tb *tab) []byte {
	t.Helper()
	shot, err := chromedpRun(tb, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(shot))
	if err != nil || cfg.Width != viewWidth || cfg.Height != viewHeight {
		t.Fatalf("screenshot is %dx%d (%v), want %dx%d", cfg.Width, cfg.Height, err, viewWidth, viewHeight)
	}
	return shot
}

// TestAgentSummaryFollowsTheRun: an agent summarised while the run goes on is brought up to date
// as it goes on: summarised while the run is held at the supervisor's first reply, the summary
// counts every model call the trace gives the supervisor once the run has ended, without a click.
func TestAgentSummaryFollowsTheRun(t *testing.T) {
	t.Parallel()
	supervisor, gate := gated(t, "supervisor")
	b := startBaton(t, supervisor)
	tb := newTab(t, nil)
	id := b.startRun(t, "supervisor", 0)
	holdAt(t, gate, 1)
	tb.open(t, b.base+"/runs/"+id)
	tb.click(t, `[data-testid="node-supervisor"]`)
	calls := `(() => { const s = document.querySelector('[data-testid=agent-summary][data-agent=supervisor]');
	  const dt = s && [...s.querySelectorAll('dt')].find(d => d.textContent === 'model calls');
	  return dt ? Number(dt.nextElementSibling.textContent) : -1; })()`
	tb.waitFor(t, "the supervisor's summary while the run is held", calls+` >= 0`)
	before := evalJS[int](t, tb, calls)
	gate.Open()
	tr := b.waitRunEnded(t, id, waitTimeout)
	want := 0
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelStarted && e.Agent == "supervisor" {
			want++
		}
	}
	if want <= before {
		t.Fatalf("the supervisor made %d model calls, %d of them before the hold: this run no longer shows a summary growing", want, before)
	}
	tb.waitFor(t, fmt.Sprintf("the summary counting the supervisor's %d model calls", want), calls+` === `+itoa(want))
}
