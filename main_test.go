package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/traces"
)

func TestRunWritesTrace(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t.json")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"run", "supervisor", "--out", out}, &stdout, &stderr); code != 0 {
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

func TestCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown flow", []string{"run", "nope"}, `unknown flow "nope"; known flows: agenttool, supervisor, transfer`},
		{"run without flow", []string{"run"}, "run needs a flow name"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"bad flag", []string{"run", "supervisor", "--colour"}, "flag provided but not defined: -colour"},
		{"bad address", []string{"serve", "--addr", "nowhere"}, "nowhere"},
		{"weak token", []string{"serve", "--token", "a"}, `the token is too short to be safe: 1 characters, want at least 32; make one with "openssl rand -hex 16"`},
		{"blank token", []string{"serve", "--token", " "}, "no spaces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tc.args, &stdout, &stderr); code == 0 {
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
	if code := run(context.Background(), []string{"flows"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, name := range []string{"agenttool", "supervisor", "transfer"} {
		if !strings.Contains(stdout.String(), name) {
			t.Errorf("flows output lacks %s:\n%s", name, stdout.String())
		}
	}
}
