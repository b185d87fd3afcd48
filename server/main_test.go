package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testServer is a Baton server on an httptest listener at 127.0.0.1.
type testServer struct {
	*server.Server
	base   string // http://127.0.0.1:port
	Host   string // 127.0.0.1:port
	Broker *live.Broker
	// secrets holds the secret of each run's latest ingestion session (startIngest puts them),
	// which do sends with the requests for that run, as its app does.
	secrets sync.Map
}

// testFlows are two flows with no eino behind them: tests give the server a runner.
func testFlows() []agents.Flow {
	return []agents.Flow{
		{Name: "echo", Title: "Echo", Description: "Says it back.", DefaultInput: "hello there", InputNote: "Echo answers anything.",
			Agents: []traces.Agent{{Name: "echo_agent", Kind: traces.AgentChatModel}}},
		{Name: "pair", Title: "Pair", Description: "Two agents.", DefaultInput: "go",
			Agents: []traces.Agent{{Name: "lead", Kind: traces.AgentSupervisor}, {Name: "helper", Kind: traces.AgentChatModel, Parent: "lead", Relation: traces.RelationSubAgent}}},
	}
}

// mustOpenServer starts a server with cfg on an httptest listener; Addr defaults to that listener,
// Flows to testFlows, the runner to quickRunner. Cleanup shuts it down.
func mustOpenServer(tb testing.TB, cfg server.Config) *testServer {
	tb.Helper()
	ts := httptest.NewUnstartedServer(nil)
	if cfg.Addr == "" {
		cfg.Addr = ts.Listener.Addr().String()
	}
	cfg = withTestDefaults(tb, cfg)
	srv, err := server.New(cfg)
	if err != nil {
		ts.Close()
		tb.Fatalf("server.New: %v", err)
	}
	server.SetRunner(srv, quickRunner)
	ts.Config.Handler = srv.Handler()
	ts.Start()
	tb.Cleanup(ts.Close)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			tb.Errorf("Shutdown: %v", err)
		}
	})
	return &testServer{Server: srv, base: ts.URL, Host: ts.Listener.Addr().String(), Broker: cfg.Broker}
}

// withTestDefaults gives cfg the tests' flows (testFlows), a broker of its own (see
// closeBrokerAtEnd) and a logger that discards, where cfg has none.
func withTestDefaults(tb testing.TB, cfg server.Config) server.Config {
	if cfg.Flows == nil {
		cfg.Flows = testFlows()
	}
	if cfg.Broker == nil {
		cfg.Broker = live.NewBroker(0)
		closeBrokerAtEnd(tb, cfg.Broker)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// closeBrokerAtEnd ends, once the test and the cleanups registered after this one are done (the
// server's shutdown among them), the runs b holds that are still going on (those a test emits into
// itself), and waits until b's store has them: the broker's writers end with their runs.
func closeBrokerAtEnd(tb testing.TB, b *live.Broker) {
	tb.Cleanup(func() {
		for _, run := range b.Runs() {
			if rec, err := b.Get(run.ID); err == nil {
				rec.Finish(traces.StatusCanceled, "the test ended")
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			tb.Error(err)
		}
	})
}

// quickRunner records a run that starts, says one thing and completes.
func quickRunner(ctx context.Context, flow agents.Flow, input string, opts agents.Options, rec *traces.Recording) traces.Status {
	rec.Emit(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: flow.Name, Input: input, Status: traces.StatusRunning}})
	rec.Emit(traces.Event{Kind: traces.KindMessage, Agent: "echo_agent", Message: &traces.Message{Role: "assistant", Content: input}})
	rec.Finish(traces.StatusCompleted, "")
	return traces.StatusCompleted
}

// started is what handOver passes to the test: a run the test drives by emitting into rec.
type started struct {
	rec   *traces.Recording
	opts  agents.Options
	input string
}

// handOver returns a runner that gives each run to the test on ch and waits until the test
// finishes the recording, or the run is canceled.
func handOver(ch chan<- started) func(context.Context, agents.Flow, string, agents.Options, *traces.Recording) traces.Status {
	return func(ctx context.Context, flow agents.Flow, input string, opts agents.Options, rec *traces.Recording) traces.Status {
		select {
		case ch <- started{rec: rec, opts: opts, input: input}:
		case <-ctx.Done():
		}
		select {
		case <-rec.Done():
			return rec.Run().Status
		case <-ctx.Done():
			rec.Finish(traces.StatusCanceled, "canceled")
			return traces.StatusCanceled
		}
	}
}

// receive takes the next value from ch or fails after a while.
func receive[T any](tb testing.TB, ch <-chan T) T {
	tb.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		tb.Fatalf("nothing received in 10s")
		panic("unreachable")
	}
}

// eventually polls cond until it holds, failing after 10s.
func eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// request is one HTTP request of a test.
type request struct {
	method, path string
	body         string
	header       map[string]string
	host         string // Host header; the server's own when empty
	// stranger sends a request for an ingested run without the secret its app holds.
	stranger bool
}

// response is what a test checks of an answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// apiError returns the "error" field of a JSON error body.
func (r response) apiError(tb testing.TB) string {
	tb.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil {
		tb.Fatalf("error body is not JSON: %v: %s", err, r.body)
	}
	return e.Error
}

func (ts *testServer) do(tb testing.TB, req request) response {
	tb.Helper()
	var body io.Reader
	if req.body != "" {
		body = strings.NewReader(req.body)
	}
	if req.method == "" {
		req.method = http.MethodGet
	}
	r, err := http.NewRequest(req.method, ts.base+req.path, body)
	if err != nil {
		tb.Fatal(err)
	}
	if req.body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range req.header {
		r.Header.Set(k, v)
	}
	if req.host != "" {
		r.Host = req.host
	}
	if id, ok := strings.CutPrefix(req.path, "/api/ingest/"); ok && r.Header.Get(runSecretHeader) == "" && !req.stranger {
		if secret, ok := ts.secrets.Load(id); ok {
			r.Header.Set(runSecretHeader, secret.(string))
		}
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		tb.Fatalf("%s %s: %v", req.method, req.path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: data}
}

// createRun starts a run of flow with body fields and returns its id.
func (ts *testServer) createRun(tb testing.TB, body string) string {
	tb.Helper()
	res := ts.do(tb, request{method: http.MethodPost, path: "/api/runs", body: body})
	if res.status != http.StatusCreated {
		tb.Fatalf("POST /api/runs %s: status %d: %s", body, res.status, res.body)
	}
	var out struct{ ID, URL string }
	if err := json.Unmarshal(res.body, &out); err != nil {
		tb.Fatal(err)
	}
	return out.ID
}

// trace fetches a run's trace through the API.
func (ts *testServer) trace(tb testing.TB, id string) traces.Trace {
	tb.Helper()
	res := ts.do(tb, request{path: "/api/runs/" + id + "/trace"})
	if res.status != http.StatusOK {
		tb.Fatalf("trace of %s: status %d: %s", id, res.status, res.body)
	}
	tr, err := traces.Unmarshal(res.body)
	if err != nil {
		tb.Fatalf("trace of %s does not parse: %v", id, err)
	}
	return tr
}

// addRecording registers a recording the test emits into directly.
func (ts *testServer) addRecording(tb testing.TB, id string) *traces.Recording {
	tb.Helper()
	rec := traces.NewRecording(traces.Run{ID: id, Flow: "echo", Input: "hi"}, testFlows()[0].Agents)
	if err := ts.Broker.Add(rec); err != nil {
		tb.Fatal(err)
	}
	return rec
}

func emitMessages(rec *traces.Recording, n int, content string) {
	for range n {
		rec.Emit(traces.Event{Kind: traces.KindMessage, Agent: "echo_agent", Message: &traces.Message{Role: "assistant", Content: content}})
	}
}

// dial opens a websocket to path. A failed handshake returns the response with its body read.
func (ts *testServer) dial(tb testing.TB, path string, header http.Header) (*websocket.Conn, response, error) {
	tb.Helper()
	return dialWith(tb, &websocket.Dialer{HandshakeTimeout: 10 * time.Second}, "ws://"+ts.Host+path, header)
}

func dialWith(tb testing.TB, d *websocket.Dialer, url string, header http.Header) (*websocket.Conn, response, error) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, res, err := d.DialContext(ctx, url, header)
	var out response
	if res != nil {
		out.status, out.header = res.StatusCode, res.Header
		if res.Body != nil {
			out.body, _ = io.ReadAll(res.Body)
			res.Body.Close()
		}
	}
	if conn != nil {
		tb.Cleanup(func() { conn.Close() })
	}
	return conn, out, err
}

func (ts *testServer) mustDial(tb testing.TB, path string) *websocket.Conn {
	tb.Helper()
	conn, res, err := ts.dial(tb, path, nil)
	if err != nil {
		tb.Fatalf("dial %s: %v (status %d: %s)", path, err, res.status, res.body)
	}
	return conn
}

// readEvents reads the events socket's messages, each a JSON array of events, until it closes,
// resolving their input references.
func readEvents(tb testing.TB, conn *websocket.Conn) ([]traces.Event, *websocket.CloseError) {
	tb.Helper()
	var evs []traces.Event
	in := socketInputs{}
	for {
		batch, refs, err := readBatch(conn)
		if err != nil {
			closed, ok := err.(*websocket.CloseError)
			if !ok {
				tb.Fatalf("after %d events: read: %v", len(evs), err)
			}
			return evs, closed
		}
		in.resolve(tb, batch, refs)
		evs = append(evs, batch...)
	}
}

// readBatch reads one message of the events socket: a JSON array of one or more events, and
// their input references.
func readBatch(conn *websocket.Conn) ([]traces.Event, []socketRefs, error) {
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, data, err := conn.ReadMessage()
	if err != nil {
		return nil, nil, err
	}
	return decodeBatch(data)
}

// decodeBatch decodes a message of the events socket.
func decodeBatch(data []byte) ([]traces.Event, []socketRefs, error) {
	var batch []traces.Event
	if err := json.Unmarshal(data, &batch); err != nil || len(batch) == 0 {
		return nil, nil, fmt.Errorf("message is not a JSON array of events (%v): %.200s", err, data)
	}
	var refs []socketRefs
	if err := json.Unmarshal(data, &refs); err != nil {
		return nil, nil, err
	}
	return batch, refs, nil
}

// socketRefs are the input references of an event the events socket sent.
type socketRefs struct {
	Model    *socketRef `json:"model"`
	AgentRun *socketRef `json:"agent_run"`
}

type socketRef struct {
	From int64 `json:"input_from"`
	Keep int   `json:"input_keep"`
}

// socketInputs holds the whole input of each event a viewer read, by seq, as a viewer resolving
// the socket's references keeps them.
type socketInputs map[int64][]traces.Message

// resolve makes batch's inputs whole, failing when one refers to an event not read.
func (in socketInputs) resolve(tb testing.TB, batch []traces.Event, refs []socketRefs) {
	tb.Helper()
	whole := func(seq int64, msgs *[]traces.Message, ref *socketRef) {
		if ref != nil && ref.Keep > 0 {
			base, ok := in[ref.From]
			if !ok || ref.Keep > len(base) {
				tb.Fatalf("event %d refers to %d messages of event %d, which the viewer has not (%d messages)", seq, ref.Keep, ref.From, len(base))
			}
			*msgs = append(slices.Clip(base[:ref.Keep]), *msgs...)
		}
		if len(*msgs) > 0 && in[seq] == nil {
			in[seq] = *msgs
		}
	}
	for i := range batch {
		e := &batch[i]
		if e.Model != nil {
			whole(e.Seq, &e.Model.Input, refs[i].Model)
		}
		if e.AgentRun != nil {
			whole(e.Seq, &e.AgentRun.Input, refs[i].AgentRun)
		}
	}
}

// readN reads messages until it has n events, and fails when they hold more.
func readN(tb testing.TB, conn *websocket.Conn, n int) []traces.Event {
	tb.Helper()
	var evs []traces.Event
	in := socketInputs{}
	for len(evs) < n {
		batch, refs, err := readBatch(conn)
		if err != nil {
			tb.Fatalf("event %d of %d: %v", len(evs)+1, n, err)
		}
		in.resolve(tb, batch, refs)
		evs = append(evs, batch...)
	}
	if len(evs) > n {
		tb.Fatalf("read %d events, want %d", len(evs), n)
	}
	return evs
}

// seqs returns the events' sequence numbers.
func seqs(evs []traces.Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.Seq
	}
	return out
}

// span returns from, from+1, ..., to.
func span(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
