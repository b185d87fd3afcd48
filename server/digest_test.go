package server_test

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/lint"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
)

// TestFindingsLiveAndOnThePage: a handoff bug the linter names reaches a watching page while the
// run goes on, and a page opened later lists it under the header.
func TestFindingsLiveAndOnThePage(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	rec := ts.addRecording(t, "r-lint")
	emitMessages(rec, 1, "hi")
	conn := ts.mustDial(t, "/runs/r-lint/live?after=0")
	readLive(t, conn, func(m server.LiveMessage) bool { return m.Seq == 1 })

	rec.Emit(traces.Event{Kind: traces.KindTransfer, Agent: "echo_agent", Transfer: &traces.Transfer{
		From: "echo_agent", To: "refunds_agent", Mode: traces.TransferLLM, Outcome: traces.TransferFailed,
		Error: "transfer failed: agent 'refunds_agent' not found"}})
	rec.Finish(traces.StatusFailed, "transfer failed")
	msgs := readLive(t, conn, func(m server.LiveMessage) bool { return m.Status == traces.StatusFailed })
	var found []string
	for _, m := range msgs {
		for _, f := range m.Fragments {
			if f.Target == templates.FindingsTarget {
				found = append(found, f.HTML)
			}
		}
	}
	if len(found) != 1 || !strings.Contains(found[0], `data-rule="refused-transfer"`) || !strings.Contains(found[0], `data-seq="2"`) {
		t.Fatalf("findings fragments = %q, want one naming the refused transfer at #2", found)
	}

	page := ts.do(t, request{path: "/runs/r-lint"})
	html := string(page.body)
	i := strings.Index(html, `id="run-findings"`)
	if page.status != 200 || i < 0 || !strings.Contains(html[i:], "eino refused echo_agent&#39;s transfer to refunds_agent") ||
		strings.Index(html, `id="run-outcome"`) > i {
		t.Errorf("run page: status %d, findings at %d, want them listed under the outcome", page.status, i)
	}

	healthy := ts.addRecording(t, "r-healthy")
	emitMessages(healthy, 2, "fine")
	healthy.Finish(traces.StatusCompleted, "")
	html = string(ts.do(t, request{path: "/runs/r-healthy"}).body)
	if !regexp.MustCompile(`<section id="run-findings"[^>]* hidden[ >]`).MatchString(html) {
		t.Errorf("a healthy run's page shows findings")
	}
}

// TestStoryLiveAndOnThePage: the handoff story grows on a watching page (at the latest when the
// run ends), and a page opened later shows it in the inspector, with buttons to its events.
func TestStoryLiveAndOnThePage(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	rec := ts.addRecording(t, "r-story")
	conn := ts.mustDial(t, "/runs/r-story/live?after=0")
	handOff(rec, "billing_agent") // finishes the run
	msgs := readLive(t, conn, func(m server.LiveMessage) bool { return m.Status == traces.StatusCompleted })
	var last string
	for _, m := range msgs {
		for _, f := range m.Fragments {
			if f.Target == templates.StoryTarget {
				last = f.HTML
			}
		}
	}
	if !strings.Contains(last, "echo_agent → billing_agent") || !strings.Contains(last, "hands off to billing_agent (llm)") {
		t.Fatalf("the story's last fragment = %q, want the route and the handoff", last)
	}
	html := string(ts.do(t, request{path: "/runs/r-story"}).body)
	i := strings.Index(html, `id="inspector"`)
	if j := strings.Index(html, `id="run-story"`); i < 0 || j < i || !strings.Contains(html[j:], `data-seq="2"`) {
		t.Errorf("the run page's inspector does not open on the story with its events' buttons")
	}
}

// TestRunsWithFindings: when a run ends its handoff findings are counted; the run list shows the
// count and keeps, with findings=1, the runs that have some.
func TestRunsWithFindings(t *testing.T) {
	ts := mustOpenServer(t, server.Config{Flows: []agents.Flow{catalogueFlow(t, "transfer-unknown"), catalogueFlow(t, "supervisor")}})
	server.SetRunner(ts.Server, agents.RunFlow)
	buggy := ts.ended(t, ts.createRun(t, `{"flow":"transfer-unknown","pace_ms":0}`)).Run.ID
	healthy := ts.ended(t, ts.createRun(t, `{"flow":"supervisor","pace_ms":0}`)).Run.ID
	var listed []live.RunSummary
	for deadline := time.Now().Add(10 * time.Second); ; {
		res := ts.do(t, request{path: "/api/runs?findings=1"})
		if err := json.Unmarshal(res.body, &listed); err != nil {
			t.Fatalf("GET /api/runs?findings=1: %d %s", res.status, res.body)
		}
		if len(listed) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // the store's writer saves the count with the run's end
	}
	if len(listed) != 1 || listed[0].ID != buggy || listed[0].Findings != 1 {
		t.Fatalf("runs with findings = %+v, want %s with its refused transfer", listed, buggy)
	}
	html := string(ts.do(t, request{path: "/?findings=1"}).body)
	if !strings.Contains(html, `data-run-id="`+buggy+`"`) || strings.Contains(html, `data-run-id="`+healthy+`"`) || !strings.Contains(html, `data-testid="finding-count"`) {
		t.Errorf("the index with findings=1 does not list just the buggy run with its count")
	}
	if res := ts.do(t, request{path: "/api/runs?findings=yes"}); res.status != 400 || !strings.Contains(res.apiError(t), "findings must be 1") {
		t.Errorf("findings=yes: %d %s", res.status, res.body)
	}
}

// TestDigestKeptForFinishedRuns: an import keeps the findings it counted for its run's page, and
// a finished run's page keeps its findings and story past its feed; what is kept equals what the
// linter and the story make of the run, and a run still going on is digested anew as it grows.
func TestDigestKeptForFinishedRuns(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	server.SetFeedLinger(ts.Server, 0) // each page makes its feed anew
	uncached := func(rec *traces.Recording) ([]lint.Finding, story.Story) {
		return server.UncachedDigest(ts.Server, rec)
	}

	b := webtest.New("r-imported", "echo", "hi", testFlows()[0].Agents...)
	b.Start("echo_agent", "run", webtest.Msg("user", "hi"))
	b.Add(traces.Event{Kind: traces.KindTransfer, Agent: "echo_agent", Transfer: &traces.Transfer{
		From: "echo_agent", To: "refunds_agent", Mode: traces.TransferLLM, Outcome: traces.TransferFailed,
		Error: "transfer failed: agent 'refunds_agent' not found"}})
	ts.importRun(t, b.End(traces.StatusFailed, "transfer failed"))
	imported, err := ts.Broker.Get("r-imported")
	if err != nil {
		t.Fatal(err)
	}
	wantFindings, wantStory := uncached(imported) // what its page made before anything was kept
	if len(wantFindings) == 0 {
		t.Fatal("the imported run has no findings to keep")
	}
	ok, kept, storied := server.CachedDigest(ts.Server, imported)
	if !ok || storied || !reflect.DeepEqual(kept, lint.Check(imported.Snapshot(), lint.Config{})) {
		t.Fatalf("after import: kept %v, findings %+v, story %v; want the findings %+v and no story yet", ok, kept, storied, wantFindings)
	}
	for range 2 { // the first page makes the story, the second is served it
		findings, st := server.Digest(ts.Server, imported)
		if !reflect.DeepEqual(findings, wantFindings) || !reflect.DeepEqual(st, wantStory) {
			t.Fatalf("imported run's digest = %+v, %+v; want %+v, %+v", findings, st, wantFindings, wantStory)
		}
		if ok, _, storied := server.CachedDigest(ts.Server, imported); !ok || !storied {
			t.Fatalf("after its page, the imported run's story is not kept")
		}
	}

	rec := ts.addRecording(t, "r-going-on")
	emitMessages(rec, 1, "hi")
	findings, st := server.Digest(ts.Server, rec)
	if f, s := uncached(rec); !reflect.DeepEqual(findings, f) || !reflect.DeepEqual(st, s) {
		t.Fatalf("a running run's digest = %+v, %+v; want %+v, %+v", findings, st, f, s)
	}
	if ok, _, _ := server.CachedDigest(ts.Server, rec); ok {
		t.Fatal("a run still going on has its digest kept")
	}
	rec.Emit(traces.Event{Kind: traces.KindTransfer, Agent: "echo_agent", Transfer: &traces.Transfer{
		From: "echo_agent", To: "refunds_agent", Mode: traces.TransferLLM, Outcome: traces.TransferFailed,
		Error: "transfer failed: agent 'refunds_agent' not found"}})
	rec.Finish(traces.StatusInterrupted, "")
	ended, _ := uncached(rec)
	if findings, _ := server.Digest(ts.Server, rec); len(ended) == 0 || !reflect.DeepEqual(findings, ended) {
		t.Fatalf("the ended run's findings = %+v, want its refused transfer: %+v", findings, ended)
	}
	if ok, kept, storied := server.CachedDigest(ts.Server, rec); !ok || !storied || !reflect.DeepEqual(kept, ended) {
		t.Fatalf("the ended run's digest is not kept as made")
	}
	if err := rec.Resume(); err != nil {
		t.Fatal(err)
	}
	rec.Emit(traces.Event{Kind: traces.KindTransfer, Agent: "echo_agent", Transfer: &traces.Transfer{ // news: what was kept is as of an older event
		From: "echo_agent", To: "audit_agent", Mode: traces.TransferLLM, Outcome: traces.TransferFailed,
		Error: "transfer failed: agent 'audit_agent' not found"}})
	rec.Finish(traces.StatusCompleted, "")
	findings, st = server.Digest(ts.Server, rec)
	if f, s := uncached(rec); !reflect.DeepEqual(findings, f) || !reflect.DeepEqual(st, s) || len(f) != len(ended)+1 {
		t.Fatalf("the resumed run's digest = %+v, %+v; want %+v, %+v", findings, st, f, s)
	}
}
