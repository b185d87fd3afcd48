package realapps_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// quietTimeout is how long the test's Baton waits for an app that went quiet before it ends the
// app's run as interrupted: short, so that a run whose end never arrives is seen as such within
// the test, not 30 s later; but several of the app's heartbeats (one a second while a run is
// open) long, so that an app starved by a loaded machine is not taken for one that stopped (at
// 2 s, an approval app resumed at once was, at a load average of 17).
const quietTimeout = 5 * time.Second

// startBaton starts a real Baton server on loopback for one app and returns its base URL.
func startBaton(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Config{Addr: ln.Addr().String(), Flows: []agents.Flow{},
		IngestTimeout: quietTimeout, Logger: slog.New(slog.DiscardHandler)})
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

// settledRuns waits until the server holds at least want runs, every one ended (the server ends
// a run whose app stopped sending after quietTimeout) and unchanged since the previous look (a
// resumed part may still be on its way to a run that ended interrupted), then returns their
// traces, oldest first. Past the deadline it returns what the server holds.
func settledRuns(t *testing.T, base string, want int) []traces.Trace {
	t.Helper()
	deadline := time.Now().Add(quietTimeout + 3*time.Second)
	var before []traces.Run
	for {
		var runs []traces.Run
		getJSON(t, base+"/api/runs?limit=100", &runs)
		settled := len(runs) >= want && slices.EqualFunc(runs, before, sameRunState)
		for _, r := range runs {
			settled = settled && r.Status.Ended()
		}
		if settled || time.Now().After(deadline) {
			out := make([]traces.Trace, 0, len(runs))
			for _, r := range runs {
				out = append(out, fetchTrace(t, base, r.ID))
			}
			slices.SortFunc(out, func(a, b traces.Trace) int { return a.Run.StartedAt.Compare(b.Run.StartedAt) })
			return out
		}
		before = runs
		time.Sleep(50 * time.Millisecond)
	}
}

func sameRunState(a, b traces.Run) bool {
	return a.ID == b.ID && a.Status == b.Status && (a.EndedAt == nil) == (b.EndedAt == nil) &&
		(a.EndedAt == nil || a.EndedAt.Equal(*b.EndedAt))
}

// fetchTrace returns the trace the server holds for run id.
func fetchTrace(t *testing.T, base, id string) traces.Trace {
	t.Helper()
	resp, err := http.Get(base + "/api/runs/" + id + "/trace")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET trace of %s: %s %v %s", id, resp.Status, err, data)
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		t.Fatalf("trace of %s: %v", id, err)
	}
	return tr
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
		t.Fatalf("GET %s: %v", url, err)
	}
}
