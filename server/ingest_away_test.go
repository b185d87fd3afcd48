package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// ingestRefusal is the body of a 409 to a post: where the session stands.
type ingestRefusal struct {
	Error string `json:"error"`
	Next  int64  `json:"next"`
	Ended bool   `json:"ended"`
}

// postRefused posts events to run id and requires a 409, whose body it returns.
func (ts *testServer) postRefused(tb testing.TB, id string, events ...traces.Event) ingestRefusal {
	tb.Helper()
	res := ts.do(tb, request{method: http.MethodPost, path: "/api/ingest/" + id, body: batchBody(tb, events)})
	var out ingestRefusal
	if res.status != http.StatusConflict || json.Unmarshal(res.body, &out) != nil {
		tb.Fatalf("POST /api/ingest/%s: %d %s, want 409 saying where the session stands", id, res.status, res.body)
	}
	return out
}

// TestIngestEndingEndsAtTheAppsTime: a run ended from the ending its app posted ends at the time
// the app gave it, however long the server waited before ending it.
func TestIngestEndingEndsAtTheAppsTime(t *testing.T) {
	ts := mustOpenServer(t, server.Config{IngestTimeout: 50 * time.Millisecond})
	id := ts.startIngest(t, `{}`, nil, http.StatusCreated).ID
	ts.postEvents(t, id, nil, 3, appEvents(1, traces.KindRunStarted, traces.KindMessage)...)
	end := appTime.Add(260 * time.Millisecond)
	body := fmt.Sprintf(`{"events":[],"ending":{"status":"completed","time":%q}}`, end.Format(time.RFC3339Nano))
	if res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest/" + id, body: body}); res.status != http.StatusOK {
		t.Fatalf("POST the ending: %d %s", res.status, res.body)
	}
	receive(t, ts.recording(t, id).Done())
	tr := ts.trace(t, id)
	last := tr.Events[len(tr.Events)-1]
	if tr.Run.Status != traces.StatusCompleted || !last.Time.Equal(end) || !tr.Run.EndedAt.Equal(end) {
		t.Errorf("run %s ended at %s, run.finished at %s: want completed at the app's %s", tr.Run.Status, tr.Run.EndedAt, last.Time, end)
	}
	// The app was only slow: its heartbeat, still with that ending, and its own run.finished
	// are taken as said.
	if res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest/" + id, body: body}); res.status != http.StatusOK {
		t.Errorf("a heartbeat with the same ending after the end: %d %s, want 200", res.status, res.body)
	}
	ts.postEvents(t, id, nil, 4, appEvent(3, traces.KindRunFinished))
	if n := len(ts.trace(t, id).Events); n != 3 {
		t.Errorf("%d events after the late run.finished, want the 3 of the run ended from its ending", n)
	}
}

// TestIngestEndedByItsEndingTakesNothingMore: events that come after the end the app announced
// cannot join the run; the app is told the session is over, and where it stood.
func TestIngestEndedByItsEndingTakesNothingMore(t *testing.T) {
	ts := mustOpenServer(t, server.Config{IngestTimeout: 50 * time.Millisecond})
	id := ts.startIngest(t, `{}`, nil, http.StatusCreated).ID
	ts.postEvents(t, id, nil, 2, appEvent(1, traces.KindRunStarted))
	if res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest/" + id, body: `{"events":[],"ending":{"status":"completed"}}`}); res.status != http.StatusOK {
		t.Fatalf("POST the ending: %d %s", res.status, res.body)
	}
	receive(t, ts.recording(t, id).Done())
	if got := ts.postRefused(t, id, appEvents(2, traces.KindMessage)...); !got.Ended || got.Next != 2 {
		t.Errorf("answer %+v, want ended at next 2", got)
	}
	if n := len(ts.trace(t, id).Events); n != 2 {
		t.Errorf("%d events, want the 2 of the run ended from its ending", n)
	}
}

// TestIngestSaysWhereTheSessionIs: a post sent again, because its answer was lost, is refused with
// the seq the session expects, and stores nothing twice; a post to a session the app ended is
// told where it stood.
func TestIngestSaysWhereTheSessionIs(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	id := ts.startIngest(t, `{}`, nil, http.StatusCreated).ID
	posted := appEvents(1, traces.KindRunStarted, traces.KindMessage, traces.KindMessage)
	ts.postEvents(t, id, nil, 4, posted...)
	again := append(posted, appEvent(4, traces.KindMessage))
	if got := ts.postRefused(t, id, again...); got.Next != 4 || got.Ended || got.Error != "expected event seq 4, got 1: resend from 4" {
		t.Errorf("answer to the post sent again: %+v, want next 4, not ended", got)
	}
	ts.postEvents(t, id, nil, 6, appEvents(4, traces.KindMessage, traces.KindRunFinished)...)
	if n := len(ts.trace(t, id).Events); n != 5 {
		t.Errorf("%d events stored, want each of the 5 once", n)
	}
	if got := ts.postRefused(t, id, appEvents(4, traces.KindMessage, traces.KindRunFinished)...); got.Next != 6 || !got.Ended {
		t.Errorf("answer to the last post sent again: %+v, want ended at next 6", got)
	}
}

// TestIngestQuietAppComesBack: an app that was away for longer than the timeout (a stall, a lost
// connection) and comes back goes on in the same run and session: the run, ended interrupted when
// the app was last heard from, reads resumed and then the rest.
func TestIngestQuietAppComesBack(t *testing.T) {
	ts := mustOpenServer(t, server.Config{IngestTimeout: 50 * time.Millisecond})
	id := ts.startIngest(t, `{}`, nil, http.StatusCreated).ID
	ts.postEvents(t, id, nil, 3, appEvents(1, traces.KindRunStarted, traces.KindMessage)...)
	rec := ts.recording(t, id)
	receive(t, rec.Done())

	// The app comes back with the rest in one post: with a 50 ms timeout, a loaded machine could
	// otherwise make a second gap between two posts.
	ts.postEvents(t, id, nil, 6, appEvents(3, traces.KindMessage, traces.KindMessage, traces.KindRunFinished)...)
	tr := ts.trace(t, id) // read back through traces.Unmarshal, which validates
	got := fmt.Sprint(kinds(tr.Events))
	if want := "[run.started message run.finished resumed message message run.finished]"; got != want || tr.Run.Status != traces.StatusCompleted {
		t.Fatalf("events %s, status %s; want %s, completed", got, tr.Run.Status, want)
	}
	if gap := tr.Events[2]; gap.Run.Status != traces.StatusInterrupted || !strings.Contains(gap.Run.Error, "stopped sending events") {
		t.Errorf("the gap's run.finished: %+v, want interrupted, saying why", gap.Run)
	}
	if back := tr.Events[3]; back.Interrupt.ID != "" || !strings.Contains(back.Interrupt.Info, "the app was heard from again") || !back.Time.Equal(appEvent(3, "message").Time) {
		t.Errorf("the resumed event: %+v at %s, want no interrupt, saying why the run goes on, at the app's next event", back.Interrupt, back.Time)
	}
	if n := len(ts.Broker.Runs()); n != 1 {
		t.Errorf("%d runs, want the one", n)
	}
}

// TestIngestContinuesAfterARestart: a server shut down while an app streams a run, then started
// again on the same database, lets the app go on with the run in a new session, and no one else:
// a continue without the secret of the app's session, or with another, is refused 403 and leaves
// the run as it was. The trace holds the first part, the interrupted end the shutdown wrote, a
// resumed event saying why the run goes on, and the rest.
func TestIngestContinuesAfterARestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	broker, _, closeStore := storedBroker(t, db)
	first := mustOpenServer(t, server.Config{Broker: broker})
	created := first.startIngest(t, `{"run":{"flow":"support"}}`, nil, http.StatusCreated)
	id := created.ID
	other := first.startIngest(t, `{}`, nil, http.StatusCreated) // another app's session, its secret
	first.postEvents(t, id, nil, 3, appEvents(1, traces.KindRunStarted, traces.KindMessage)...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	closeStore()

	broker, _, _ = storedBroker(t, db)
	ts := mustOpenServer(t, server.Config{Broker: broker})
	if got := ts.postRefused(t, id, appEvent(3, traces.KindMessage)); !got.Ended || got.Next != 0 {
		t.Errorf("a post to the session of the stopped server: %+v, want ended, next unknown", got)
	}
	continues := fmt.Sprintf(`{"continues":%q}`, id)
	for name, secret := range map[string]string{"no secret": "", "another session's secret": other.Secret, "a made-up secret": madeUp(created.Secret)} {
		res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest", body: continues, header: map[string]string{runSecretHeader: secret}})
		if res.status != http.StatusForbidden || !strings.Contains(res.apiError(t), "streamed by another session") {
			t.Errorf("a continue with %s after the restart: %d %s, want 403 saying the run is another session's", name, res.status, res.body)
		}
	}
	if tr := ts.trace(t, id); len(tr.Events) != 3 || tr.Run.Status != traces.StatusInterrupted {
		t.Fatalf("after the strangers: %d events, %s; want 3, interrupted", len(tr.Events), tr.Run.Status)
	}
	res := ts.startIngest(t, continues, map[string]string{runSecretHeader: created.Secret}, http.StatusOK)
	if res.ID != id {
		t.Fatalf("continued as %s, want %s", res.ID, id)
	}
	for _, k := range []traces.Kind{traces.KindRunStarted} {
		r := ts.do(t, request{method: http.MethodPost, path: "/api/ingest/" + id, body: batchBody(t, appEvents(1, k))})
		if r.status != http.StatusBadRequest {
			t.Errorf("%s first in the continued session: %d %s, want 400", k, r.status, r.body)
		}
	}
	ts.postEvents(t, id, nil, 3, appEvents(1, traces.KindMessage, traces.KindRunFinished)...)

	tr := ts.trace(t, id)
	got := fmt.Sprint(kinds(tr.Events))
	if want := "[run.started message run.finished resumed message run.finished]"; got != want || tr.Run.Status != traces.StatusCompleted || tr.Run.Flow != "support" {
		t.Fatalf("events %s, run %+v; want %s, completed", got, tr.Run, want)
	}
	if gap := tr.Events[2]; gap.Run.Status != traces.StatusInterrupted || gap.Run.Error != "Baton shut down while the app was sending this run" {
		t.Errorf("the gap's run.finished: %+v", gap.Run)
	}
	if back := tr.Events[3]; !strings.Contains(back.Interrupt.Info, "the app came back") {
		t.Errorf("the resumed event: %+v, want it saying why the run goes on", back.Interrupt)
	}
}

func TestIngestContinueRefusals(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	open := ts.startIngest(t, `{}`, nil, http.StatusCreated).ID
	done := ts.startIngest(t, `{}`, nil, http.StatusCreated).ID
	ts.postEvents(t, done, nil, 3, appEvents(1, traces.KindRunStarted, traces.KindRunFinished)...)
	imported := appEvents(1, traces.KindRunStarted, traces.KindRunFinished)
	imported[1].Run.Status = traces.StatusInterrupted
	rec, err := ts.Broker.Import(traces.Trace{Run: traces.Run{ID: "r-imported", Flow: "app", StartedAt: imported[0].Time}, Events: imported})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, body, secret string
		status             int
		want               string
	}{
		{"an open session's run", fmt.Sprintf(`{"continues":%q}`, open), ts.secret(open), 409, "has an open session"},
		{"a completed run", fmt.Sprintf(`{"continues":%q}`, done), ts.secret(done), 409, "ended completed and cannot go on"},
		{"an unknown run", `{"continues":"r-nope"}`, "", 404, "not found"},
		{"both resumes and continues", fmt.Sprintf(`{"continues":%q,"resumes":"int-7"}`, done), ts.secret(done), 400, "not both"},
		{"another app's run", fmt.Sprintf(`{"continues":%q}`, done), "", 403, "streamed by another session"},
		{"a run no app streamed", fmt.Sprintf(`{"continues":%q}`, rec.ID()), ts.secret(done), 409, "was not streamed by an app"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest", body: tc.body, header: map[string]string{runSecretHeader: tc.secret}})
			if res.status != tc.status || !strings.Contains(res.apiError(t), tc.want) {
				t.Errorf("%d %s, want %d saying %q", res.status, res.body, tc.status, tc.want)
			}
		})
	}
}

// TestIngestStartSentAgainGetsItsSession: a start sent again with the same key, because its answer
// was lost, gets the session the first one opened, not a second run; once that session has ended,
// the key starts a new one.
func TestIngestStartSentAgainGetsItsSession(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	first := ts.startIngest(t, `{"key":"app-run-1"}`, nil, http.StatusCreated)
	if again := ts.startIngest(t, `{"key":"app-run-1"}`, nil, http.StatusCreated); again.ID != first.ID {
		t.Errorf("the start sent again opened %s, want %s", again.ID, first.ID)
	}
	if other := ts.startIngest(t, `{"key":"app-run-2"}`, nil, http.StatusCreated); other.ID == first.ID {
		t.Errorf("another key got the session of the first")
	}
	ts.postEvents(t, first.ID, nil, 3, appEvents(1, traces.KindRunStarted, traces.KindRunFinished)...)
	if later := ts.startIngest(t, `{"key":"app-run-1"}`, nil, http.StatusCreated); later.ID == first.ID {
		t.Errorf("the key of an ended session got it again")
	}
	if n := len(ts.Broker.Runs()); n != 3 {
		t.Errorf("%d runs, want 3", n)
	}

	id, _ := ts.interruptedRun(t)
	for range 2 {
		if res := ts.startIngest(t, `{"resumes":"int-7","key":"app-run-3"}`, nil, http.StatusOK); res.ID != id {
			t.Errorf("the resume went to %s, want %s", res.ID, id)
		}
	}
}

// madeUp returns a secret that differs from secret in its first character only (a fixed "X"
// would be secret itself for one secret in 32).
func madeUp(secret string) string {
	if strings.HasPrefix(secret, "X") {
		return "Y" + secret[1:]
	}
	return "X" + secret[1:]
}
