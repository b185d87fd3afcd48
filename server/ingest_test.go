package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// appTime is when the app's events happened: the server must keep these times.
var appTime = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// appEvent returns a valid event of kind numbered seq by the app, stamped appTime + seq ms.
func appEvent(seq int64, kind traces.Kind) traces.Event {
	e := traces.Event{Seq: seq, Time: appTime.Add(time.Duration(seq) * time.Millisecond), Kind: kind, Agent: "bot"}
	switch kind {
	case traces.KindRunStarted:
		e.Agent, e.Run = "", &traces.RunMark{Flow: "support", Input: "where is my parcel?", Status: traces.StatusRunning}
	case traces.KindRunFinished:
		e.Agent, e.Run = "", &traces.RunMark{Status: traces.StatusCompleted}
	case traces.KindAgentStarted, traces.KindAgentFinished:
		e.AgentRun = &traces.AgentRun{Via: "run"}
	case traces.KindModelStarted, traces.KindModelFinished:
		e.Model = &traces.ModelCall{ID: "bot-1"}
	case traces.KindToolStarted, traces.KindToolFinished:
		e.Tool = &traces.ToolCall{Name: "track", CallID: "call_1"}
	case traces.KindMessage:
		e.Message = &traces.Message{Role: "assistant", Content: fmt.Sprintf("message %d", seq)}
	case traces.KindSessionSet:
		e.Session = &traces.SessionSet{Key: "parcel", Value: json.RawMessage(`{"id":42}`), SetBy: "bot"}
	case traces.KindInterrupted, traces.KindResumed:
		e.Interrupt = &traces.Interrupt{ID: "int-7", Info: "approve the refund?"}
	case traces.KindLost:
		e.Agent, e.Lost = "", &traces.Lost{Count: 3}
	default:
		panic("appEvent: no payload for " + kind)
	}
	return e
}

// appEvents numbers kinds from first on.
func appEvents(first int64, kinds ...traces.Kind) []traces.Event {
	out := make([]traces.Event, len(kinds))
	for i, k := range kinds {
		out[i] = appEvent(first+int64(i), k)
	}
	return out
}

// batchBody is a post's body holding events.
func batchBody(tb testing.TB, events []traces.Event) string {
	tb.Helper()
	if events == nil {
		events = []traces.Event{}
	}
	data, err := json.Marshal(map[string]any{"events": events})
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

// ingestCreated is the answer to POST /api/ingest.
type ingestCreated struct {
	ID, URL, Secret string
	Next            int64
}

// runSecretHeader carries the secret of a run's ingestion session.
const runSecretHeader = "Baton-Run-Secret"

// startIngest posts body to /api/ingest, checks the status and returns the answer.
func (ts *testServer) startIngest(tb testing.TB, body string, header map[string]string, wantStatus int) ingestCreated {
	tb.Helper()
	res := ts.do(tb, request{method: http.MethodPost, path: "/api/ingest", body: body, header: header})
	if res.status != wantStatus {
		tb.Fatalf("POST /api/ingest %s: status %d, want %d: %s", body, res.status, wantStatus, res.body)
	}
	var out ingestCreated
	if err := json.Unmarshal(res.body, &out); err != nil || out.ID == "" || out.URL != "/runs/"+out.ID || out.Next != 1 || len(out.Secret) < 26 {
		tb.Fatalf("POST /api/ingest answered %s (%v)", res.body, err)
	}
	ts.secrets.Store(out.ID, out.Secret)
	return out
}

// secret returns the secret of run id's latest ingestion session, which startIngest kept.
func (ts *testServer) secret(id string) string {
	s, _ := ts.secrets.Load(id)
	secret, _ := s.(string)
	return secret
}

// postEvents posts events to run id and requires 200 with the given next.
func (ts *testServer) postEvents(tb testing.TB, id string, header map[string]string, wantNext int64, events ...traces.Event) {
	tb.Helper()
	res := ts.do(tb, request{method: http.MethodPost, path: "/api/ingest/" + id, body: batchBody(tb, events), header: header})
	var out struct{ Next int64 }
	if res.status != http.StatusOK || json.Unmarshal(res.body, &out) != nil || out.Next != wantNext {
		tb.Fatalf("POST /api/ingest/%s: status %d: %s; want 200 {\"next\":%d}", id, res.status, res.body, wantNext)
	}
}

// recording returns run id's recording.
func (ts *testServer) recording(tb testing.TB, id string) *traces.Recording {
	tb.Helper()
	rec, err := ts.Broker.Get(id)
	if err != nil {
		tb.Fatal(err)
	}
	return rec
}

// kinds lists the events' kinds.
func kinds(events []traces.Event) []traces.Kind {
	out := make([]traces.Kind, len(events))
	for i, e := range events {
		out[i] = e.Kind
	}
	return out
}

// assertSameEvents fails unless got are want renumbered from firstSeq on.
func assertSameEvents(tb testing.TB, got, want []traces.Event, firstSeq int64) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("%d events %v, want %d %v", len(got), kinds(got), len(want), kinds(want))
	}
	for i := range want {
		w := want[i]
		w.Seq = firstSeq + int64(i)
		g, _ := json.Marshal(got[i])
		wj, _ := json.Marshal(w)
		if string(g) != string(wj) {
			tb.Errorf("event %d:\n got %s\nwant %s", i, g, wj)
		}
	}
}

func TestIngestStreamsARunLive(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	run := ts.startIngest(t, `{"run":{"flow":"support","input":"where is my parcel?","model":"gpt-x","conversation":"c-1"},`+
		`"agents":[{"name":"bot","kind":"chat_model"}]}`, nil, http.StatusCreated)
	// The run is there before any event: listed, with a page and a live socket.
	if runs := ts.Broker.Runs(); len(runs) != 1 || runs[0].ID != run.ID || runs[0].Status != traces.StatusRunning {
		t.Fatalf("runs = %+v, want the new run, running", runs)
	}
	if res := ts.do(t, request{path: run.URL}); res.status != http.StatusOK {
		t.Fatalf("GET %s: %d", run.URL, res.status)
	}
	viewer := ts.mustDial(t, "/api/runs/"+run.ID+"/events")

	batches := [][]traces.Event{
		appEvents(1, traces.KindRunStarted, traces.KindAgentStarted),
		appEvents(3, traces.KindModelStarted, traces.KindModelFinished, traces.KindMessage, traces.KindToolStarted),
		nil, // a heartbeat
		appEvents(7, traces.KindToolFinished, traces.KindSessionSet, traces.KindLost, traces.KindAgentFinished),
	}
	var posted []traces.Event
	next := int64(1)
	for i, b := range batches {
		next += int64(len(b))
		var agents string
		if i == 1 { // an agent the app discovered during the run
			agents = `,"agents":[{"name":"tracker","kind":"chat_model","parent":"bot","relation":"agenttool"}]`
		}
		res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest/" + run.ID, body: strings.TrimSuffix(batchBody(t, b), "}") + agents + "}"})
		if res.status != http.StatusOK || string(res.body) != fmt.Sprintf(`{"next":%d}`+"\n", next) {
			t.Fatalf("batch %d: %d %s, want next %d", i, res.status, res.body, next)
		}
		// The viewer gets each batch as it is posted, before the next one is sent.
		assertSameEvents(t, readN(t, viewer, len(b)), b, next-int64(len(b)))
		posted = append(posted, b...)
	}
	finished := appEvent(next, traces.KindRunFinished)
	finished.Run = &traces.RunMark{Status: traces.StatusFailed, Error: "the carrier API is down"}
	ts.postEvents(t, run.ID, nil, next+1, finished)
	posted = append(posted, finished)

	last, closed := readEvents(t, viewer)
	assertSameEvents(t, last, posted[len(posted)-1:], next)
	if closed.Code != websocket.CloseNormalClosure {
		t.Errorf("viewer closed with %v, want a normal close", closed)
	}
	tr := ts.trace(t, run.ID)
	assertSameEvents(t, tr.Events, posted, 1)
	if tr.Run.Status != traces.StatusFailed || tr.Run.Error != "the carrier API is down" || tr.Run.Flow != "support" ||
		tr.Run.Input != "where is my parcel?" || tr.Run.Model != "gpt-x" || tr.Run.Conversation != "c-1" || !tr.Run.EndedAt.Equal(finished.Time) {
		t.Errorf("run = %+v, want the posted metadata and end", tr.Run)
	}
	if _, ok := tr.Agent("tracker"); !ok || len(tr.Agents) != 2 {
		t.Errorf("agents = %+v, want bot and the discovered tracker", tr.Agents)
	}
}

// TestIngestReadsCompactEvents: an app may send model and agent inputs in the compact form of
// the trace format's version 2, referring to an input of an earlier post, or in full (version
// 1); the run holds every input whole either way.
func TestIngestReadsCompactEvents(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	id := ts.startIngest(t, `{"agents":[{"name":"bot","kind":"chat_model"}]}`, nil, http.StatusCreated).ID
	const at = `"time":"2026-05-01T12:00:00Z"`
	post := func(events ...string) {
		t.Helper()
		res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest/" + id, body: `{"events":[` + strings.Join(events, ",") + `]}`})
		if res.status != http.StatusOK {
			t.Fatalf("POST %s: %d %s", events, res.status, res.body)
		}
	}
	post(`{"seq":1,`+at+`,"kind":"run.started","run":{"flow":"support","input":"hi","status":"running"}}`,
		`{"seq":2,`+at+`,"kind":"agent.started","agent":"bot","agent_run":{"via":"run","input":[{"role":"user","content":"hi"}]}}`)
	// Version 2: the model's input keeps the agent's one message and adds a reply.
	post(`{"seq":3,` + at + `,"kind":"model.started","agent":"bot","model":{"id":"m1","input_from":2,"input_keep":1,"input":[{"role":"assistant","content":"hello"}]}}`)
	// Version 1, in full, in the same session.
	post(`{"seq":4,`+at+`,"kind":"model.started","agent":"bot","model":{"id":"m2","input":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"bye"}]}}`,
		`{"seq":5,`+at+`,"kind":"model.started","agent":"bot","model":{"id":"m3","input_from":4,"input_keep":2}}`)

	tr := ts.recording(t, id).Snapshot()
	var inputs [][]string
	for _, e := range tr.Events {
		if e.Model != nil {
			var words []string
			for _, m := range e.Model.Input {
				words = append(words, m.Content)
			}
			inputs = append(inputs, words)
		}
	}
	want := [][]string{{"hi", "hello"}, {"hi", "hello", "bye"}, {"hi", "hello"}}
	if !slices.EqualFunc(inputs, want, slices.Equal) {
		t.Errorf("model inputs as stored: %q, want %q", inputs, want)
	}
}

func TestIngestFlowDefaultsToApp(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	run := ts.startIngest(t, `{}`, nil, http.StatusCreated)
	if got := ts.recording(t, run.ID).Run(); got.Flow != "app" || got.Status != traces.StatusRunning {
		t.Errorf("run = %+v, want flow app, running", got)
	}
}

func TestIngestRefusesBadPosts(t *testing.T) {
	const token = strongToken // a chosen token must be strong
	auth := map[string]string{"Authorization": "Bearer " + token}
	runs := make(chan started, 1)
	ts := mustOpenServer(t, server.Config{Token: token, MaxIngestBody: 4096})
	server.SetRunner(ts.Server, handOver(runs))

	// open starts an app's run and posts its first two events: the next seq is 3.
	open := func(t *testing.T) string {
		id := ts.startIngest(t, `{"agents":[{"name":"bot","kind":"chat_model"}]}`, auth, http.StatusCreated).ID
		ts.postEvents(t, id, auth, 3, appEvents(1, traces.KindRunStarted, traces.KindAgentStarted)...)
		return id
	}
	ended := func(t *testing.T) string {
		id := open(t)
		ts.postEvents(t, id, auth, 4, appEvent(3, traces.KindRunFinished))
		return id
	}
	runByServer := func(t *testing.T) string {
		res := ts.do(t, request{method: http.MethodPost, path: "/api/runs", body: `{"flow":"echo"}`, header: auth})
		var out struct{ ID string }
		if res.status != http.StatusCreated || json.Unmarshal(res.body, &out) != nil {
			t.Fatalf("POST /api/runs: %d %s", res.status, res.body)
		}
		receive(t, runs) // it runs until the server shuts down
		return out.ID
	}
	unknown := func(*testing.T) string { return "r-nope" }

	noPayload := appEvents(3, traces.KindMessage, traces.KindToolFinished)
	noPayload[1].Tool = nil
	noTime := appEvent(3, traces.KindMessage)
	noTime.Time = time.Time{}
	stillRunning := appEvent(3, traces.KindRunFinished)
	stillRunning.Run.Status = traces.StatusRunning
	gap := appEvents(3, traces.KindMessage, traces.KindMessage)
	gap[1].Seq = 5
	huge := appEvent(3, traces.KindMessage)
	huge.Message.Content = strings.Repeat("x", 5000)

	for _, tc := range []struct {
		name   string
		run    func(*testing.T) string // the run to post to; open when nil
		body   string
		header map[string]string // auth when nil
		status int
		want   string
	}{
		{"malformed JSON", nil, `{"events":[{"seq":3,`, nil, 400, "request body cannot be read: it is not valid JSON"},
		{"unknown field", nil, `{"events":[],"colour":"red"}`, nil, 400, `request body has an unknown field "colour"`},
		{"unknown kind", nil, `{"events":[{"seq":3,"time":"2026-05-01T12:00:00Z","kind":"run.paused","run":{"status":"running"}}]}`, nil, 400,
			`events[0].kind "run.paused" is not a known event kind`},
		{"missing payload", nil, batchBody(t, noPayload), nil, 400, `events[1] (tool.finished) has no "tool" payload`},
		{"no time", nil, batchBody(t, []traces.Event{noTime}), nil, 400, "events[0] (message) has no time"},
		{"seq ahead", nil, batchBody(t, appEvents(5, traces.KindMessage)), nil, 409, "expected event seq 3, got 5: resend from 3"},
		{"seq replayed", nil, batchBody(t, appEvents(2, traces.KindAgentStarted, traces.KindMessage)), nil, 409, "expected event seq 3, got 2: resend from 3"},
		{"gap inside a post", nil, batchBody(t, gap), nil, 400, "events[1].seq is 5, want 4"},
		{"reference to an event with no input", nil, `{"events":[{"seq":3,"time":"2026-05-01T12:00:00Z","kind":"model.started","agent":"bot","model":{"id":"m1","input_from":2,"input_keep":1}}]}`, nil, 400,
			"events[0].model.input_from is 2, but event 2 has no input"},
		{"duplicate run.started", nil, batchBody(t, appEvents(3, traces.KindMessage, traces.KindRunStarted)), nil, 400,
			"events[1] (run.started) is not the first event of a new run"},
		{"run.finished not last", nil, batchBody(t, appEvents(3, traces.KindRunFinished, traces.KindMessage)), nil, 400,
			"events[0] (run.finished) is not the last event of its post"},
		{"run.finished still running", nil, batchBody(t, []traces.Event{stillRunning}), nil, 400, `events[0] (run.finished) has status "running"`},
		{"agent without a name", nil, strings.TrimSuffix(batchBody(t, appEvents(3, traces.KindMessage)), "}") + `,"agents":[{"kind":"custom"}]}`, nil, 400,
			"agents[0].name is empty"},
		{"agent naming an unknown parent", nil, strings.TrimSuffix(batchBody(t, appEvents(3, traces.KindMessage)), "}") +
			`,"agents":[{"name":"x","kind":"chat_model","parent":"nobody","relation":"subagent"}]}`, nil, 400,
			`agents[0]: agent "x" names parent "nobody", which is not among the agents`},
		{"oversized body", nil, batchBody(t, []traces.Event{huge}), nil, 413, "larger than the limit of 4096 bytes"},
		{"no token", nil, batchBody(t, appEvents(3, traces.KindMessage)), map[string]string{}, 401, "a token is required"},
		{"from another site's page", nil, batchBody(t, appEvents(3, traces.KindMessage)),
			map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example"}, 403, "cross-origin request not allowed"},
		{"unknown run", unknown, batchBody(t, appEvents(3, traces.KindMessage)), nil, 404, `run "r-nope" not found`},
		{"after the run ended", ended, batchBody(t, appEvents(4, traces.KindMessage)), nil, 409,
			"has ended; start a new run with POST /api/ingest"},
		{"a run the server runs itself", runByServer, batchBody(t, appEvents(1, traces.KindMessage)), nil, 409,
			"is not streamed by an app: Baton runs it itself; start a new run with POST /api/ingest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := tc.run
			if run == nil {
				run = open
			}
			id := run(t)
			header := tc.header
			if header == nil {
				header = auth
			}
			before := storedEvents(ts.Broker)
			res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest/" + id, body: tc.body, header: header})
			if res.status != tc.status || !strings.Contains(res.apiError(t), tc.want) {
				t.Fatalf("status %d %s; want %d saying %q", res.status, res.body, tc.status, tc.want)
			}
			if after := storedEvents(ts.Broker); after != before {
				t.Fatalf("a refused post changed what is stored: %d events, was %d", after, before)
			}
			if tc.run == nil {
				// The session still expects seq 3: the refused post counted for nothing.
				ts.postEvents(t, id, auth, 4, appEvent(3, traces.KindMessage))
			}
		})
	}
}

// storedEvents counts the events and agents of every run in broker.
func storedEvents(b *live.Broker) int {
	n := 0
	for _, run := range b.Runs() {
		rec, err := b.Get(run.ID)
		if err != nil {
			continue
		}
		tr := rec.Snapshot()
		n += len(tr.Events) + len(tr.Agents)
	}
	return n
}

func TestIngestBodyLimitIsItsOwn(t *testing.T) {
	ts := mustOpenServer(t, server.Config{MaxBody: 1024})
	id := ts.startIngest(t, `{}`, nil, http.StatusCreated).ID
	big := appEvent(1, traces.KindMessage)
	big.Message.Content = strings.Repeat("x", 100<<10)
	ts.postEvents(t, id, nil, 2, big)
	res := ts.do(t, request{method: http.MethodPost, path: "/api/runs", body: `{"flow":"echo","input":"` + strings.Repeat("y", 2048) + `"}`})
	if res.status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST /api/runs over MaxBody: %d %s, want 413", res.status, res.body)
	}
}

// TestIngestTimesOut: a run whose app stops posting ends interrupted, saying why, at the time the
// app was last heard from, not when the server gave up waiting.
func TestIngestTimesOut(t *testing.T) {
	ts := mustOpenServer(t, server.Config{IngestTimeout: 50 * time.Millisecond})
	id := ts.startIngest(t, `{}`, nil, http.StatusCreated).ID
	ts.postEvents(t, id, nil, 2, appEvent(1, traces.KindRunStarted))
	heard := time.Now()
	rec := ts.recording(t, id)
	receive(t, rec.Done())
	tr := ts.trace(t, id)
	const want = "the app stopped sending events: nothing for 50ms (it exited or lost its connection)"
	if tr.Run.Status != traces.StatusInterrupted || tr.Run.Error != want {
		t.Errorf("run = %+v, want interrupted: %s", tr.Run, want)
	}
	last := tr.Events[len(tr.Events)-1]
	if last.Kind != traces.KindRunFinished || last.Run.Error != want {
		t.Errorf("last event %s %+v, want run.finished saying %q", last.Kind, last.Run, want)
	}
	if last.Time.After(heard) || !tr.Run.EndedAt.Equal(last.Time) {
		t.Errorf("run.finished at %s, ended at %s: want when the app was last heard from, by %s", last.Time, tr.Run.EndedAt, heard)
	}
}

func TestIngestHeartbeatsKeepARunAlive(t *testing.T) {
	// Heartbeats a tenth of the timeout apart, for twice the timeout: only a stall of the test
	// of most of a second (loaded machine, -race) would let the run end between two of them.
	const timeout = time.Second
	ts := mustOpenServer(t, server.Config{IngestTimeout: timeout})
	id := ts.startIngest(t, `{}`, nil, http.StatusCreated).ID
	rec := ts.recording(t, id)
	for range 20 {
		ts.postEvents(t, id, nil, 1)
		select {
		case <-rec.Done():
			t.Fatalf("the run ended while heartbeats came: %+v", rec.Run())
		case <-time.After(timeout / 10):
		}
	}
	receive(t, rec.Done()) // and without them, it ends
}

func TestIngestPostsToOneRunAreSerialized(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	id := ts.startIngest(t, `{}`, nil, http.StatusCreated).ID
	batch := batchBody(t, appEvents(1, traces.KindRunStarted, traces.KindMessage, traces.KindMessage))
	const posters = 8
	statuses := make([]int, posters)
	var wg sync.WaitGroup
	for i := range posters {
		wg.Go(func() {
			statuses[i] = ts.do(t, request{method: http.MethodPost, path: "/api/ingest/" + id, body: batch}).status
		})
	}
	wg.Wait()
	slices.Sort(statuses)
	if statuses[0] != http.StatusOK || statuses[1] != http.StatusConflict {
		t.Errorf("statuses %v, want one 200 and the rest 409", statuses)
	}
	if n := len(ts.recording(t, id).Snapshot().Events); n != 3 {
		t.Errorf("%d events stored, want the batch once (3)", n)
	}
}

func TestIngestRunsEndWhenTheServerShutsDown(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	id := ts.startIngest(t, `{}`, nil, http.StatusCreated).ID
	if err := ts.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Interrupted: the app may go on with it once Baton is back (TestIngestContinuesAfterARestart).
	if run := ts.recording(t, id).Run(); run.Status != traces.StatusInterrupted || run.Error != "Baton shut down while the app was sending this run" {
		t.Errorf("run after shutdown = %+v, want interrupted", run)
	}
	res := ts.do(t, request{method: http.MethodPost, path: "/api/ingest", body: `{}`})
	if res.status != http.StatusServiceUnavailable || !strings.Contains(res.apiError(t), "shutting down") {
		t.Errorf("POST /api/ingest after shutdown: %d %s", res.status, res.body)
	}
}

// BenchmarkIngest measures how many events a second one app's run can stream in, in posts of 100
// message events over a real connection: go test ./server -run '^$' -bench BenchmarkIngest
func BenchmarkIngest(b *testing.B) {
	ts := mustOpenServer(b, server.Config{})
	id := ts.startIngest(b, `{}`, nil, http.StatusCreated).ID
	const batch = 100
	next := int64(1)
	b.ReportAllocs()
	for b.Loop() {
		events := make([]traces.Event, batch)
		for i := range events {
			events[i] = appEvent(next+int64(i), traces.KindMessage)
		}
		next += batch
		ts.postEvents(b, id, nil, next, events...)
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "events/s")
}
