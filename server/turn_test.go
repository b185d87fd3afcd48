package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// TestConversationTurns: POST /api/runs/:id/turn runs the flow again on the user's next words,
// fed the conversation so far (each earlier turn's input and final answer) before them, in the
// run's conversation; a turn taken from an earlier run leaves out the turns after it. Bad turns
// get a 400 saying why.
func TestConversationTurns(t *testing.T) {
	ts := mustOpenServer(t, server.Config{Flows: []agents.Flow{catalogueFlow(t, "supervisor")}})
	server.SetRunner(ts.Server, agents.RunFlow)
	first := ts.ended(t, ts.createRun(t, `{"flow":"supervisor","pace_ms":0}`))
	turn := func(from traces.Trace, input string) traces.Trace {
		t.Helper()
		res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + from.Run.ID + "/turn",
			body: `{"input":"` + input + `","pace_ms":0}`})
		if res.status != http.StatusCreated {
			t.Fatalf("turn: %d %s", res.status, res.body)
		}
		tr := ts.ended(t, strings.TrimPrefix(res.header.Get("Location"), "/runs/"))
		if tr.Run.Status != traces.StatusCompleted {
			t.Fatalf("the turn %q ended %s: %s", input, tr.Run.Status, tr.Run.Error)
		}
		return tr
	}
	second := turn(first, "And Texas?")
	third := turn(second, "Thanks.")
	again := turn(first, "What about Ohio?")

	want := func(tr traces.Trace, turns ...traces.Trace) {
		t.Helper()
		if tr.Run.Conversation != first.Run.ID {
			t.Errorf("run %s is in conversation %q, want the first run's id %q", tr.Run.ID, tr.Run.Conversation, first.Run.ID)
		}
		var fed []traces.Message
		for _, e := range tr.Events {
			if e.Kind == traces.KindModelStarted {
				fed = e.Model.Input
				break
			}
		}
		var said []string
		for _, m := range fed {
			if m.Role == "user" || m.Role == "assistant" {
				said = append(said, m.Role+": "+m.Content)
			}
		}
		var expect []string
		for _, earlier := range turns {
			expect = append(expect, "user: "+earlier.Run.Input, "assistant: "+story.Of(earlier).Answer)
		}
		expect = append(expect, "user: "+tr.Run.Input)
		if strings.Join(said, "\n") != strings.Join(expect, "\n") {
			t.Errorf("run %s's first model call was fed\n%s\nwant\n%s", tr.Run.ID, strings.Join(said, "\n"), strings.Join(expect, "\n"))
		}
	}
	want(second, first)
	want(third, first, second)
	want(again, first) // from the first run: the turns taken after it are not its conversation's past

	page := string(ts.do(t, request{path: "/runs/" + third.Run.ID}).body)
	for _, tr := range []traces.Trace{first, second, again} {
		if !strings.Contains(page, `href="/runs/`+tr.Run.ID+`"`) {
			t.Errorf("the third turn's page does not link run %s of its conversation", tr.Run.ID)
		}
	}

	for _, c := range []struct{ name, body, want string }{
		{"empty", `{"input":"  "}`, "input is empty"},
		{"unknown field", `{"text":"hi"}`, `unknown field "text"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + first.Run.ID + "/turn", body: c.body})
			if res.status != http.StatusBadRequest || !strings.Contains(res.apiError(t), c.want) {
				t.Errorf("got %d %s, want 400 saying %q", res.status, res.body, c.want)
			}
		})
	}
}

// TestTurnOfAnInterruptedRun: a run that waits at an interrupt is resumed, not continued: its
// next turn is refused with a 409 that says so, and the page does not offer one.
func TestTurnOfAnInterruptedRun(t *testing.T) {
	ts := approvalServer(t)
	id := ts.createRun(t, `{"flow":"approval"}`)
	ts.waitStatus(t, id, traces.StatusInterrupted)
	res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + id + "/turn", body: `{"input":"and then?"}`})
	if res.status != http.StatusConflict || !strings.Contains(res.apiError(t), "waits for a decision") {
		t.Errorf("turn of an interrupted run: %d %s, want 409 saying it waits for a decision", res.status, res.body)
	}
	if form := page(t, ts.do(t, request{path: "/runs/" + id})).Find(`[data-testid=next-turn]`); form.Length() != 1 || form.AttrOr("hidden", "none") == "none" {
		t.Errorf("the page of an interrupted run offers its next turn (form %d, hidden %q)", form.Length(), form.AttrOr("hidden", "none"))
	}
}
