package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// handOff emits a root turn of echo_agent that hands the run to target, and target's turn.
func handOff(rec *traces.Recording, target string) {
	rec.Emit(traces.Event{Kind: traces.KindAgentStarted, Agent: "echo_agent", AgentRun: &traces.AgentRun{Via: "run",
		Input: []traces.Message{{Role: "user", Content: "hi"}}}})
	rec.Emit(traces.Event{Kind: traces.KindTransfer, Agent: "echo_agent", Transfer: &traces.Transfer{From: "echo_agent", To: target, Mode: traces.TransferLLM}})
	rec.Emit(traces.Event{Kind: traces.KindAgentStarted, Agent: target, AgentRun: &traces.AgentRun{Via: "transfer",
		Input: []traces.Message{{Role: "user", Content: "hi"}}}})
	rec.Finish(traces.StatusCompleted, "")
}

// TestDiffPage: /diff names the first divergence of two runs that took different routes, with
// links to the events on each side, says two runs that did the same do not differ, and asks for
// two runs when it does not get them.
func TestDiffPage(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	handOff(ts.addRecording(t, "r-billing"), "billing_agent")
	handOff(ts.addRecording(t, "r-tech"), "tech_agent")
	handOff(ts.addRecording(t, "r-billing-2"), "billing_agent")

	res := ts.do(t, request{path: "/diff?a=r-billing&b=r-tech"})
	html := string(res.body)
	for _, want := range []string{`data-testid="first-divergence" data-what="routing decision"`, "hands off to billing_agent (llm)", "hands off to tech_agent (llm)",
		`href="/runs/r-billing#seq=2"`, `href="/runs/r-tech#seq=2"`} {
		if res.status != http.StatusOK || !strings.Contains(html, want) {
			t.Errorf("diff of two routes: status %d, page lacks %q", res.status, want)
		}
	}
	if res := ts.do(t, request{path: "/diff?run=r-billing&run=r-billing-2"}); res.status != http.StatusOK || !strings.Contains(string(res.body), `data-testid="no-divergence"`) {
		t.Errorf("diff of two runs alike (picked in the list): status %d, no \"no divergence\"", res.status)
	}
	if res := ts.do(t, request{path: "/diff?run=r-billing"}); res.status != http.StatusBadRequest || !strings.Contains(string(res.body), "a diff compares two runs") {
		t.Errorf("one run picked: status %d: %s", res.status, res.body)
	}
	if res := ts.do(t, request{path: "/diff?a=r-billing&b=nope"}); res.status != http.StatusNotFound {
		t.Errorf("an unknown run: status %d", res.status)
	}
}
