package attach_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// startBaton serves Baton on ln until the test ends and returns its base URL.
func startBaton(t testing.TB, ln net.Listener) string {
	t.Helper()
	s, err := server.New(server.Config{Addr: ln.Addr().String(), Flows: []agents.Flow{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// getJSON decodes the JSON answer of a GET.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s %s", url, resp.Status, body)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// awaitRun waits until the server lists a run, and returns its id.
func awaitRun(t *testing.T, base string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var runs []traces.Run
		getJSON(t, base+"/api/runs", &runs)
		if len(runs) > 0 {
			return runs[0].ID
		}
	}
	t.Fatal("no run appeared on the server")
	return ""
}

// trace fetches a run's trace once it has ended.
func trace(t *testing.T, base, id string) traces.Trace {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		resp, err := http.Get(base + "/api/runs/" + id + "/trace")
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		tr, err := traces.Unmarshal(data)
		if err != nil {
			t.Fatalf("trace of %s: %v", id, err)
		}
		if tr.Run.Status.Ended() || time.Now().After(deadline) {
			return tr
		}
	}
}

// TestRemoteRunIsLive streams the helpdesk app to a real server: the run appears while the app
// runs, a websocket viewer sees its events as they happen, and the stored trace holds every fact.
func TestRemoteRunIsLive(t *testing.T) {
	base := startBaton(t, listen(t))
	b := attach.New(attach.Config{URL: base})
	defer b.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runner, err := attachtest.Helpdesk(ctx, false, agents.NewPace(60*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var transfers []string
	appDone := make(chan struct{})
	go func() {
		defer close(appDone)
		_, transfers = attachtest.Drain(t, runner.Query(ctx, attachtest.HelpdeskInput, b.Option()))
	}()

	id := awaitRun(t, base)
	ws, _, err := websocket.DefaultDialer.Dial(strings.Replace(base, "http", "ws", 1)+"/api/runs/"+id+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	var seen []traces.Event
	liveTransfers := 0 // transfers seen while the app still ran (its model is paced after each)
	for len(seen) == 0 || seen[len(seen)-1].Kind != traces.KindRunFinished {
		var batch []traces.Event // each message holds one or more events
		if err := ws.ReadJSON(&batch); err != nil {
			t.Fatalf("viewer: %v after %d events", err, len(seen))
		}
		seen = append(seen, batch...)
		for _, e := range batch {
			select {
			case <-appDone:
			default:
				liveTransfers += btoi(e.Kind == traces.KindTransfer)
			}
		}
	}
	<-appDone
	if liveTransfers == 0 {
		t.Error("the viewer saw no transfer while the app was running")
	}
	tr := trace(t, base, id)
	if len(seen) != len(tr.Events) {
		t.Errorf("the viewer saw %d events, the trace holds %d", len(seen), len(tr.Events))
	}
	attachtest.CheckHelpdesk(t, tr, transfers)
}

// TestBatonDownThenUp runs the app while Baton is down, with a small buffer: the app is not
// slowed, and once Baton comes up the run arrives, saying how many events were lost and where;
// Close says so too.
func TestBatonDownThenUp(t *testing.T) {
	ln := listen(t)
	addr := ln.Addr().String()
	ln.Close() // down: connections are refused
	b := attach.New(attach.Config{URL: "http://" + addr, Buffer: 8, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runner, err := attachtest.Helpdesk(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	attachtest.Drain(t, runner.Query(ctx, attachtest.HelpdeskInput, b.Option()))
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the app took %s with Baton down", took)
	}

	up, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	base := startBaton(t, up)
	closeCtx, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	if err := b.Close(closeCtx); err == nil {
		t.Error("Close said the run was delivered whole, though the buffer dropped events")
	}
	tr := trace(t, base, awaitRun(t, base))
	if tr.Run.Status != traces.StatusCompleted {
		t.Errorf("status %s, want completed", tr.Run.Status)
	}
	var lost int64
	for i, e := range tr.Events {
		if e.Kind == traces.KindLost {
			lost += e.Lost.Count
			if i != 8 {
				t.Errorf("lost event at %d, want right after the 8 buffered events", i)
			}
		}
	}
	if lost == 0 || tr.Events[0].Kind != traces.KindRunStarted || tr.Events[len(tr.Events)-1].Kind != traces.KindRunFinished {
		t.Errorf("trace of %d events with %d lost: want the buffered start, a lost count and the end", len(tr.Events), lost)
	}
}

// TestStalledBatonDoesNotSlowTheApp points the app at a server that accepts and never answers:
// the app runs at its own speed, and Close gives up when told to.
func TestStalledBatonDoesNotSlowTheApp(t *testing.T) {
	ln := listen(t)
	stall := make(chan struct{})
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-stall })}
	go hs.Serve(ln)
	defer hs.Close()
	defer close(stall)
	b := attach.New(attach.Config{URL: "http://" + ln.Addr().String(), Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runner, err := attachtest.Helpdesk(ctx, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	attachtest.Drain(t, runner.Query(ctx, attachtest.HelpdeskInput, b.Option()))
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the app took %s with Baton stalled", took)
	}
	closeCtx, stop := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer stop()
	if err := b.Close(closeCtx); err == nil {
		t.Error("Close said the run was delivered to a server that never answered")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestRemoteResumeIsOneStory interrupts a run and resumes it, both through the option: the
// server continues the same trace, which reads interrupted, then resumed, then completed.
func TestRemoteResumeIsOneStory(t *testing.T) {
	base := startBaton(t, listen(t))
	b := attach.New(attach.Config{URL: base})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runner, err := attachtest.Refunds(ctx, attachtest.NewStore())
	if err != nil {
		t.Fatal(err)
	}
	attachtest.Drain(t, runner.Query(ctx, attachtest.RefundsInput, adk.WithCheckPointID("cp-1"), b.Option()))
	id := awaitRun(t, base)
	first := trace(t, base, id)
	if first.Run.Status != traces.StatusInterrupted {
		t.Fatalf("first part ended %s, want interrupted", first.Run.Status)
	}
	var interruptID string
	for _, e := range first.Events {
		if e.Kind == traces.KindInterrupted {
			interruptID = e.Interrupt.ID
		}
	}
	resumed, err := runner.ResumeWithParams(ctx, "cp-1", &adk.ResumeParams{Targets: map[string]any{interruptID: "approved"}}, b.Option())
	if err != nil {
		t.Fatal(err)
	}
	attachtest.Drain(t, resumed)
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var runs []traces.Run
	getJSON(t, base+"/api/runs", &runs)
	whole := trace(t, base, id)
	if len(runs) != 1 || whole.Run.Status != traces.StatusCompleted {
		t.Fatalf("%d runs on the server, the first %s: want the one run, completed", len(runs), whole.Run.Status)
	}
	var kinds []string
	for _, e := range whole.Events {
		switch e.Kind {
		case traces.KindInterrupted, traces.KindResumed, traces.KindRunFinished:
			kinds = append(kinds, string(e.Kind))
		}
	}
	if strings.Join(kinds, " ") != "interrupted run.finished resumed run.finished" {
		t.Errorf("the trace reads %v, want interrupted, run.finished, resumed, run.finished", kinds)
	}
}

// TestRemoteSendsCompactInputs: the stream to Baton carries model and agent inputs in the compact
// form (an input that extends an earlier one refers to it), and Baton reads back the same story,
// every input whole.
func TestRemoteSendsCompactInputs(t *testing.T) {
	base := startBaton(t, listen(t))
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	refs := 0 // input references in the posted events
	// SetURL sets the Host header too, which Baton checks.
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/ingest/") {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			refs += strings.Count(string(body), `"input_from":`)
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()

	b := attach.New(attach.Config{URL: front.URL})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runner, err := attachtest.Helpdesk(ctx, false, agents.NewPace(0))
	if err != nil {
		t.Fatal(err)
	}
	_, transfers := attachtest.Drain(t, runner.Query(ctx, attachtest.HelpdeskInput, b.Option()))
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if refs == 0 {
		t.Error("no posted event refers to an earlier input: the inputs went in full")
	}
	attachtest.CheckHelpdesk(t, trace(t, base, awaitRun(t, base)), transfers)
}
