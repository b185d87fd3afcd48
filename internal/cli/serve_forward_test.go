package cli_test

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/internal/postgres/pgtest"
	"github.com/baton-dev/baton/traces"
)

// TestActionsOnARunReachItsServer: two servers on one PostgreSQL database; a run held at
// breakpoints on A is driven entirely through B, as a load balancer may send a person's clicks
// there: its breakpoints and pace are set, it is continued (A records the continue and holds it
// at its next breakpoint), and aborted, ending canceled on A. Once A is gone (killed, its lease
// not yet expired), an action sent to B is a 503 that says A cannot be reached, with a
// Retry-After, not a 409 that the run is not held.
func TestActionsOnARunReachItsServer(t *testing.T) {
	db := pgtest.Database(t)
	a := startServe(t, db)
	b := serveHere(t, "--db", db)
	status, body := a.do(t, http.MethodPost, "/api/runs", `{"flow":"supervisor","pace_ms":0,"breakpoints":["transfer"]}`)
	if status != http.StatusCreated {
		t.Fatalf("start a held run on A: %d %s", status, body)
	}
	id := idOf(t, body)
	onB := &baton{base: b.url}
	waitFor(t, "B sees the run held", func() bool { return count(traceOn(t, b.url, id), traces.KindPaused) == 1 })

	if status, body := onB.do(t, http.MethodPost, "/api/runs/"+id+"/breakpoints", `{"breakpoints":["transfer","model"]}`); status != http.StatusOK ||
		!bytes.Contains(body, []byte(`"model"`)) {
		t.Fatalf("set the breakpoints through B: %d %s; want 200 with them", status, body)
	}
	if status, body := onB.do(t, http.MethodPost, "/api/runs/"+id+"/pace", `{"pace_ms":5}`); status != http.StatusNoContent {
		t.Fatalf("set the pace through B: %d %s; want 204", status, body)
	}
	if status, body := onB.do(t, http.MethodPost, "/api/runs/"+id+"/continue", `{"action":"continue"}`); status != http.StatusOK {
		t.Fatalf("continue through B: %d %s; want 200", status, body)
	}
	waitFor(t, "A holds the run again after B's continue", func() bool {
		tr := traceOn(t, a.base, id)
		return count(tr, traces.KindContinued) == 1 && count(tr, traces.KindPaused) == 2
	})
	if status, body := onB.do(t, http.MethodPost, "/api/runs/"+id+"/continue", `{"action":"abort"}`); status != http.StatusOK {
		t.Fatalf("abort through B: %d %s; want 200", status, body)
	}
	waitFor(t, "the run ends canceled on A", func() bool { return runStatus(t, a.base, id) == traces.StatusCanceled })
	waitFor(t, "B shows the run canceled", func() bool { return runStatus(t, b.url, id) == traces.StatusCanceled })

	status, body = a.do(t, http.MethodPost, "/api/runs", `{"flow":"supervisor","pace_ms":0,"breakpoints":["transfer"]}`)
	if status != http.StatusCreated {
		t.Fatalf("start a second held run on A: %d %s", status, body)
	}
	second := idOf(t, body)
	waitFor(t, "B sees the second run held", func() bool { return count(traceOn(t, b.url, second), traces.KindPaused) == 1 })
	a.kill()
	req, _ := http.NewRequest(http.MethodPost, b.url+"api/runs/"+second+"/continue", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var msg bytes.Buffer
	msg.ReadFrom(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" ||
		!strings.Contains(msg.String(), "cannot be reached") {
		t.Errorf("continue through B of a run on a dead A: %d, Retry-After %q, %s; want 503 saying A cannot be reached, with a Retry-After",
			res.StatusCode, res.Header.Get("Retry-After"), msg.String())
	}
}

// idOf reads the id of the answer to POST /api/runs.
func idOf(t *testing.T, body []byte) string {
	t.Helper()
	_, rest, ok := bytes.Cut(body, []byte(`"id":"`))
	id, _, ok2 := bytes.Cut(rest, []byte(`"`))
	if !ok || !ok2 {
		t.Fatalf("no id in %s", body)
	}
	return string(id)
}

// count is how many events of kind tr has.
func count(tr traces.Trace, kind traces.Kind) int {
	n := 0
	for _, e := range tr.Events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// TestAResumedRunGoesOnAtAnotherServer: a run of A's waits at its interrupt; a viewer on B
// saw it end interrupted. A person's decision sent to B resumes it on A (where its checkpoint
// is), and B, which followed the run to its interruption, follows the resumed part: a viewer
// that comes back to B from where it was gets the rest of the run, once and in order, through its
// end, completed, as A recorded it.
func TestAResumedRunGoesOnAtAnotherServer(t *testing.T) {
	db := pgtest.Database(t)
	a := serveHere(t, "--db", db)
	b := serveHere(t, "--db", db)
	onA, onB := &baton{base: a.url}, &baton{base: b.url}
	id := onA.start(t, "approval", 0)
	v := follow(t, b.url, id)
	<-v.done
	n := len(v.events)
	if n == 0 || v.events[n-1].Kind != traces.KindRunFinished || v.events[n-1].Run.Status != traces.StatusInterrupted {
		t.Fatalf("the viewer on B read %d events, not ending with the run interrupted", n)
	}
	var status int
	var body []byte
	waitFor(t, "a resume sent to B is taken", func() bool {
		status, body = onB.do(t, http.MethodPost, "/api/runs/"+id+"/resume", `{"approve":true,"comment":"ok"}`)
		return !(status == http.StatusConflict && bytes.Contains(body, []byte("still running"))) // A's recorder lets go
	})
	if status != http.StatusAccepted {
		t.Fatalf("resume through B: %d %s; want 202", status, body)
	}
	waitFor(t, "B shows the run going on", func() bool { return runStatus(t, b.url, id) != traces.StatusInterrupted })
	rest := followAfter(t, b.url, id, int64(n))
	<-rest.done
	want := traceOn(t, a.url, id)
	if want.Run.Status != traces.StatusCompleted {
		t.Fatalf("the run ended %s on A; want completed", want.Run.Status)
	}
	if len(rest.events) != len(want.Events)-n {
		t.Fatalf("the viewer back on B read %d events after %d; A recorded %d", len(rest.events), n, len(want.Events))
	}
	for i, e := range rest.events {
		if w := want.Events[n+i]; e.Seq != w.Seq || e.Kind != w.Kind {
			t.Fatalf("the viewer back on B read event %d %s; A recorded %d %s", e.Seq, e.Kind, w.Seq, w.Kind)
		}
	}
	if got := traceOn(t, b.url, id); got.Run.Status != traces.StatusCompleted || len(got.Events) != len(want.Events) {
		t.Errorf("B's trace of the run is %s with %d events; A's completed with %d", got.Run.Status, len(got.Events), len(want.Events))
	}
}

// TestTypingReachesItsServer: a page on B of a run A runs gets the replies A types: B passes
// the page's typing socket on to A, which sends what is being typed ([] while nothing is) until
// the run ends, where B alone would close it at once, the run not running there.
func TestTypingReachesItsServer(t *testing.T) {
	db := pgtest.Database(t)
	a := serveHere(t, "--db", db, "--stream")
	b := serveHere(t, "--db", db)
	id := (&baton{base: a.url}).start(t, "supervisor", 200)
	conn, _, err := websocket.DefaultDialer.Dial("ws://"+strings.TrimPrefix(b.url, "http://")+"runs/"+id+"/typing", nil)
	if err != nil {
		t.Fatalf("the typing socket on B: %v", err)
	}
	defer conn.Close()
	messages := 0
	for {
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		var replies []struct{ Agent, Text string }
		err := conn.ReadJSON(&replies)
		var closed *websocket.CloseError
		if errors.As(err, &closed) {
			if messages == 0 || closed.Text != "run finished" {
				t.Fatalf("the typing socket on B closed (%v) after %d messages; want A's, to the run's end", err, messages)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		messages++
	}
	if st := runStatus(t, a.url, id); st != traces.StatusCompleted {
		t.Errorf("the run is %s on A once the typing socket closed; want completed", st)
	}
}
