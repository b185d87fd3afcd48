package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// interruptedRun has an app stream a run that stops at interrupt int-7: events 1 to 4, the last
// run.finished {interrupted}.
func (ts *testServer) interruptedRun(tb testing.TB) (id string, posted []traces.Event) {
	tb.Helper()
	id = ts.startIngest(tb, `{"run":{"conversation":"conv-9"},"agents":[{"name":"bot","kind":"chat_model"}]}`, nil, http.StatusCreated).ID
	posted = appEvents(1, traces.KindRunStarted, traces.KindAgentStarted, traces.KindInterrupted, traces.KindRunFinished)
	posted[3].Run.Status = traces.StatusInterrupted
	ts.postEvents(tb, id, nil, 5, posted...)
	if st := ts.recording(tb, id).Run().Status; st != traces.StatusInterrupted {
		tb.Fatalf("run status %s, want interrupted", st)
	}
	return id, posted
}

func TestIngestResumesAnInterruptedRun(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	id, posted := ts.interruptedRun(t)
	// A viewer that came while the run was interrupted sees it end there.
	early := ts.mustDial(t, "/api/runs/"+id+"/events")
	if evs, closed := readEvents(t, early); len(evs) != 4 || closed.Code != websocket.CloseNormalClosure {
		t.Fatalf("viewer of the interrupted run: %d events, %v", len(evs), closed)
	}

	res := ts.startIngest(t, `{"resumes":"int-7","agents":[{"name":"refunds","kind":"chat_model","parent":"bot","relation":"subagent"}]}`, nil, http.StatusOK)
	if res.ID != id {
		t.Fatalf("resumed as %s, want the interrupted run %s", res.ID, id)
	}
	if st := ts.recording(t, id).Run().Status; st != traces.StatusRunning {
		t.Errorf("status after the resume call %s, want running", st)
	}
	late := ts.mustDial(t, "/api/runs/"+id+"/events?after=4")
	// The run page of a reconnecting viewer follows the resumed run too.
	page := ts.mustDial(t, "/runs/"+id+"/live?after=4")
	rest := appEvents(1, traces.KindResumed, traces.KindMessage, traces.KindRunFinished) // the new session counts from 1
	ts.postEvents(t, id, nil, 3, rest[:2]...)
	assertSameEvents(t, readN(t, late, 2), rest[:2], 5)
	ts.postEvents(t, id, nil, 4, rest[2])
	evs, closed := readEvents(t, late)
	assertSameEvents(t, evs, rest[2:], 7)
	if closed.Code != websocket.CloseNormalClosure {
		t.Errorf("late viewer closed with %v", closed)
	}

	final := readLive(t, page, func(m server.LiveMessage) bool { return m.Status == traces.StatusCompleted })
	if got := rowIDs(t, final); !slices.Equal(got, []string{"ev-5", "ev-6", "ev-7"}) {
		t.Errorf("run page rows after the resume: %v, want ev-5 to ev-7", got)
	}
	if res := ts.do(t, request{path: "/runs/" + id}); res.status != http.StatusOK {
		t.Errorf("GET the resumed run's page: %d", res.status)
	}

	tr := ts.trace(t, id) // read back through traces.Unmarshal, which validates
	assertSameEvents(t, tr.Events, append(posted, rest...), 1)
	if tr.Run.Status != traces.StatusCompleted || tr.Run.Conversation != "conv-9" {
		t.Errorf("run = %+v, want completed in conversation conv-9", tr.Run)
	}
	if _, ok := tr.Agent("refunds"); !ok {
		t.Errorf("agents %+v lack the one the resume call named", tr.Agents)
	}
	if n := len(ts.Broker.Runs()); n != 1 {
		t.Errorf("%d runs, want the one run told as one story", n)
	}
}

func TestIngestResumeOfAnUnknownInterruptStartsARun(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	id, _ := ts.interruptedRun(t)
	res := ts.startIngest(t, `{"resumes":"int-elsewhere"}`, nil, http.StatusCreated)
	if res.ID == id {
		t.Fatal("an unknown interrupt resumed the interrupted run")
	}
	if run := ts.recording(t, res.ID).Run(); run.Conversation != "int-elsewhere" || run.Status != traces.StatusRunning {
		t.Errorf("run = %+v, want a new running run in conversation int-elsewhere", run)
	}
	if st := ts.recording(t, id).Run().Status; st != traces.StatusInterrupted {
		t.Errorf("the interrupted run is %s now", st)
	}
}

func TestIngestResumedRunStartsWithResumed(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	id, _ := ts.interruptedRun(t)
	ts.startIngest(t, `{"resumes":"int-7"}`, nil, http.StatusOK)
	for _, k := range []traces.Kind{traces.KindMessage, traces.KindRunStarted} {
		res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest/" + id, body: batchBody(t, appEvents(1, k))})
		if res.status != http.StatusBadRequest || !strings.Contains(res.apiError(t), fmt.Sprintf("events[0] (%s) is", k)) {
			t.Errorf("%s first: %d %s, want 400", k, res.status, res.body)
		}
	}
	ts.postEvents(t, id, nil, 2, appEvent(1, traces.KindResumed))
}

func TestIngestResumedRunThatGoesQuietStaysValid(t *testing.T) {
	ts := mustOpenServer(t, server.Config{IngestTimeout: 50 * time.Millisecond})
	id := ts.startIngest(t, `{}`, nil, http.StatusCreated).ID
	stop := appEvents(1, traces.KindInterrupted, traces.KindRunFinished)
	stop[1].Run.Status = traces.StatusInterrupted
	ts.postEvents(t, id, nil, 3, stop...)
	ts.startIngest(t, `{"resumes":"int-7"}`, nil, http.StatusOK)
	receive(t, ts.recording(t, id).Done())

	tr := ts.trace(t, id) // validates: a resumed event follows the interrupted run.finished
	got := fmt.Sprint(kinds(tr.Events))
	if want := "[interrupted run.finished resumed run.finished]"; got != want || tr.Run.Status != traces.StatusInterrupted {
		t.Errorf("events %s, status %s; want %s, interrupted", got, tr.Run.Status, want)
	}
	// The trace says it went on from int-7: a second resume of it is refused, saying where it went.
	res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest", body: `{"resumes":"int-7"}`})
	if res.status != http.StatusConflict || !strings.Contains(res.apiError(t), "interrupt int-7 was already resumed, in run "+id) {
		t.Errorf("second resume: %d %s, want 409 naming the run", res.status, res.body)
	}
}

// TestIngestResumeEndsTheRunStillOpenAtItsInterrupt: an app that exits right after its last event
// may leave its run's session open, its interrupt posted (or foreseen in its ending) but not its
// end, and another process resume it at once. The resume proves the run stopped there: the session
// is ended at once, as its ending says (tail and time) or else interrupted at its last event, and
// the resume goes on in the same run, not in a run of its own.
func TestIngestResumeEndsTheRunStillOpenAtItsInterrupt(t *testing.T) {
	stopped := appEvents(1, traces.KindRunStarted, traces.KindAgentStarted, traces.KindInterrupted, traces.KindAgentFinished)
	endAt := stopped[3].Time.Add(time.Millisecond)
	for _, tc := range []struct {
		name   string
		posted []traces.Event
		ending map[string]any
		endAt  time.Time
	}{
		{"interrupt posted", stopped[:3], nil, stopped[2].Time},
		{"interrupt posted, ending", stopped[:3], map[string]any{"status": "interrupted", "time": endAt, "tail": stopped[3:]}, endAt},
		{"interrupt foreseen", stopped[:2], map[string]any{"status": "interrupted", "time": endAt, "tail": stopped[2:]}, endAt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := mustOpenServer(t, server.Config{})
			id := ts.startIngest(t, `{"run":{"conversation":"conv-9"}}`, nil, http.StatusCreated).ID
			body := map[string]any{"events": tc.posted}
			if tc.ending != nil {
				body["ending"] = tc.ending
			}
			data, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			if res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest/" + id, body: string(data)}); res.status != http.StatusOK {
				t.Fatalf("post: %d %s", res.status, res.body)
			}

			if res := ts.startIngest(t, `{"resumes":"int-7"}`, nil, http.StatusOK); res.ID != id {
				t.Fatalf("resumed as %s, want the run still open at the interrupt, %s", res.ID, id)
			}
			rest := appEvents(1, traces.KindResumed, traces.KindMessage, traces.KindRunFinished)
			ts.postEvents(t, id, nil, 4, rest...)
			tr := ts.trace(t, id) // validates: resumed follows an interrupted run.finished
			want := "[run.started agent.started interrupted run.finished resumed message run.finished]"
			if tc.ending != nil {
				want = "[run.started agent.started interrupted agent.finished run.finished resumed message run.finished]"
			}
			if got := fmt.Sprint(kinds(tr.Events)); got != want {
				t.Errorf("events %s, want %s", got, want)
			}
			end := tr.Events[slices.IndexFunc(tr.Events, func(e traces.Event) bool { return e.Kind == traces.KindRunFinished })]
			if end.Run.Status != traces.StatusInterrupted || !end.Time.Equal(tc.endAt) {
				t.Errorf("the first part ended %+v at %v, want interrupted at %v", end.Run, end.Time, tc.endAt)
			}
			if tr.Run.Status != traces.StatusCompleted || tr.Run.Conversation != "conv-9" || len(ts.Broker.Runs()) != 1 {
				t.Errorf("run %+v among %d runs, want the one run completed in conv-9", tr.Run, len(ts.Broker.Runs()))
			}
		})
	}
}
