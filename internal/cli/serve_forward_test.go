package cli_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

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
