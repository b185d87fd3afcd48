package templates_test

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/static"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

func TestRunOutcome(t *testing.T) {
	failed := webtest.FailedTransfer()
	reason := "transfer failed: agent 'billing_agent' not found when transferring from 'router'"
	planExecute := webtest.PlanExecute()
	for _, tc := range []struct {
		name                  string
		tr                    traces.Trace
		answer, answerSeq, by string
		errorText, jumpSeq    string
	}{
		{name: "completed", tr: webtest.Supervisor(), answer: "US GDP in 2024 was $29.18T; doubled, $58.36T.", answerSeq: "43", by: "supervisor"},
		// The run ends with the replanner's response, not the executor's last step before it.
		{name: "plan-execute", tr: planExecute, answer: webtest.PlanExecuteResponse, answerSeq: itoa(saidAt(planExecute, webtest.PlanExecuteResponse)), by: "replanner"},
		{name: "failed", tr: failed, errorText: reason, jumpSeq: itoa(failed.Events[len(failed.Events)-2].Seq)},
		{name: "running", tr: webtest.SupervisorUntil(30)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := mustDoc(t, templates.RunPage(tc.tr, templates.PageOptions{}))
			if byTestID(doc, "run-outcome").Length() != 1 {
				t.Fatalf("no run-outcome: the live page could not fill it in")
			}
			a := byTestID(doc, "final-answer")
			if got := strings.TrimSpace(a.Find(".answer").Text()); got != tc.answer || a.AttrOr("data-seq", "") != tc.answerSeq || a.AttrOr("data-agent", "") != tc.by {
				t.Errorf("final answer %q #%s by %q, want %q #%s by %q", got, a.AttrOr("data-seq", ""), a.AttrOr("data-agent", ""), tc.answer, tc.answerSeq, tc.by)
			}
			e := byTestID(doc, "run-error")
			if tc.errorText == "" {
				if e.Length() != 0 {
					t.Errorf("a run-error shows: %q", e.Text())
				}
				return
			}
			if !strings.Contains(e.Text(), tc.errorText) {
				t.Errorf("run-error reads %q, want the whole reason %q", e.Text(), tc.errorText)
			}
			if got := byTestID(doc, "jump-to-error").AttrOr("data-seq", ""); got != tc.jumpSeq {
				t.Errorf("jump-to-error goes to #%s, want #%s (the error event)", got, tc.jumpSeq)
			}
		})
	}
}

// saidAt returns the seq of the message of tr that reads text, 0 if none.
func saidAt(tr traces.Trace, text string) int64 {
	for _, e := range tr.Events {
		if e.Message != nil && e.Message.Content == text {
			return e.Seq
		}
	}
	return 0
}

func TestPaceControl(t *testing.T) {
	for _, tc := range []struct {
		name         string
		opts         templates.PageOptions
		want         string // value; "" for no slider
		wantDisabled bool
	}{
		{"running run", templates.PageOptions{PaceMS: 250}, "250", false},
		{"ended run", templates.PageOptions{PaceMS: 250, PaceFixed: true}, "250", true},
		{"run not started here", templates.PageOptions{PaceMS: 250, NoPace: true}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pace := byTestID(mustDoc(t, templates.RunPage(webtest.Supervisor(), tc.opts)), "pace")
			_, disabled := pace.Attr("disabled")
			if pace.AttrOr("value", "") != tc.want || disabled != tc.wantDisabled {
				t.Errorf("pace slider value %q disabled %v, want %q %v", pace.AttrOr("value", ""), disabled, tc.want, tc.wantDisabled)
			}
		})
	}
}

// TestPagesNameThemselves: each page has one h1; an agent node's accessible name says what the
// node shows; the timeline takes the keyboard focus.
func TestPagesNameThemselves(t *testing.T) {
	run := mustDoc(t, templates.RunPage(webtest.Supervisor(), templates.PageOptions{}))
	if h := run.Find("h1"); h.Length() != 1 || !strings.Contains(h.Text(), "supervisor") || !strings.Contains(h.Text(), "r-sup1") {
		t.Errorf("run page h1: %d, %q; want one naming the flow and the run", h.Length(), h.Text())
	}
	idx := mustDoc(t, templates.IndexPage(web.Index{}, templates.PageOptions{}))
	if h := idx.Find("h1"); h.Length() != 1 || strings.TrimSpace(h.Text()) != "Baton" {
		t.Errorf("index h1: %d, %q", h.Length(), h.Text())
	}
	nodes := run.Find(`[data-testid^="node-"]`)
	if nodes.Length() != 3 {
		t.Fatalf("%d nodes", nodes.Length())
	}
	nodes.Each(func(_ int, n *goquery.Selection) {
		label := n.AttrOr("aria-label", "")
		n.Find("text").Each(func(_ int, txt *goquery.Selection) {
			if !strings.Contains(label, txt.Text()) {
				t.Errorf("%s: accessible name %q lacks its visible %q", n.AttrOr("data-agent", ""), label, txt.Text())
			}
		})
	})
	if tl := byTestID(run, "timeline"); tl.AttrOr("tabindex", "") != "0" {
		t.Errorf("timeline tabindex %q: the keyboard cannot reach it", tl.AttrOr("tabindex", ""))
	}
}

// TestPagesPreloadEveryModule: every module of the client is preloaded, so a page does not wait
// for one import after another before it responds.
func TestPagesPreloadEveryModule(t *testing.T) {
	files, err := fs.Glob(static.FS, "*.js")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		if f != "app.js" && f != "report.js" { // report.js is a report's inlined script, no module
			want = append(want, "/static/"+f)
		}
	}
	doc := mustDoc(t, templates.RunPage(webtest.Supervisor(), templates.PageOptions{}))
	got := attrs(doc.Find(`link[rel="modulepreload"]`), "href")
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("modulepreload links %v, want the modules %v", got, want)
	}
}

// TestRunControlsOffered: Run again and Replay show only where the server can run the run's
// flow; Replay waits, disabled, for the run to end. Their errors have a line of their own under
// the header, not in it.
func TestRunControlsOffered(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		tr                     traces.Trace
		runnable               bool
		again, replay, enabled bool
	}{
		{"a completed run of a flow served here", webtest.Supervisor(), true, true, true, true},
		{"a run going on", webtest.SupervisorUntil(20), true, true, true, false},
		{"an app's run, or a trace of a flow not served here", webtest.Supervisor(), false, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := mustDoc(t, templates.RunPage(tc.tr, templates.PageOptions{Runnable: tc.runnable}))
			again, replay := byTestID(doc, "run-again"), byTestID(doc, "replay")
			_, disabled := replay.Attr("disabled")
			if again.Length() == 1 != tc.again || replay.Length() == 1 != tc.replay || tc.replay && disabled == tc.enabled {
				t.Errorf("run-again %d, replay %d (disabled %v); want run-again %v, replay %v (enabled %v)",
					again.Length(), replay.Length(), disabled, tc.again, tc.replay, tc.enabled)
			}
			if e := byTestID(doc, "form-error"); e.Length() != 1 || e.Closest("header").Length() != 0 {
				t.Errorf("%d form-error lines, %d in the header; want one, under it", e.Length(), e.Closest("header").Length())
			}
		})
	}
}

// TestRunPageAway: a page put at an earlier event of a completed run says "at event N of M",
// its clock stands there, and the run's own status and final answer stay in the header; at the
// newest event it says nothing of the sort.
func TestRunPageAway(t *testing.T) {
	tr := webtest.Supervisor()
	whole := web.NewViewState(tr.Run, tr.Agents)
	whole.Add(tr.Events...)
	v := web.ViewAt(tr, 10).View()
	v.Stats.Away = whole.AwayAt(10)
	doc := mustDoc(t, templates.RunView(v, templates.PageOptions{}))

	at := byTestID(doc, "run-at")
	if got := strings.Join(strings.Fields(at.Text()), " "); got != "at event 10 of 45" || at.AttrOr("data-at", "") != "10" {
		t.Errorf("run-at reads %q (data-at %q), want at event 10 of 45", got, at.AttrOr("data-at", ""))
	}
	if s := byTestID(doc, "run-status"); s.AttrOr("data-status", "") != "completed" || !strings.Contains(s.Text(), "completed") {
		t.Errorf("run-status %q %q, want the run's own: completed", s.AttrOr("data-status", ""), s.Text())
	}
	if _, stopped := byTestID(doc, "elapsed").Attr("data-ended"); !stopped {
		t.Errorf("the clock runs on a page that shows event 10")
	}
	if a := byTestID(doc, "final-answer"); a.AttrOr("data-seq", "") != "43" || a.AttrOr("data-agent", "") != "supervisor" {
		t.Errorf("final answer #%q by %q, want the run's, #43 by supervisor", a.AttrOr("data-seq", ""), a.AttrOr("data-agent", ""))
	}
	if n := byTestID(doc, "timeline-row").Length(); n == 0 {
		t.Errorf("no timeline rows")
	}
	head := mustDoc(t, templates.RunPage(tr, templates.PageOptions{}))
	if n := byTestID(head, "run-at").Length(); n != 0 {
		t.Errorf("the page at the newest event shows %d run-at", n)
	}
}
