package cli_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/cli"
	"github.com/baton-dev/baton/traces"
)

func TestRunWritesTrace(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t.json")
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), []string{"run", "supervisor", "--out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		t.Fatalf("the written trace does not read back: %v", err)
	}
	if tr.Run.Status != traces.StatusCompleted || tr.Run.Flow != "supervisor" {
		t.Errorf("run %+v, want a completed supervisor run", tr.Run)
	}
	var transfers []string
	for _, e := range tr.Events {
		if e.Kind == traces.KindTransfer {
			transfers = append(transfers, e.Transfer.From+">"+e.Transfer.To+":"+e.Transfer.Mode)
		}
	}
	want := "supervisor>research_agent:llm research_agent>supervisor:deterministic supervisor>math_agent:llm math_agent>supervisor:deterministic"
	if got := strings.Join(transfers, " "); got != want {
		t.Errorf("transfers %q, want %q", got, want)
	}
	// One line per event, printed as it happened.
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != len(tr.Events) || !strings.Contains(lines[len(lines)-1], "run.finished") {
		t.Errorf("printed %d lines for %d events; last: %q", len(lines), len(tr.Events), lines[len(lines)-1])
	}
	if _, err := os.Stat(out + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}
}

// TestRunApproval: `run approval` stops at the refund's interrupt and says how to answer it;
// --approve and --reject resume it in the same trace, printed once, event by event.
func TestRunApproval(t *testing.T) {
	for _, tc := range []struct {
		name   string
		flags  []string
		code   int
		status traces.Status
		says   string // in the last lines printed
	}{
		{"no decision", nil, 1, traces.StatusInterrupted, "Run it again with --approve, or --reject REASON."},
		{"approve", []string{"--approve"}, 0, traces.StatusCompleted, "Refunded €49.00"},
		{"reject", []string{"--reject", "not a duplicate"}, 0, traces.StatusCompleted, "rejected by the reviewer: not a duplicate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "t.json")
			var stdout, stderr bytes.Buffer
			args := append([]string{"run", "approval", "--out", out}, tc.flags...)
			if code := cli.Run(context.Background(), args, &stdout, &stderr); code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, stderr.String())
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := traces.Unmarshal(data)
			if err != nil || tr.Run.Status != tc.status {
				t.Fatalf("trace: %v, run %+v, want %s", err, tr.Run, tc.status)
			}
			printed := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			events := printed
			if tc.status == traces.StatusInterrupted {
				events = printed[:len(printed)-2] // the question and how to answer it
			}
			if len(events) != len(tr.Events) {
				t.Errorf("printed %d event lines for %d events", len(events), len(tr.Events))
			}
			if tail := strings.Join(printed[len(printed)-3:], "\n"); !strings.Contains(tail, tc.says) {
				t.Errorf("the run ends printing %q, want %q in it", tail, tc.says)
			}
		})
	}
}

func TestCommandErrors(t *testing.T) {
	dir := t.TempDir()
	later := filepath.Join(dir, "later.trace.json")
	if err := os.WriteFile(later, []byte(`{"format":"baton.trace","version":3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown flow", []string{"run", "nope"}, `unknown flow "nope"; known flows: ` + strings.Join(flowNames(), ", ")},
		{"run without flow", []string{"run"}, "run needs a flow name"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"bad flag", []string{"run", "supervisor", "--colour"}, "flag provided but not defined: -colour"},
		{"approve and reject", []string{"run", "approval", "--approve", "--reject", "no"}, "--approve and --reject exclude each other"},
		{"bad address", []string{"serve", "--addr", "nowhere"}, "nowhere"},
		{"weak token", []string{"serve", "--token", "a"}, `the token is too short to be safe: 1 characters, want at least 32; make one with "openssl rand -hex 16"`},
		{"blank token", []string{"serve", "--token", " "}, "no spaces"},
		{"open a file the validator refuses", []string{"open", later}, later + ": trace version 3 is not supported"},
		{"open a missing file", []string{"open", filepath.Join(dir, "nope.json")}, "no such file"},
		{"open without a file", []string{"open"}, "open needs a trace file"},
		{"open two files", []string{"open", later, later}, "open takes one file"},
		{"lease heartbeat too short", []string{"serve", "--lease-heartbeat", "10ms"}, "--lease-heartbeat 10ms, --lease-expiry 30s: the lease heartbeat 10ms is shorter than 100ms"},
		{"lease expiry too short", []string{"serve", "--lease-expiry", "10s"}, "--lease-heartbeat 5s, --lease-expiry 10s: the lease expiry 10s is shorter than 3 heartbeats (15s)"},
		{"app wait too short", []string{"serve", "--app-wait", "0s"}, "--app-wait 0s is not between 1s (an app retrying each second may find its run ended) and 24h"},
		{"app wait too long", []string{"serve", "--app-wait", "48h"}, "--app-wait 48h0m0s is not between 1s"},
		{"advertise not a base URL", []string{"serve", "--advertise", "baton1:7070"}, `--advertise "baton1:7070" is not a base URL such as http://baton1.example:7070`},
		{"advertise with a path", []string{"serve", "--advertise", "http://baton1:7070/baton?x=1"}, `--advertise "http://baton1:7070/baton?x=1" is not a base URL`},
		{"otlp endpoint not a URL", []string{"run", "supervisor", "--otlp-endpoint", "localhost:4318"}, `--otlp-endpoint: OTLP endpoint "localhost:4318" is not an http:// or https:// URL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := cli.Run(context.Background(), tc.args, &stdout, &stderr); code == 0 {
				t.Fatalf("exit 0, want non-zero")
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tc.want)
			}
		})
	}
}

func TestFlowsLists(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), []string{"flows"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, name := range flowNames() {
		if !strings.Contains(stdout.String(), name) {
			t.Errorf("flows output lacks %s:\n%s", name, stdout.String())
		}
	}
}

// flowNames lists the catalogue's flows, in its order.
func flowNames() []string {
	var names []string
	for _, f := range agents.Catalogue() {
		names = append(names, f.Name)
	}
	return names
}

// lockedBuffer is a bytes.Buffer that a command writes while a test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestOpenServesATraceFile(t *testing.T) {
	const file = "../../traces/testdata/v2/supervisor.trace.json"
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr lockedBuffer
	exit := make(chan int, 1)
	go func() { exit <- cli.Run(ctx, []string{"open", file, "--addr", "127.0.0.1:0"}, &stdout, &stderr) }()

	page := regexp.MustCompile(`http://127\.0\.0\.1:[1-9][0-9]*/runs/run-20260314-093000-7f3a`)
	deadline := time.Now().Add(10 * time.Second)
	for page.FindString(stdout.String()) == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no run page address printed; stdout %q, stderr %q", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	url := page.FindString(stdout.String())
	if body := get(t, url); !strings.Contains(body, "math_agent") {
		t.Errorf("the run page does not show the trace's agents")
	}
	if got := get(t, strings.Replace(url, "/runs/", "/api/runs/", 1)+"/trace"); got != string(want) {
		t.Errorf("the served trace differs from the file")
	}
	cancel()
	select {
	case code := <-exit:
		if code != 0 {
			t.Errorf("exit %d after the context ended, stderr %q", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("open did not return after its context ended")
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
	return string(body)
}
