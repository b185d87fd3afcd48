package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/baton-dev/baton/traces"
)

// post sends body as JSON to path and fails t unless the answer has status want.
func (b *baton) post(t *testing.T, path string, body any, want int) []byte {
	t.Helper()
	return b.postWith(t, path, "", body, want)
}

// postWith is post with the secret of the run's ingestion session.
func (b *baton) postWith(t *testing.T, path, secret string, body any, want int) []byte {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, b.base+path, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("Baton-Run-Secret", secret)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("POST %s %s: %d %s, want %d", path, data, res.StatusCode, answer, want)
	}
	return answer
}

// TestPageFollowsAResumedRun: the page of an app's run that stopped at an interrupt shows the
// rest of the run when the app resumes it, without a reload.
func TestPageFollowsAResumedRun(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	tb := newTab(t, nil)
	var created struct{ ID, Secret string }
	if err := json.Unmarshal(b.post(t, "/api/ingest", map[string]any{
		"agents": []traces.Agent{{Name: "bot", Kind: traces.AgentChatModel}},
	}, http.StatusCreated), &created); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC()
	ev := func(seq int64, kind traces.Kind) traces.Event {
		return traces.Event{Seq: seq, Time: at.Add(time.Duration(seq) * time.Millisecond), Kind: kind, Agent: "bot"}
	}
	interrupt := &traces.Interrupt{ID: "int-1", Info: "approve?"}
	first := []traces.Event{ev(1, traces.KindAgentStarted), ev(2, traces.KindInterrupted), ev(3, traces.KindRunFinished)}
	first[0].AgentRun = &traces.AgentRun{Via: "run"}
	first[1].Interrupt = interrupt
	first[2].Agent, first[2].Run = "", &traces.RunMark{Status: traces.StatusInterrupted}
	b.postWith(t, "/api/ingest/"+created.ID, created.Secret, map[string]any{"events": first}, http.StatusOK)

	tb.open(t, b.base+"/runs/"+created.ID)
	tb.waitStatus(t, "interrupted")

	var resumed struct{ Secret string }
	if err := json.Unmarshal(b.post(t, "/api/ingest", map[string]any{"resumes": "int-1"}, http.StatusOK), &resumed); err != nil {
		t.Fatal(err)
	}
	rest := []traces.Event{ev(1, traces.KindResumed), ev(2, traces.KindMessage), ev(3, traces.KindRunFinished)}
	rest[0].Interrupt = interrupt
	rest[1].Message = &traces.Message{Role: "assistant", Content: "approved, done"}
	rest[2].Agent, rest[2].Run = "", &traces.RunMark{Status: traces.StatusCompleted}
	b.postWith(t, "/api/ingest/"+created.ID, resumed.Secret, map[string]any{"events": rest}, http.StatusOK)

	tb.waitStatus(t, "completed")
	tb.waitFor(t, "the resumed part's rows", `document.querySelectorAll('[data-testid=timeline-row]').length === 6`)
}

// TestAppRunTakesTheAppsTime: an app's run is timed by the app's clock, from its run.started to
// its run.finished: the page of a 0.26 s run from an app whose clock is an hour behind the
// server's says 00:00.2, whenever the server registered or closed it.
func TestAppRunTakesTheAppsTime(t *testing.T) {
	t.Parallel()
	b := startBaton(t)
	var created struct{ ID, Secret string }
	if err := json.Unmarshal(b.post(t, "/api/ingest", map[string]any{
		"run":    map[string]string{"flow": "my-app", "input": "hi"},
		"agents": []traces.Agent{{Name: "bot", Kind: traces.AgentChatModel}},
	}, http.StatusCreated), &created); err != nil {
		t.Fatal(err)
	}
	start := time.Now().UTC().Add(-time.Hour)
	events := []traces.Event{
		{Seq: 1, Time: start, Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: "my-app", Input: "hi", Status: traces.StatusRunning}},
		{Seq: 2, Time: start.Add(10 * time.Millisecond), Kind: traces.KindAgentStarted, Agent: "bot", AgentRun: &traces.AgentRun{Via: "run"}},
		{Seq: 3, Time: start.Add(250 * time.Millisecond), Kind: traces.KindMessage, Agent: "bot", Message: &traces.Message{Role: "assistant", Content: "hello"}},
		{Seq: 4, Time: start.Add(255 * time.Millisecond), Kind: traces.KindAgentFinished, Agent: "bot", AgentRun: &traces.AgentRun{}},
		{Seq: 5, Time: start.Add(260 * time.Millisecond), Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: traces.StatusCompleted}},
	}
	b.postWith(t, "/api/ingest/"+created.ID, created.Secret, map[string]any{"events": events}, http.StatusOK)
	b.waitRunEnded(t, created.ID, waitTimeout)

	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+created.ID)
	tb.waitStatus(t, "completed")
	if got := evalJS[string](t, tb, `document.querySelector('[data-testid=elapsed]').textContent`); got != "00:00.2" {
		t.Errorf("the page says the run took %s, want the app's 00:00.2", got)
	}
}
