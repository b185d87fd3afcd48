package server_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// page parses an HTML answer.
func page(t *testing.T, res response) *goquery.Document {
	t.Helper()
	if ct := res.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("Content-Type %q, want HTML", ct)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(res.body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestPages(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	rec := ts.addRecording(t, "r-page")
	emitMessages(rec, 2, "hello")

	t.Run("index lists the flows", func(t *testing.T) {
		res := ts.do(t, request{path: "/"})
		if res.status != 200 {
			t.Fatalf("status %d", res.status)
		}
		doc := page(t, res)
		for _, f := range []string{"echo", "pair"} {
			if doc.Find(`[data-testid="flow-`+f+`"]`).Length() != 1 {
				t.Errorf("no flow-%s on the index page", f)
			}
		}
		// A flow's note on its scripted answers sits by its input box, and describes it.
		echo := doc.Find(`[data-testid="flow-echo"]`)
		note := echo.Find(`[data-testid="input-note"]`)
		if got := note.Text(); got != "Echo answers anything." {
			t.Errorf("echo's input note = %q", got)
		}
		if id, _ := note.Attr("id"); id == "" || echo.Find(`textarea`).AttrOr("aria-describedby", "") != id {
			t.Errorf("echo's input box is not described by its note (note id %q)", id)
		}
		if n := doc.Find(`[data-testid="flow-pair"] [data-testid="input-note"]`).Length(); n != 0 {
			t.Errorf("pair, which has no note, shows %d", n)
		}
	})
	t.Run("run page", func(t *testing.T) {
		res := ts.do(t, request{path: "/runs/r-page"})
		if res.status != 200 {
			t.Fatalf("status %d", res.status)
		}
		if got := page(t, res).Find(`[data-testid="run-status"]`).Text(); !strings.Contains(got, string(traces.StatusRunning)) {
			t.Errorf("run-status = %q", got)
		}
	})

	tests := []struct {
		name, path string
		status     int
		want       string // in the page's text
	}{
		{"unknown run", "/runs/r-nope", 404, `run "r-nope" not found`},
		{"unknown page", "/nope", 404, "not found: /nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, request{path: tt.path})
			if res.status != tt.status {
				t.Fatalf("status %d, want %d: %s", res.status, tt.status, res.body)
			}
			if got := page(t, res).Text(); !strings.Contains(got, tt.want) {
				t.Errorf("page text %q, want %q", got, tt.want)
			}
		})
	}
}

// TestInspector: the inspector is an HTML fragment; its errors are JSON for the page's script.
func TestInspector(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	rec := ts.addRecording(t, "r-insp")
	emitMessages(rec, 2, "hello")
	res := ts.do(t, request{path: "/runs/r-insp/inspector?seq=2"})
	if res.status != 200 || !strings.HasPrefix(res.header.Get("Content-Type"), "text/html") {
		t.Errorf("inspector: %d %q", res.status, res.header.Get("Content-Type"))
	}
	if doc := page(t, res); !strings.Contains(doc.Text(), "hello") {
		t.Errorf("inspector of a message does not show it: %s", res.body)
	}
	tests := []struct {
		name, path string
		status     int
		want       string
	}{
		{"unknown event", "/runs/r-insp/inspector?seq=9", 404, "has no event 9"},
		{"no seq", "/runs/r-insp/inspector", 400, "seq or agent is required"},
		{"unknown agent", "/runs/r-insp/inspector?agent=nobody", 404, "no agent \"nobody\""},
		{"seq 0", "/runs/r-insp/inspector?seq=0", 400, "seq must be an integer of at least 1"},
		{"seq not a number", "/runs/r-insp/inspector?seq=two", 400, `not "two"`},
		{"unknown run", "/runs/r-nope/inspector?seq=1", 404, `run "r-nope" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, request{path: tt.path})
			if res.status != tt.status || !strings.Contains(res.apiError(t), tt.want) {
				t.Errorf("got %d %s, want %d with %q", res.status, res.body, tt.status, tt.want)
			}
		})
	}
}

func TestStatic(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	tests := []struct {
		path   string
		status int
		ctype  string
	}{
		{"/static/app.js", 200, "javascript"},
		{"/static/app.css", 200, "text/css"},
		{"/static/nope.js", 404, "text/html"},
		{"/static/../go.mod", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res := ts.do(t, request{path: tt.path})
			if res.status != tt.status || !strings.Contains(res.header.Get("Content-Type"), tt.ctype) {
				t.Errorf("got %d %q, want %d %q", res.status, res.header.Get("Content-Type"), tt.status, tt.ctype)
			}
		})
	}
}

func TestAPINotFoundIsJSON(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	res := ts.do(t, request{path: "/api/nope"})
	if res.status != http.StatusNotFound || res.apiError(t) != "not found: /api/nope" {
		t.Errorf("got %d %s", res.status, res.body)
	}
	res = ts.do(t, request{method: http.MethodDelete, path: "/api/runs"})
	if res.status != http.StatusMethodNotAllowed || res.apiError(t) == "" {
		t.Errorf("DELETE /api/runs: %d %s", res.status, res.body)
	}
}

// TestPaceSlider: the slider starts where runs go: the server's default on the index, the run's
// own pace (as changed live) on its page.
func TestPaceSlider(t *testing.T) {
	runs := make(chan started, 1)
	ts := mustOpenServer(t, server.Config{DefaultPace: 400 * time.Millisecond})
	server.SetRunner(ts.Server, handOver(runs))
	slider := func(path string) string {
		t.Helper()
		v, _ := page(t, ts.do(t, request{path: path})).Find(`[data-testid="pace"]`).Attr("value")
		return v
	}
	if got := slider("/"); got != "400" {
		t.Errorf("index slider at %q, want the default 400", got)
	}
	id := ts.createRun(t, `{"flow": "echo", "pace_ms": 250}`)
	st := receive(t, runs)
	if got := slider("/runs/" + id); got != "250" {
		t.Errorf("run page slider at %q, want the run's 250", got)
	}
	if res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + id + "/pace", body: `{"pace_ms": 900}`}); res.status != http.StatusNoContent {
		t.Fatalf("set pace: %d %s", res.status, res.body)
	}
	if got := slider("/runs/" + id); got != "900" {
		t.Errorf("run page slider at %q after a change, want 900", got)
	}
	st.rec.Finish(traces.StatusCompleted, "")
}

// TestRunPageLinksItsConversation checks that a run's page links the other runs of its
// conversation, in the order they started, each with its diff against the run shown, and that a
// run without one shows no such links.
func TestRunPageLinksItsConversation(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	t0 := time.Now().UTC()
	for i, id := range []string{"r-turn1", "r-turn2", "r-other"} {
		conversation := "chat-7"
		if id == "r-other" {
			conversation = ""
		}
		rec := traces.NewRecording(traces.Run{ID: id, Flow: "echo", Conversation: conversation, StartedAt: t0.Add(time.Duration(i) * time.Second)}, nil)
		if err := ts.Broker.Add(rec); err != nil {
			t.Fatal(err)
		}
	}
	nav := page(t, ts.do(t, request{path: "/runs/r-turn2"})).Find(`[data-testid="conversation"]`)
	if !strings.Contains(nav.Text(), "chat-7") {
		t.Fatalf("no conversation chat-7 on the page: %q", nav.Text())
	}
	var links []string
	nav.Find("a").Each(func(_ int, a *goquery.Selection) { links = append(links, a.AttrOr("href", "")) })
	if len(links) != 2 || links[0] != "/runs/r-turn1" || links[1] != "/diff?a=r-turn1&b=r-turn2" || nav.Find(`[aria-current="page"]`).Text() != "#r-turn2" {
		t.Errorf("conversation links %v, current %q: want a link to r-turn1 and r-turn2 marked current", links, nav.Find(`[aria-current="page"]`).Text())
	}
	if n := page(t, ts.do(t, request{path: "/runs/r-other"})).Find(`[data-testid="conversation"]`).Length(); n != 0 {
		t.Errorf("a run with no conversation shows %d conversation navs", n)
	}
}

// TestRunPageOffersWhatRuns: a run page offers Run again and Replay where this server runs the
// run's flow (a run started here, a trace of a served flow) and neither for an app's run or a
// trace of a flow it does not serve, where they could only fail.
func TestRunPageOffersWhatRuns(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	served := ts.createRun(t, `{"flow":"echo"}`)
	ts.waitStatus(t, served, traces.StatusCompleted)
	imported := func(flow string) string {
		tr := ts.trace(t, served)
		tr.Run.Flow = flow
		data, err := traces.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		return ts.importTrace(t, data).ID
	}
	for _, tc := range []struct {
		name, id string
		offered  bool
	}{
		{"started here", served, true},
		{"a trace of a served flow", imported("echo"), true},
		{"an app's run", imported("my-app"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := page(t, ts.do(t, request{path: "/runs/" + tc.id}))
			again, replay := doc.Find("[data-testid=run-again]").Length(), doc.Find("[data-testid=replay]").Length()
			if want := map[bool]int{true: 1, false: 0}[tc.offered]; again != want || replay != want {
				t.Errorf("run-again %d, replay %d; want %d of each", again, replay, want)
			}
		})
	}
}

// TestInspectorAgentFollowsALiveRun: an agent's summary asked of a run that goes on, while its page
// follows it, is read from the page's feed as of its newest event: once the page's socket has
// that event, the summary is the trace's up to it, asked again after more events as at first.
func TestInspectorAgentFollowsALiveRun(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	tr := webtest.Big(300)
	tr.Run.ID = "r-live-summary"
	rec := traces.NewRecording(tr.Run, tr.Agents)
	if err := ts.Broker.Add(rec); err != nil {
		t.Fatal(err)
	}
	conn := ts.mustDial(t, "/runs/"+tr.Run.ID+"/live?after=0")
	half := len(tr.Events) / 2
	var calls []int
	for _, part := range [][2]int{{0, half}, {half, len(tr.Events)}} {
		for _, e := range tr.Events[part[0]:part[1]] {
			rec.Emit(e)
		}
		last := tr.Events[part[1]-1].Seq
		readLive(t, conn, func(m server.LiveMessage) bool { return m.Seq == last })
		comp, err := templates.AgentInspector(web.Prefix(tr, last), "supervisor", nil)
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		if err := comp.Render(context.Background(), &want); err != nil {
			t.Fatal(err)
		}
		got := ts.do(t, request{path: "/runs/" + tr.Run.ID + "/inspector?agent=supervisor"})
		if got.status != 200 || string(got.body) != want.String() {
			t.Fatalf("the supervisor's summary as of #%d: %d\n%s\nwant\n%s", last, got.status, got.body, want.String())
		}
		calls = append(calls, page(t, got).Find(`[data-testid="prompt-calls"] tbody tr`).Length())
	}
	if calls[0] == 0 || calls[1] <= calls[0] {
		t.Errorf("the summary listed %d calls, then %d: want it grown with the run", calls[0], calls[1])
	}
}

// TestInspectorReadsThePageState: the inspector of every event and every agent of a run, served
// from the view state the run's page was made from, is what a new analysis of the whole run
// shows.
// TestAgentSummaryAsOfAnEvent: a page put at an earlier event by time travel asks for an agent's
// summary as of that event (&at=N), and gets what the run up to it says of the agent.
func TestAgentSummaryAsOfAnEvent(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	tr, _ := traces.EndImported(webtest.Big(300))
	id := ts.importRun(t, tr)
	tr.Run.ID = id
	agent := tr.Agents[0].Name
	differs := false
	for _, at := range []int64{3, int64(len(tr.Events)) / 2, int64(len(tr.Events))} {
		cut := tr
		cut.Events = tr.Events[:at]
		want, err := templates.AgentInspector(cut, agent, nil)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := want.Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		got := ts.do(t, request{path: fmt.Sprintf("/runs/%s/inspector?agent=%s&at=%d", id, url.QueryEscape(agent), at)})
		if got.status != 200 || string(got.body) != b.String() {
			t.Fatalf("summary of %s as of #%d: %d\n%s\nwant\n%s", agent, at, got.status, got.body, b.String())
		}
		head := ts.do(t, request{path: "/runs/" + id + "/inspector?agent=" + url.QueryEscape(agent)})
		differs = differs || string(head.body) != string(got.body)
	}
	if !differs {
		t.Error("the summaries as of earlier events are the run's whole: the test shows nothing")
	}
	if got := ts.do(t, request{path: "/runs/" + id + "/inspector?agent=" + url.QueryEscape(agent) + "&at=0"}); got.status != 400 {
		t.Errorf("at=0: %d, want 400", got.status)
	}
}

func TestInspectorReadsThePageState(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	for name, tr := range map[string]traces.Trace{"agenttool": webtest.AgentTool(), "big": webtest.Big(300)} {
		t.Run(name, func(t *testing.T) {
			tr, _ = traces.EndImported(tr)
			id := ts.importRun(t, tr)
			tr.Run.ID = id
			render := func(comp templ.Component) string {
				var b strings.Builder
				if err := comp.Render(context.Background(), &b); err != nil {
					t.Fatal(err)
				}
				return b.String()
			}
			for _, e := range tr.Events {
				want, err := templates.AppInspector(tr, e.Seq, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := ts.do(t, request{path: fmt.Sprintf("/runs/%s/inspector?seq=%d", id, e.Seq)}); got.status != 200 || string(got.body) != render(want) {
					t.Fatalf("inspector of #%d (%s): %d\n%s\nwant\n%s", e.Seq, e.Kind, got.status, got.body, render(want))
				}
			}
			for _, a := range tr.Agents {
				want, err := templates.AgentInspector(tr, a.Name, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := ts.do(t, request{path: "/runs/" + id + "/inspector?agent=" + url.QueryEscape(a.Name)}); got.status != 200 || string(got.body) != render(want) {
					t.Fatalf("inspector of agent %s: %d\n%s\nwant\n%s", a.Name, got.status, got.body, render(want))
				}
			}
		})
	}
}
