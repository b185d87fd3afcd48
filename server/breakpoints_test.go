package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// heldIn returns the held banner of a live message's outcome fragment, if it has one.
func heldIn(t *testing.T, m server.LiveMessage) *goquery.Selection {
	t.Helper()
	for _, f := range m.Fragments {
		if f.Target != "run-outcome" {
			continue
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(f.HTML))
		if err != nil {
			t.Fatal(err)
		}
		if s := doc.Find(`[data-testid="run-held"]`); s.Length() == 1 {
			return s
		}
	}
	return nil
}

// waitHeld reads conn until the page shows the run held, and returns the banner.
func waitHeld(t *testing.T, conn *websocket.Conn) *goquery.Selection {
	t.Helper()
	var held *goquery.Selection
	readLive(t, conn, func(m server.LiveMessage) bool {
		held = heldIn(t, m)
		return held != nil
	})
	return held
}

// TestBreakpointsThroughTheServer: a catalogue run started with a breakpoint is held where it
// says; a page following it live shows the banner, and so do a reloaded page and a second
// viewer that joins while it is held; continuing through the API (here an edit of the deciding
// reply, then an abort) does what it says and the trace records it.
func TestBreakpointsThroughTheServer(t *testing.T) {
	ts := mustOpenServer(t, server.Config{Flows: []agents.Flow{catalogueFlow(t, "supervisor")}})
	server.SetRunner(ts.Server, agents.RunFlow)
	id := ts.createRun(t, `{"flow":"supervisor","pace_ms":0,"breakpoints":["transfer:research_agent"]}`)
	first := ts.mustDial(t, "/runs/"+id+"/live")
	held := waitHeld(t, first)
	if b, _ := held.Attr("data-break"); b != traces.BreakTransfer {
		t.Errorf("held at a %q breakpoint; want transfer", b)
	}
	if d := held.Find(`[data-testid="held-detail"]`).Text(); d != "supervisor transfers to research_agent" {
		t.Errorf("detail = %q", d)
	}
	if v, _ := held.Find(`[data-testid="held-transfer"]`).Attr("value"); v != "research_agent" {
		t.Errorf("transfer field = %q", v)
	}

	// A reload and a second viewer see the same.
	doc := page(t, ts.do(t, request{path: "/runs/" + id}))
	if doc.Find(`[data-testid="run-held"]`).Length() != 1 || doc.Find(`[data-testid="breakpoints"]`).AttrOr("value", "") != "transfer:research_agent" {
		t.Error("a reloaded page does not show the run held, or its breakpoints")
	}
	second := ts.mustDial(t, "/runs/"+id+"/live")
	waitHeld(t, second)

	// Bad requests say what to fix and leave the run held.
	for _, c := range []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"unknown action", "/continue", `{"action":"skip"}`, http.StatusBadRequest, `action "skip" is not continue, step or abort`},
		{"input at a transfer", "/continue", `{"input":[{"role":"user","content":"x"}]}`, http.StatusBadRequest, "input can be edited only at a model breakpoint"},
		{"step kind without a step", "/continue", `{"action":"continue","step":"model"}`, http.StatusBadRequest, `step "model": give it with action step`},
		{"step to an unknown kind", "/continue", `{"action":"step","step":"handoff"}`, http.StatusBadRequest, `step "handoff": give it with action step, one of transfer`},
		{"unknown kind", "/breakpoints", `{"breakpoints":["handoff"]}`, http.StatusBadRequest, `breakpoint kind "handoff" is not one of transfer`},
		{"unknown agent", "/breakpoints", `{"breakpoints":["transfer:mth_agent"]}`, http.StatusBadRequest, `flow supervisor has no agent "mth_agent"`},
		{"result at a transfer", "/continue", `{"result":"7"}`, http.StatusBadRequest, "result can be given only at a tool or agenttool breakpoint"},
		{"value at a transfer", "/continue", `{"value":"x"}`, http.StatusBadRequest, "value can be edited only at a session breakpoint"},
		{"next runs of Baton's own run", "/breakpoints", `{"breakpoints":[],"next_runs":true}`, http.StatusBadRequest, "next_runs keeps breakpoints for an app's next runs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + id + c.path, body: c.body})
			if res.status != c.status || !strings.Contains(res.apiError(t), c.want) {
				t.Errorf("got %d %s; want %d saying %q", res.status, res.body, c.status, c.want)
			}
		})
	}

	// Edit the deciding reply: math_agent instead; then hold again before math_agent's model.
	// The answer says, as the page does, what research_agent would be fed: the user's request
	// first (its instruction is not in the trace: it has not called its model yet).
	res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + id + "/breakpoints", body: `{"breakpoints":["model@math_agent"]}`})
	var answer struct {
		Held struct {
			Feed []struct{ Role, Content, Origin string } `json:"feed"`
		} `json:"held"`
	}
	if err := json.Unmarshal(res.body, &answer); res.status != http.StatusOK || err != nil {
		t.Fatalf("set breakpoints: %d %s", res.status, res.body)
	}
	if f := answer.Held.Feed; len(f) == 0 || f[0].Origin != "user input" || f[0].Role != "user" || f[0].Content == "" {
		t.Errorf("the held answer's feed = %+v, want the user's input first", f)
	}
	res = ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + id + "/continue",
		body: `{"reply":{"role":"assistant","content":"maths first","tool_calls":[{"name":"transfer_to_agent","arguments":"{\"agent_name\":\"math_agent\"}"}]}}`})
	if res.status != http.StatusOK {
		t.Fatalf("continue: %d %s", res.status, res.body)
	}
	held = waitHeld(t, second)
	if b, _ := held.Attr("data-break"); b != traces.BreakModel || held.Find(`[data-testid="held-input"]`).Length() != 1 {
		t.Fatalf("held again at %q; want model, with its input to edit", b)
	}
	if res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + id + "/continue", body: `{"action":"abort","by":"page"}`}); res.status != http.StatusOK {
		t.Fatalf("abort: %d %s", res.status, res.body)
	}
	tr := ts.ended(t, id)
	if tr.Run.Status != traces.StatusCanceled {
		t.Errorf("status %s; want canceled", tr.Run.Status)
	}
	var continued []traces.Pause
	var transfers []string
	for _, e := range tr.Events {
		switch e.Kind {
		case traces.KindContinued:
			continued = append(continued, *e.Pause)
		case traces.KindTransfer:
			transfers = append(transfers, e.Transfer.To)
		}
	}
	if len(continued) != 2 || continued[0].By != "api" || continued[0].Edited != "transfer target: research_agent → math_agent; reply text" ||
		continued[1].Action != traces.ActionAbort || continued[1].By != "page" {
		t.Errorf("continued = %+v", continued)
	}
	if len(transfers) == 0 || transfers[0] != "math_agent" {
		t.Errorf("transfers = %v; want math_agent first, as edited", transfers)
	}
	if res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + id + "/continue", body: `{}`}); res.status != http.StatusConflict {
		t.Errorf("continue of an ended run: %d; want 409", res.status)
	}
}

// TestRunWithoutBreakpointsCannotBeHeld: a run started without "breakpoints" has none to set.
func TestRunWithoutBreakpointsCannotBeHeld(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	ch := make(chan started, 1)
	server.SetRunner(ts.Server, handOver(ch))
	id := ts.createRun(t, `{"flow":"echo"}`)
	run := receive(t, ch)
	defer run.rec.Finish(traces.StatusCompleted, "")
	if run.opts.Debugger != nil {
		t.Error("a run started without breakpoints got a debugger")
	}
	res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + id + "/breakpoints", body: `{"breakpoints":["transfer"]}`})
	if res.status != http.StatusConflict || !strings.Contains(res.apiError(t), "was started without breakpoints") {
		t.Errorf("got %d %s", res.status, res.body)
	}
}

// TestShutdownWhileHeld: a server that stops while a run is held ends the run interrupted (no one
// decided its end, unlike the runs going on, which end canceled), with the hold and its end
// recorded: continued, aborted by Baton.
func TestShutdownWhileHeld(t *testing.T) {
	broker := live.NewBroker(0)
	closeBrokerAtEnd(t, broker)
	ts := mustServe(t, server.Config{Broker: broker, Flows: []agents.Flow{catalogueFlow(t, "supervisor")}})
	server.SetRunner(ts.Server, agents.RunFlow)
	id := ts.createRun(t, `{"flow":"supervisor","pace_ms":0,"breakpoints":["tool:search"]}`)
	live := ts.mustDial(t, "/runs/"+id+"/live")
	waitHeld(t, live)
	if err := ts.stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	rec, err := broker.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	tr := rec.Snapshot()
	if tr.Run.Status != traces.StatusInterrupted {
		t.Errorf("status %s (%s); want interrupted", tr.Run.Status, tr.Run.Error)
	}
	var pauses []string
	for _, e := range tr.Events {
		if e.Pause != nil {
			pauses = append(pauses, string(e.Kind)+":"+e.Pause.Action+":"+e.Pause.By)
		}
	}
	if strings.Join(pauses, " ") != "paused:: continued:abort:baton" {
		t.Errorf("pause events = %v; want paused, then continued aborted by baton", pauses)
	}
}

// TestResumedRunIsHeldThroughTheServer: a run started with breakpoints that ends interrupted
// keeps them: resumed, it is held at its model calls as its first part was, continued through the
// API like any other hold, and completes.
func TestResumedRunIsHeldThroughTheServer(t *testing.T) {
	ts := mustOpenServer(t, server.Config{Flows: []agents.Flow{catalogueFlow(t, "approval")}})
	server.SetRunner(ts.Server, agents.RunFlow)
	id := ts.createRun(t, `{"flow":"approval","pace_ms":0,"breakpoints":["model"]}`)
	// continueUntil continues each hold until the run is status.
	continueUntil := func(status traces.Status) traces.Trace {
		var tr traces.Trace
		eventually(t, "run "+id+" continued until "+string(status), func() bool {
			ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + id + "/continue", body: `{}`}) // 409 while not held
			tr = ts.trace(t, id)
			return tr.Run.Status == status
		})
		return tr
	}
	first := len(kinds(continueUntil(traces.StatusInterrupted).Events))
	var res response
	eventually(t, "the resume taken", func() bool {
		res = ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + id + "/resume", body: `{"approve":true,"comment":"ok"}`})
		return !(res.status == http.StatusConflict && strings.Contains(res.apiError(t), "still running"))
	})
	if res.status != http.StatusAccepted {
		t.Fatalf("resume: %d %s", res.status, res.body)
	}
	held := waitHeld(t, ts.mustDial(t, "/runs/"+id+"/live"))
	if b, _ := held.Attr("data-break"); b != traces.BreakModel {
		t.Fatalf("the resumed part held at %q; want model", b)
	}
	tr := continueUntil(traces.StatusCompleted)
	paused := 0
	for _, e := range tr.Events[first:] {
		if e.Kind == traces.KindPaused {
			paused++
		}
	}
	if paused == 0 {
		t.Errorf("no paused event after the resume; want the resumed part's model calls held")
	}
}
