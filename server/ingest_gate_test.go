package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// answerWithin is how long a test lets an ingest request take: far below the ingest timeouts of
// these tests, which a request held by another client's would wait out.
const answerWithin = 5 * time.Second

// from sends req from local address ip (127.0.0.x: another client, as the server counts them),
// and fails when no answer comes within answerWithin.
func (ts *testServer) from(tb testing.TB, ip string, req request) response {
	tb.Helper()
	res, err := ts.tryFrom(ip, req)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

// tryFrom is from for a goroutine of its own: it returns what went wrong.
func (ts *testServer) tryFrom(ip string, req request) (response, error) {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	client := &http.Client{Timeout: answerWithin, Transport: &http.Transport{DialContext: dialer.DialContext}}
	defer client.CloseIdleConnections()
	r, err := http.NewRequest(req.method, ts.base+req.path, strings.NewReader(req.body))
	if err != nil {
		return response{}, err
	}
	r.Header.Set("Content-Type", "application/json")
	for k, v := range req.header {
		r.Header.Set(k, v)
	}
	res, err := client.Do(r)
	if err != nil {
		return response{}, fmt.Errorf("%s %s from %s: %w", req.method, req.path, ip, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: data}, err
}

// startFrom starts a run from ip and returns its id and secret, or fails unless the answer is
// wantStatus; for a refusal it returns the response.
func (ts *testServer) startFrom(tb testing.TB, ip, body string, wantStatus int) (ingestCreated, response) {
	tb.Helper()
	res := ts.from(tb, ip, request{method: http.MethodPost, path: "/api/ingest", body: body})
	if res.status != wantStatus {
		tb.Fatalf("POST /api/ingest %s from %s: %d %s, want %d", body, ip, res.status, res.body, wantStatus)
	}
	var out ingestCreated
	if res.status < 300 {
		if err := json.Unmarshal(res.body, &out); err != nil {
			tb.Fatal(err)
		}
		ts.secrets.Store(out.ID, out.Secret)
	}
	return out, res
}

// TestIngestSecondResumeIsRefusedAtOnce: two resumes of one interrupt, one after the other and
// two at once: the first goes on in the run, the other is refused at once with a 409 naming the
// run, and an unrelated app streaming meanwhile never waits. (A second resume used to wait, holding
// every ingest request, until the first resumer's session timed out.)
func TestIngestSecondResumeIsRefusedAtOnce(t *testing.T) {
	t.Run("memory", func(t *testing.T) { secondResume(t, nil) })
	t.Run("sqlite", func(t *testing.T) { // its row still says interrupted until the resumed part's first events
		broker, _, _ := storedBroker(t, filepath.Join(t.TempDir(), "baton.db"))
		secondResume(t, broker)
	})
}

func secondResume(t *testing.T, broker *live.Broker) {
	ts := mustOpenServer(t, server.Config{IngestTimeout: time.Minute, Broker: broker})
	id, _ := ts.interruptedRun(t)
	other, _ := ts.startFrom(t, "127.0.0.3", `{}`, http.StatusCreated)
	first, _ := ts.startFrom(t, "127.0.0.1", `{"resumes":"int-7"}`, http.StatusOK)
	if first.ID != id {
		t.Fatalf("resumed as %s, want %s", first.ID, id)
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { // the unrelated app streams while the second resumer asks
		for seq := int64(1); seq <= 20; seq++ {
			kind := traces.KindMessage
			if seq == 1 {
				kind = traces.KindRunStarted
			}
			res, err := ts.tryFrom("127.0.0.3", request{method: http.MethodPost, path: "/api/ingest/" + other.ID,
				body: batchBody(t, appEvents(seq, kind)), header: map[string]string{runSecretHeader: other.Secret}})
			if err != nil || res.status != http.StatusOK {
				t.Errorf("the other app's post %d: %v %d %s", seq, err, res.status, res.body)
				return
			}
		}
	})
	_, second := ts.startFrom(t, "127.0.0.2", `{"resumes":"int-7"}`, http.StatusConflict)
	if msg := second.apiError(t); !strings.Contains(msg, "interrupt int-7 was already resumed, in run "+id) {
		t.Errorf("second resume: %q, want it naming the run", msg)
	}
	wg.Wait()

	// The first resumer goes on undisturbed, the other app's run too.
	ts.postEvents(t, id, nil, 3, appEvents(1, traces.KindResumed, traces.KindRunFinished)...)
	if st := ts.recording(t, other.ID).Run().Status; st != traces.StatusRunning {
		t.Errorf("the other app's run is %s, want running", st)
	}
	if tr := ts.trace(t, id); tr.Run.Status != traces.StatusCompleted || len(ts.Broker.Runs()) != 2 {
		t.Errorf("run %+v among %d runs, want completed, and no run of the second resumer", tr.Run, len(ts.Broker.Runs()))
	}
}

// TestIngestTwoResumesAtOnce: two resumes of one interrupt at once: one goes on, one is refused.
func TestIngestTwoResumesAtOnce(t *testing.T) {
	var wg sync.WaitGroup

	ts2 := mustOpenServer(t, server.Config{IngestTimeout: time.Minute})
	id2, _ := ts2.interruptedRun(t)
	statuses := make(chan int, 2)
	for _, ip := range []string{"127.0.0.1", "127.0.0.2"} {
		wg.Go(func() {
			res, err := ts2.tryFrom(ip, request{method: http.MethodPost, path: "/api/ingest", body: `{"resumes":"int-7"}`})
			if err != nil {
				t.Error(err)
			}
			statuses <- res.status
		})
	}
	wg.Wait()
	got := []int{<-statuses, <-statuses}
	if !(got[0] == http.StatusOK && got[1] == http.StatusConflict || got[0] == http.StatusConflict && got[1] == http.StatusOK) {
		t.Errorf("two resumes at once: %v, want one 200 and one 409", got)
	}
	if st := ts2.recording(t, id2).Run().Status; st != traces.StatusRunning || len(ts2.Broker.Runs()) != 1 {
		t.Errorf("run %s among %d runs, want the one run running again", st, len(ts2.Broker.Runs()))
	}
}

// TestIngestOnlyItsAppWritesToARun: posts for a run without its session's secret, or with another
// run's, are refused 403 and change nothing, whatever they carry (events, run.finished, a
// continue); its app goes on.
func TestIngestOnlyItsAppWritesToARun(t *testing.T) {
	ts := mustOpenServer(t, server.Config{IngestTimeout: time.Minute})
	app := ts.startIngest(t, `{}`, nil, http.StatusCreated)
	stranger := ts.startIngest(t, `{}`, nil, http.StatusCreated)
	ts.postEvents(t, app.ID, nil, 3, appEvents(1, traces.KindRunStarted, traces.KindMessage)...)

	finish := batchBody(t, appEvents(3, traces.KindRunFinished))
	for _, tc := range []struct {
		name, secret string
	}{
		{"no secret", ""},
		{"another run's secret", stranger.Secret},
		{"a guessed secret", strings.Repeat("A", len(app.Secret))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, body := range []string{batchBody(t, appEvents(3, traces.KindMessage)), finish, batchBody(t, nil)} {
				res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest/" + app.ID, body: body, stranger: true,
					header: map[string]string{runSecretHeader: tc.secret}})
				if res.status != http.StatusForbidden || !strings.Contains(res.apiError(t), "streamed by another session") {
					t.Errorf("post %s: %d %s, want 403", body, res.status, res.body)
				}
			}
		})
	}
	if tr := ts.trace(t, app.ID); len(tr.Events) != 2 || tr.Run.Status != traces.StatusRunning {
		t.Fatalf("after the strangers: %d events, %s; want 2, running", len(tr.Events), tr.Run.Status)
	}
	ts.postEvents(t, app.ID, nil, 4, appEvents(3, traces.KindRunFinished)...)
	if st := ts.trace(t, app.ID).Run.Status; st != traces.StatusCompleted {
		t.Errorf("the app's run ended %s, want completed", st)
	}
}

// TestIngestStrangerCannotReopenAQuietRun: a run ended because its app went quiet is reopened by
// its app's next post, never by another client's.
func TestIngestStrangerCannotReopenAQuietRun(t *testing.T) {
	ts := mustOpenServer(t, server.Config{IngestTimeout: 50 * time.Millisecond})
	app := ts.startIngest(t, `{}`, nil, http.StatusCreated)
	ts.postEvents(t, app.ID, nil, 2, appEvent(1, traces.KindRunStarted))
	receive(t, ts.recording(t, app.ID).Done())
	res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest/" + app.ID, body: batchBody(t, appEvents(2, traces.KindMessage)), stranger: true})
	if res.status != http.StatusForbidden {
		t.Fatalf("a stranger's post to the quiet run: %d %s, want 403", res.status, res.body)
	}
	res = ts.do(t, request{method: http.MethodPost, path: "/api/ingest", body: fmt.Sprintf(`{"continues":%q}`, app.ID)})
	if res.status != http.StatusForbidden {
		t.Fatalf("a stranger's continue of the quiet run: %d %s, want 403", res.status, res.body)
	}
	if st := ts.recording(t, app.ID).Run().Status; st != traces.StatusInterrupted {
		t.Errorf("the run is %s, want still interrupted", st)
	}
	ts.postEvents(t, app.ID, nil, 3, appEvents(2, traces.KindMessage)...)
}

// TestIngestBoundsRunsPerClientAndInAll: a client past its bound gets 429, anyone past the
// server's 503, both with a Retry-After and a message saying when; a run that ends frees its place
// at once, and one whose app goes quiet once it expires.
func TestIngestBoundsRunsPerClientAndInAll(t *testing.T) {
	const timeout = 400 * time.Millisecond
	ts := mustOpenServer(t, server.Config{MaxIngestRuns: 3, MaxIngestRunsPerClient: 2, IngestTimeout: timeout})
	a1, _ := ts.startFrom(t, "127.0.0.1", `{}`, http.StatusCreated)
	a2, _ := ts.startFrom(t, "127.0.0.1", `{}`, http.StatusCreated)
	_, tooMany := ts.startFrom(t, "127.0.0.1", `{}`, http.StatusTooManyRequests)
	assertRetry(t, tooMany, "this client (127.0.0.1) streams 2 runs")

	b1, _ := ts.startFrom(t, "127.0.0.2", `{}`, http.StatusCreated)
	_, full := ts.startFrom(t, "127.0.0.2", `{}`, http.StatusServiceUnavailable)
	assertRetry(t, full, "Baton takes 3 streamed runs at once")
	// A resume and a continue take a place too.
	ts.startFrom(t, "127.0.0.4", `{"resumes":"int-9"}`, http.StatusServiceUnavailable)

	// The app's end frees its place at once.
	ts.postEvents(t, a1.ID, nil, 3, appEvents(1, traces.KindRunStarted, traces.KindRunFinished)...)
	a3, _ := ts.startFrom(t, "127.0.0.1", `{}`, http.StatusCreated)

	// A run kept alive keeps its place; the quiet ones expire and free theirs.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(timeout / 8) // the app's heartbeat
		defer tick.Stop()
		for {
			if res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest/" + a3.ID, body: batchBody(t, nil)}); res.status != http.StatusOK {
				t.Errorf("heartbeat: %d %s", res.status, res.body)
				return
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	receive(t, ts.recording(t, a2.ID).Done())
	receive(t, ts.recording(t, b1.ID).Done())
	close(stop)
	wg.Wait()
	for _, id := range []string{a2.ID, b1.ID} {
		if run := ts.recording(t, id).Run(); run.Status != traces.StatusInterrupted || !strings.Contains(run.Error, "the app stopped sending events") {
			t.Errorf("quiet run %s: %+v, want interrupted as quiet", id, run)
		}
	}
	if st := ts.recording(t, a3.ID).Run().Status; st != traces.StatusRunning {
		t.Errorf("the run kept alive is %s", st)
	}
	// A session gives its place back just after its run is finished (a refused start takes none).
	started := 0
	eventually(t, "127.0.0.2 streams two runs again", func() bool {
		if res := ts.from(t, "127.0.0.2", request{method: http.MethodPost, path: "/api/ingest", body: `{}`}); res.status == http.StatusCreated {
			started++
		}
		return started == 2
	})
	ts.startFrom(t, "127.0.0.5", `{}`, http.StatusServiceUnavailable)
}

// assertRetry checks a refusal for being busy: a Retry-After in seconds (at least 1) and a message
// that says what is full and when to retry.
func assertRetry(tb testing.TB, res response, what string) {
	tb.Helper()
	after, err := strconv.Atoi(res.header.Get("Retry-After"))
	msg := res.apiError(tb)
	if err != nil || after < 1 || !strings.Contains(msg, what) || !strings.Contains(msg, fmt.Sprintf("retry in %d s", after)) {
		tb.Errorf("refusal: Retry-After %q, %q; want seconds, saying %q and when to retry", res.header.Get("Retry-After"), msg, what)
	}
}

// TestIngestStartsThatFailFreeTheirPlace: a start refused for what it asks (an unknown run to
// continue, a second resume) takes no place.
func TestIngestStartsThatFailFreeTheirPlace(t *testing.T) {
	ts := mustOpenServer(t, server.Config{MaxIngestRuns: 2, MaxIngestRunsPerClient: 2})
	ts.interruptedRun(t) // its session ended: its place is free
	ts.startIngest(t, `{"resumes":"int-7"}`, nil, http.StatusOK)
	for range 5 {
		ts.do(t, request{method: http.MethodPost, path: "/api/ingest", body: `{"continues":"r-nope"}`})
		ts.do(t, request{method: http.MethodPost, path: "/api/ingest", body: `{"resumes":"int-7"}`})
	}
	ts.startIngest(t, `{}`, nil, http.StatusCreated)
}
