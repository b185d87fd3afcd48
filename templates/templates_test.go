package templates_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// mustDoc renders c and parses it.
func mustDoc(tb testing.TB, c templ.Component) *goquery.Document {
	tb.Helper()
	var b strings.Builder
	if err := c.Render(context.Background(), &b); err != nil {
		tb.Fatalf("render: %v", err)
	}
	return mustParse(tb, b.String())
}

func mustParse(tb testing.TB, html string) *goquery.Document {
	tb.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		tb.Fatalf("parse: %v", err)
	}
	return doc
}

func byTestID(doc *goquery.Document, id string) *goquery.Selection {
	return doc.Find(`[data-testid="` + id + `"]`)
}

func attrs(s *goquery.Selection, name string) []string {
	var out []string
	s.Each(func(_ int, e *goquery.Selection) { out = append(out, e.AttrOr(name, "")) })
	return out
}

func TestRunPageSupervisor(t *testing.T) {
	tr := webtest.Supervisor()
	doc := mustDoc(t, templates.RunPage(tr, templates.PageOptions{Runnable: true}))

	body := doc.Find("body")
	if got := body.AttrOr("data-seq", ""); got != "45" || body.AttrOr("data-run-id", "") != "r-sup1" {
		t.Errorf("body data-seq %q data-run-id %q", got, body.AttrOr("data-run-id", ""))
	}
	if s := byTestID(doc, "run-status"); s.AttrOr("data-status", "") != "completed" || !strings.Contains(s.Text(), "completed") {
		t.Errorf("run-status = %q %q", s.AttrOr("data-status", ""), s.Text())
	}
	// The specialists handed control back, and the supervisor answered last: each says so.
	for agent, word := range map[string]string{"supervisor": "done", "research_agent": "handed off", "math_agent": "handed off"} {
		n := byTestID(doc, "node-"+agent)
		if n.Length() != 1 || n.AttrOr("data-state", "") != "done" || n.Find(".node-state").Text() != word {
			t.Errorf("node-%s: %d found, state %q says %q, want %q", agent, n.Length(), n.AttrOr("data-state", ""), n.Find(".node-state").Text(), word)
		}
	}
	edges := byTestID(doc, "transfer-edge")
	if got := strings.Join(attrs(edges, "data-order"), ","); got != "1,2,3,4" {
		t.Errorf("edge orders %s", got)
	}
	if got := strings.Join(attrs(edges, "data-mode"), ","); got != "llm,deterministic,llm,deterministic" {
		t.Errorf("edge modes %s", got)
	}
	if got := strings.Join(attrs(edges, "data-current"), ","); got != "false,false,false,true" {
		t.Errorf("edge current %s", got)
	}
	if rows := byTestID(doc, "timeline-row"); rows.Length() != len(tr.Events) || rows.First().AttrOr("data-seq", "") != "1" {
		t.Errorf("%d timeline rows, first %q", rows.Length(), rows.First().AttrOr("data-seq", ""))
	}
	v := byTestID(doc, "session-value")
	if v.Length() != 1 || v.AttrOr("data-key", "") != "gdp" || v.AttrOr("data-set-by", "") != "research_agent" {
		t.Errorf("session values: %d, key %q", v.Length(), v.AttrOr("data-key", ""))
	}
	if h := byTestID(doc, "session-history-math_agent"); h.Find(`[data-testid="fed-message"]`).Length() != 3 {
		t.Errorf("math_agent history has %d messages", h.Find(`[data-testid="fed-message"]`).Length())
	}
	for _, id := range []string{"graph", "timeline", "inspector", "session-values", "run-again", "pace", "download-json", "filter-agent", "filter-kind", "filter-text"} {
		if byTestID(doc, id).Length() != 1 {
			t.Errorf("no single %s", id)
		}
	}
	if doc.Find(`script[src="/static/app.js"]`).Length() != 1 || doc.Find("script:not([src])").Length() != 0 {
		t.Errorf("want exactly one external script and no inline one")
	}
	if doc.Find("[style]").Length() != 0 {
		t.Errorf("inline style attributes break the CSP")
	}
	if doc.Find(`meta[name="baton-token"]`).Length() != 0 {
		t.Errorf("token meta without a token")
	}
	withToken := mustDoc(t, templates.RunPage(tr, templates.PageOptions{Token: "s3cret"}))
	if withToken.Find(`meta[name="baton-token"]`).AttrOr("content", "") != "s3cret" {
		t.Errorf("no token meta")
	}
}

func TestRunPageStatesMidRun(t *testing.T) {
	tr := webtest.SupervisorUntil(12)
	doc := mustDoc(t, templates.RunPage(tr, templates.PageOptions{}))
	want := map[string]string{"supervisor": "done", "research_agent": "active", "math_agent": "idle"}
	for agent, state := range want {
		if got := byTestID(doc, "node-"+agent).AttrOr("data-state", ""); got != state {
			t.Errorf("%s: %s, want %s", agent, got, state)
		}
	}
	// The supervisor waits for research_agent to come back: it handed off, it is not done.
	if got := byTestID(doc, "node-supervisor").Find(".node-state").Text(); got != "handed off" {
		t.Errorf("the waiting supervisor says %q, want handed off", got)
	}
	if byTestID(doc, "run-status").AttrOr("data-status", "") != "running" {
		t.Errorf("status not running")
	}
}

func TestAgentToolBoundary(t *testing.T) {
	doc := mustDoc(t, templates.RunPage(webtest.AgentTool(), templates.PageOptions{}))
	for _, callee := range []string{"research_agent", "code_agent", "review_agent"} {
		b := byTestID(doc, "boundary-"+callee)
		if b.Length() != 1 || b.AttrOr("data-caller", "") != "project_manager" || b.AttrOr("data-calls", "") != "1" {
			t.Errorf("boundary-%s: %d, caller %q", callee, b.Length(), b.AttrOr("data-caller", ""))
		}
		var lines []string
		b.Find(".boundary-caption, .boundary-note").Each(func(_ int, l *goquery.Selection) { lines = append(lines, l.Text()) })
		text := strings.Join(lines, " ")
		if !strings.Contains(text, "AgentTool of project_manager:") || !strings.Contains(text, "own history, shared session values") {
			t.Errorf("boundary-%s text %q", callee, text)
		}
	}
	if byTestID(doc, "node-project_manager").AttrOr("data-caller", "") != "true" {
		t.Errorf("caller not marked")
	}
	if c := doc.Find(`[data-testid="agenttool-call"][data-callee="code_agent"]`); c.AttrOr("data-seq", "0") == "0" {
		t.Errorf("no call arrow for code_agent")
	}
}

func TestFailedTransferRendered(t *testing.T) {
	doc := mustDoc(t, templates.RunPage(webtest.FailedTransfer(), templates.PageOptions{}))
	e := byTestID(doc, "transfer-edge")
	if e.AttrOr("data-failed", "") != "true" || e.AttrOr("data-to", "") != "billing_agent" {
		t.Errorf("edge failed=%q to=%q", e.AttrOr("data-failed", ""), e.AttrOr("data-to", ""))
	}
	n := byTestID(doc, "node-billing_agent")
	if n.AttrOr("data-state", "") != "failed" || n.AttrOr("data-missing", "") != "true" || !strings.Contains(n.Text(), "not found") {
		t.Errorf("billing_agent node %q %q", n.AttrOr("data-state", ""), n.Text())
	}
}

func TestFragments(t *testing.T) {
	ctx := context.Background()
	full := webtest.Supervisor()
	var setSeq int64
	for _, e := range full.Events {
		if e.Kind == traces.KindSessionSet {
			setSeq = e.Seq
		}
	}
	tr := web.Prefix(full, setSeq+2)
	frags, err := templates.Fragments(ctx, tr, setSeq-3)
	if err != nil {
		t.Fatal(err)
	}
	byTarget := map[string]templates.Fragment{}
	for _, f := range frags {
		byTarget[f.Target] = f
	}
	rows := byTarget["timeline-rows"]
	if rows.Swap != templates.SwapAppend {
		t.Fatalf("timeline fragment %+v", rows)
	}
	doc := mustParse(t, rows.HTML)
	var want []string
	for s := setSeq - 2; s <= setSeq+2; s++ {
		want = append(want, itoa(s))
	}
	if got := attrs(byTestID(doc, "timeline-row"), "data-seq"); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("appended rows %v, want %v", got, want)
	}
	// A model call of an agent at work changes its node's face, not the tree: its node comes alone.
	node := templates.NodeTarget("research_agent")
	for _, target := range []string{"run-summary", node, "session-values"} {
		if f, ok := byTarget[target]; !ok || f.Swap != templates.SwapReplace {
			t.Errorf("no replace fragment for %s: %+v", target, f)
		}
		if d := mustParse(t, byTarget[target].HTML); d.Find("#"+target).Length() != 1 {
			t.Errorf("fragment %s does not carry its own id", target)
		}
	}
	if _, ok := byTarget["session-histories"]; ok {
		t.Errorf("histories re-rendered without an agent.started")
	}
	if _, ok := byTarget["graph"]; ok {
		t.Errorf("the tree re-rendered for a model call")
	}
	g := mustParse(t, byTarget[node].HTML)
	if byTestID(g, "node-research_agent").AttrOr("data-state", "") != "active" {
		t.Errorf("research_agent not active in its node fragment")
	}

	none, err := templates.Fragments(ctx, tr, setSeq+2)
	if err != nil || none != nil {
		t.Errorf("no new events: %v %v", none, err)
	}
}

func TestInspector(t *testing.T) {
	tr := webtest.Supervisor()
	if _, err := templates.Inspector(tr, 0, nil, nil); traces.ErrorCode(err) != traces.CodeNotFound {
		t.Errorf("seq 0: %v", err)
	}
	for _, e := range tr.Events {
		c, err := templates.Inspector(tr, e.Seq, nil, nil)
		if err != nil {
			t.Fatalf("seq %d: %v", e.Seq, err)
		}
		doc := mustDoc(t, c)
		if in := byTestID(doc, "inspection"); in.AttrOr("data-seq", "") != itoa(e.Seq) || in.AttrOr("data-kind", "") != string(e.Kind) {
			t.Errorf("seq %d: inspection %q %q", e.Seq, in.AttrOr("data-seq", ""), in.AttrOr("data-kind", ""))
		}
	}
}

// TestTimesSayUTC: the timeline's times are UTC and say so, in its header and, with the date,
// in each time's tooltip; the inspector's time likewise.
func TestTimesSayUTC(t *testing.T) {
	tr := webtest.Supervisor()
	doc := mustDoc(t, templates.RunPage(tr, templates.PageOptions{}))
	if z := byTestID(doc, "timeline-zone"); z.Text() != "UTC" {
		t.Errorf("timeline zone marker %q", z.Text())
	}
	first := tr.Events[0].Time.UTC()
	row := doc.Find("#ev-1 time")
	if want := first.Format("2006-01-02 15:04:05.000") + " UTC"; row.AttrOr("title", "") != want || row.Text() != first.Format("15:04:05.000") {
		t.Errorf("row time %q title %q, want title %q", row.Text(), row.AttrOr("title", ""), want)
	}
	c, err := templates.Inspector(tr, 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustDoc(t, c).Find(".meta time").Text(); got != first.Format("15:04:05.000")+" UTC" {
		t.Errorf("inspector time %q", got)
	}
}

func TestIndexAndNotFound(t *testing.T) {
	idx := web.Index{
		Flows: []web.FlowInfo{{Name: "supervisor", Title: "Supervisor", Description: "d", DefaultInput: "What?", Agents: webtest.SupervisorAgents()}},
		Runs: web.NewRunRows([]live.RunSummary{
			{Run: traces.Run{ID: "r-1", Flow: "supervisor", Status: traces.StatusRunning, StartedAt: webtest.T0, Input: "What?"}},
			{Run: traces.Run{ID: "r-0", Flow: "supervisor", Status: traces.StatusFailed, StartedAt: webtest.T0.Add(-time.Minute),
				EndedAt: &webtest.T0, Error: "tool broke\nat line 3"}, Transfers: 4, Tokens: 1234, Agents: 3},
		}, webtest.T0.Add(2*time.Second)),
		Query: live.RunQuery{Flow: "app", Status: traces.StatusFailed},
		Next:  "after=1.r-0",
	}
	doc := mustDoc(t, templates.IndexPage(idx, templates.PageOptions{}))
	rows := byTestID(doc, "run-row")
	if rows.Length() != 2 {
		t.Fatalf("%d run rows, want 2", rows.Length())
	}
	cells := func(i int) []string {
		return rows.Eq(i).Find("td").Map(func(_ int, s *goquery.Selection) string { return strings.TrimSpace(s.Text()) })
	}
	if got, want := strings.Join(cells(1)[4:8], " "), "01:00.0 3 4 1.2k"; got != want {
		t.Errorf("ended run's duration, agents, transfers, tokens: %q, want %q", got, want)
	}
	if got := cells(1)[8]; !strings.Contains(got, "tool broke") || strings.Contains(got, "line 3") {
		t.Errorf("ended run's input and error cell %q: want the first line of the error", got)
	}
	if rows.Eq(0).Find(`[data-testid="delete-run"]`).Length() != 0 || rows.Eq(1).Find(`[data-testid="delete-run"]`).Length() != 1 {
		t.Errorf("only an ended run has a delete button")
	}
	if got := byTestID(doc, "filter-flow").Find("option[selected]").AttrOr("value", ""); got != "app" {
		t.Errorf("flow filter shows %q, want the query's own flow app", got)
	}
	if got := byTestID(doc, "older-runs").AttrOr("href", ""); got != "/?after=1.r-0" {
		t.Errorf("older runs link %q", got)
	}
	f := byTestID(doc, "flow-supervisor")
	if f.Length() != 1 || f.Find(`[data-testid="run-button"]`).Length() != 1 || f.Find("textarea").Text() != "What?" {
		t.Errorf("flow card: %d, input %q", f.Length(), f.Find("textarea").Text())
	}
	if r := byTestID(doc, "run-row"); r.Find(`a[href="/runs/r-1"]`).Length() != 1 {
		t.Errorf("no link to the run")
	}
	nf := mustDoc(t, templates.ErrorPage(404, "run r-9 not found"))
	if byTestID(nf, "error-message").Text() != "run r-9 not found" {
		t.Errorf("not found page: %q", nf.Text())
	}
}
