package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// TestTimeTravel runs the real supervisor flow, then puts its page at every event, by the
// fragment route the scrubber uses and by ?at=: each shows what a full render of the trace cut
// at that event shows, saying where it stands in the run, whose own status and outcome it
// keeps. Bad seqs get a 400 that says which are valid, in the page's title too.
func TestTimeTravel(t *testing.T) {
	ts := mustOpenServer(t, server.Config{Flows: agents.Catalogue()})
	server.SetRunner(ts.Server, agents.RunFlow)
	id := ts.createRun(t, `{"flow": "supervisor", "pace_ms": 0}`)
	// Steps taken while the run goes on replay its events as they arrive: -race watches.
	for range 20 {
		if res := ts.do(t, request{path: "/runs/" + id + "/at/1"}); res.status != http.StatusOK && res.status != http.StatusBadRequest {
			t.Fatalf("at 1 mid-run: status %d: %s", res.status, res.body)
		}
	}
	if _, closed := readEvents(t, ts.mustDial(t, "/api/runs/"+id+"/events")); closed.Code != websocket.CloseNormalClosure {
		t.Fatalf("events socket closed with %v", closed)
	}
	tr := ts.trace(t, id)
	last := tr.Events[len(tr.Events)-1].Seq
	parts := []string{"run-summary", "run-outcome", "graph", "session-values", "session-histories", "seq-data"}

	for _, e := range tr.Events {
		want := renderCut(t, tr, e.Seq)
		res := ts.do(t, request{path: "/runs/" + id + "/at/" + itoa(e.Seq)})
		if res.status != http.StatusOK {
			t.Fatalf("at %d: status %d: %s", e.Seq, res.status, res.body)
		}
		var step struct {
			Seq, Head int64
			Fragments []templates.Fragment
		}
		if err := json.Unmarshal(res.body, &step); err != nil {
			t.Fatal(err)
		}
		if step.Seq != e.Seq || step.Head != last || len(step.Fragments) != len(parts) {
			t.Fatalf("at %d: seq %d head %d, %d fragments, want %d %d %d", e.Seq, step.Seq, step.Head, len(step.Fragments), e.Seq, last, len(parts))
		}
		for _, f := range step.Fragments {
			if f.Swap != templates.SwapReplace {
				t.Errorf("at %d: %s swaps %q", e.Seq, f.Target, f.Swap)
			}
			if got := outer(t, docOf(t, f.HTML), f.Target); got != outer(t, want, f.Target) {
				t.Fatalf("at %d: fragment %s differs from the cut trace's page:\n%s\nwant\n%s", e.Seq, f.Target, got, outer(t, want, f.Target))
			}
		}
		// The page opened there: the same parts, the whole run's timeline, the run's head to follow.
		res = ts.do(t, request{path: "/runs/" + id + "?at=" + itoa(e.Seq)})
		if res.status != http.StatusOK {
			t.Fatalf("?at=%d: status %d", e.Seq, res.status)
		}
		doc := page(t, res)
		for _, p := range parts {
			if got := outer(t, doc, p); got != outer(t, want, p) {
				t.Fatalf("?at=%d: %s differs from the cut trace's page:\n%s\nwant\n%s", e.Seq, p, got, outer(t, want, p))
			}
		}
		body := doc.Find("body")
		if body.AttrOr("data-at", "") != itoa(e.Seq) || body.AttrOr("data-seq", "") != itoa(last) || body.AttrOr("data-status", "") != "completed" {
			t.Errorf("?at=%d: body data-at %q data-seq %q data-status %q", e.Seq, body.AttrOr("data-at", ""), body.AttrOr("data-seq", ""), body.AttrOr("data-status", ""))
		}
		if n := doc.Find(`[data-testid="timeline-row"]`).Length(); n != len(tr.Events) {
			t.Errorf("?at=%d: %d timeline rows, want the whole run's %d", e.Seq, n, len(tr.Events))
		}
		if got := doc.Find(`[data-testid="scrub-range"]`).AttrOr("value", ""); got != itoa(e.Seq) {
			t.Errorf("?at=%d: scrubber at %q", e.Seq, got)
		}
		if got := doc.Find(`[data-testid="scrub-kind"]`).Text(); got != string(e.Kind) {
			t.Errorf("?at=%d: scrubber names %q, want %q", e.Seq, got, e.Kind)
		}
	}

	bad := []struct{ path, want string }{
		{"/runs/" + id + "/at/0", "integer from 1"},
		{"/runs/" + id + "/at/x", "integer from 1"},
		{"/runs/" + id + "/at/" + itoa(last+1), "choose 1 to " + itoa(last)},
		{"/runs/" + id + "?at=-3", "integer from 1"},
		{"/runs/" + id + "?at=" + itoa(last+5), "choose 1 to " + itoa(last)},
		{"/runs/nope/at/1", "not found"},
	}
	for _, b := range bad {
		res := ts.do(t, request{path: b.path})
		if res.status/100 != 4 {
			t.Errorf("%s: status %d, want 4xx", b.path, res.status)
			continue
		}
		msg := ""
		if strings.Contains(b.path, "/at/") {
			msg = res.apiError(t)
		} else {
			doc := page(t, res)
			msg = doc.Find(`[data-testid="error-message"]`).Text()
			// The page is titled by what is wrong: a seq past the end is no missing page.
			if title, h := doc.Find("title").Text(), doc.Find(`[data-testid="error-heading"]`).Text(); res.status == http.StatusBadRequest &&
				(h != "Cannot show that" || !strings.Contains(title, b.want)) {
				t.Errorf("%s: page titled %q, headed %q", b.path, title, h)
			}
		}
		if !strings.Contains(msg, b.want) {
			t.Errorf("%s: %d %q, want it to say %q", b.path, res.status, msg, b.want)
		}
	}
}

// renderCut renders the run page of tr cut right after event seq, as a page put there shows it:
// saying where it stands in tr, whose own status and outcome it keeps.
func renderCut(t *testing.T, tr traces.Trace, seq int64) *goquery.Document {
	t.Helper()
	whole := web.NewViewState(tr.Run, tr.Agents)
	whole.Add(tr.Events...)
	v := web.NewView(web.Prefix(tr, seq))
	v.Stats.Away = whole.AwayAt(seq)
	var buf bytes.Buffer
	if err := templates.RunView(v, templates.PageOptions{}).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return docOf(t, buf.String())
}

func docOf(t *testing.T, html string) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// outer returns the HTML of the element with id, as the parser reads it.
func outer(t *testing.T, doc *goquery.Document, id string) string {
	t.Helper()
	sel := doc.Find("#" + id)
	if sel.Length() != 1 {
		t.Fatalf("%d elements #%s", sel.Length(), id)
	}
	html, err := goquery.OuterHtml(sel)
	if err != nil {
		t.Fatal(err)
	}
	return html
}

// TestTravelSaysWhereItStands: a completed run's page put at an earlier event, by a step of the
// scrubber or by ?at=, says "at event N of M", not "running", and keeps the run's own status
// and final answer in its header.
func TestTravelSaysWhereItStands(t *testing.T) {
	ts := mustOpenServer(t, server.Config{Flows: agents.Catalogue()})
	server.SetRunner(ts.Server, agents.RunFlow)
	id := ts.createRun(t, `{"flow": "supervisor", "pace_ms": 0}`)
	tr := ts.waitStatus(t, id, traces.StatusCompleted)
	last := tr.Events[len(tr.Events)-1].Seq
	answer := web.NewStats(tr).Outcome

	res := ts.do(t, request{path: "/runs/" + id + "/at/3"})
	var step struct{ Fragments []templates.Fragment }
	if err := json.Unmarshal(res.body, &step); err != nil || res.status != http.StatusOK {
		t.Fatalf("at 3: %d %s", res.status, res.body)
	}
	var html strings.Builder
	for _, f := range step.Fragments {
		html.WriteString(f.HTML)
	}
	for name, doc := range map[string]*goquery.Document{"step": docOf(t, html.String()), "?at=": page(t, ts.do(t, request{path: "/runs/" + id + "?at=3"}))} {
		at := doc.Find(`[data-testid="run-at"]`)
		if got := strings.Join(strings.Fields(at.Text()), " "); got != "at event 3 of "+itoa(last) {
			t.Errorf("%s: run-at reads %q, want at event 3 of %d", name, got, last)
		}
		if got := doc.Find(`[data-testid="run-status"]`).AttrOr("data-status", ""); got != "completed" {
			t.Errorf("%s: the header's status is %q, want the run's own, completed", name, got)
		}
		a := doc.Find(`[data-testid="final-answer"]`)
		if a.AttrOr("data-seq", "") != itoa(answer.AnswerSeq) || a.AttrOr("data-agent", "") != answer.AnswerBy {
			t.Errorf("%s: final answer #%q by %q, want #%d by %s", name, a.AttrOr("data-seq", ""), a.AttrOr("data-agent", ""), answer.AnswerSeq, answer.AnswerBy)
		}
	}
}
