package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/sqlite"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// baton is a Baton server running in process on a loopback port.
type baton struct {
	base string // http://127.0.0.1:port
	logs *logRecorder
}

// startBaton serves the built-in flows, agentstest.Hostile and extra on 127.0.0.1:0 until t
// ends, keeping its runs in memory; a flow of extra replaces the built-in flow of its name (as a
// gated flow does). Runs without pace_ms get no pace. An error the server logs fails t.
func startBaton(t *testing.T, extra ...agents.Flow) *baton {
	t.Helper()
	return startBatonOn(t, nil, extra...)
}

// startStoredBaton is startBaton keeping its runs in a database of the test's, as serve does.
func startStoredBaton(t *testing.T, extra ...agents.Flow) *baton {
	t.Helper()
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "baton.db"), 0)
	if err != nil {
		t.Fatalf("open the store: %v", err)
	}
	return startBatonOn(t, store, extra...)
}

// startBatonOn is startBaton with its runs in store, or in memory when store is nil; it closes
// store when t ends.
func startBatonOn(t *testing.T, store *sqlite.Store, extra ...agents.Flow) *baton {
	t.Helper()
	return startBatonWith(t, store, nil, extra...)
}

// startBatonWith is startBatonOn with configure, when not nil, changing the server's Config
// before it starts.
func startBatonWith(t *testing.T, store *sqlite.Store, configure func(*server.Config), extra ...agents.Flow) *baton {
	t.Helper()
	flows := append(agents.Catalogue(), agentstest.Hostile())
	for _, f := range extra {
		if i := slices.IndexFunc(flows, func(g agents.Flow) bool { return g.Name == f.Name }); i >= 0 {
			flows[i] = f
		} else {
			flows = append(flows, f)
		}
	}
	logs := &logRecorder{}
	broker := live.NewBroker(0)
	if store != nil {
		broker = live.NewStoredBroker(0, store, slog.New(logs))
	}
	cfg := server.Config{
		Addr:   "127.0.0.1:0",
		Flows:  flows,
		Logger: slog.New(logs),
		Broker: broker,
	}
	if configure != nil {
		configure(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	base, stop := serve(t, srv, broker, logs, func() {
		if store != nil {
			store.Close()
		}
	})
	t.Cleanup(stop)
	return &baton{base: base, logs: logs}
}

// serve serves srv on a new loopback port until stop: stop shuts it down (its pages' sockets
// close), closes broker, calls release, and fails t on any error the server logged.
func serve(t *testing.T, srv *server.Server, broker *live.Broker, logs *logRecorder, release func()) (base string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), sync.OnceFunc(func() {
		cancel()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("the server did not shut down within 20s")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := broker.Close(ctx); err != nil {
			t.Errorf("close the broker: %v", err)
		}
		release()
		for _, r := range logs.records() {
			if r.level >= slog.LevelError {
				t.Errorf("server logged an error: %s", r.text)
			} else {
				t.Logf("server log: %s", r.text)
			}
		}
	})
}

// gated returns the built-in flow name with its model replies held by a new gate, closed: a run
// of it waits before its first reply until the test calls holdAt or the gate's Open. Pass the
// flow to startBaton.
func gated(t *testing.T, name string) (agents.Flow, *agentstest.Gate) {
	t.Helper()
	flow, err := agents.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	gate := agentstest.NewGate()
	return gate.Flow(flow), gate
}

// holdAt lets the gated run go on until it waits before its n-th model reply (see
// agentstest.Gate.HoldAt), failing t after waitTimeout.
func holdAt(t *testing.T, gate *agentstest.Gate, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := gate.HoldAt(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// startRun starts flow through POST /api/runs with its default input and pace, and returns the
// run id.
func (b *baton) startRun(t *testing.T, flow string, pace time.Duration) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"flow": flow, "pace_ms": pace.Milliseconds()})
	res, err := http.Post(b.base+"/api/runs", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST /api/runs: %v", err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	var created struct{ ID, URL string }
	if res.StatusCode != http.StatusCreated || json.Unmarshal(data, &created) != nil || created.ID == "" {
		t.Fatalf("POST /api/runs %s: %d %s", body, res.StatusCode, data)
	}
	return created.ID
}

// openFinished starts flow at full speed on a Baton of its own, waits for the run to end and
// opens its run page in a new tab.
func openFinished(t *testing.T, flow string) (*baton, string, *tab) {
	t.Helper()
	b := startBaton(t)
	id := b.startRun(t, flow, 0)
	b.waitRunEnded(t, id, waitTimeout)
	tb := newTab(t, nil)
	tb.open(t, b.base+"/runs/"+id)
	return b, id, tb
}

// trace returns GET /api/runs/:id/trace, read and checked by traces.Unmarshal.
func (b *baton) trace(t *testing.T, id string) traces.Trace {
	t.Helper()
	tr, err := traces.Unmarshal(b.traceJSON(t, id))
	if err != nil {
		t.Fatalf("trace of %s: %v", id, err)
	}
	return tr
}

// traceJSON returns the body of GET /api/runs/:id/trace.
func (b *baton) traceJSON(t *testing.T, id string) []byte {
	t.Helper()
	res, err := http.Get(b.base + "/api/runs/" + id + "/trace")
	if err != nil {
		t.Fatalf("GET trace: %v", err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET trace of %s: %d %v %.200s", id, res.StatusCode, err, data)
	}
	return data
}

// runs returns GET /api/runs.
func (b *baton) runs(t *testing.T) []traces.Run {
	t.Helper()
	res, err := http.Get(b.base + "/api/runs")
	if err != nil {
		t.Fatalf("GET /api/runs: %v", err)
	}
	defer res.Body.Close()
	var runs []traces.Run
	if err := json.NewDecoder(res.Body).Decode(&runs); err != nil {
		t.Fatalf("GET /api/runs: %v", err)
	}
	return runs
}

// summaries returns GET /api/runs as run summaries, with their counts.
func (b *baton) summaries(t *testing.T) []live.RunSummary {
	t.Helper()
	res, err := http.Get(b.base + "/api/runs")
	if err != nil {
		t.Fatalf("GET /api/runs: %v", err)
	}
	defer res.Body.Close()
	var runs []live.RunSummary
	if err := json.NewDecoder(res.Body).Decode(&runs); err != nil {
		t.Fatalf("GET /api/runs: %v", err)
	}
	return runs
}

// runStatus returns the run's status from GET /api/runs.
func (b *baton) runStatus(t *testing.T, id string) traces.Status {
	t.Helper()
	for _, r := range b.runs(t) {
		if r.ID == id {
			return r.Status
		}
	}
	t.Fatalf("run %s is not in GET /api/runs", id)
	return ""
}

// waitRunEnded waits until the run has ended and returns its final trace.
func (b *baton) waitRunEnded(t *testing.T, id string, timeout time.Duration) traces.Trace {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !b.runStatus(t, id).Ended() {
		if time.Now().After(deadline) {
			t.Fatalf("run %s still running after %s", id, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return b.trace(t, id)
}

// logRecorder is a slog.Handler that keeps the server's warnings and errors for the test to
// report.
type logRecorder struct {
	mu   sync.Mutex
	recs []logRecord
}

type logRecord struct {
	level slog.Level
	text  string
}

func (l *logRecorder) Enabled(_ context.Context, level slog.Level) bool {
	return level >= slog.LevelWarn
}

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&sb, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, logRecord{r.Level, sb.String()})
	return nil
}

func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

func (l *logRecorder) records() []logRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]logRecord(nil), l.recs...)
}
