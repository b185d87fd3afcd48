package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/cli"
)

// TestDiff: `baton diff` is silent and exits 0 on two runs of one flow, and on runs that part
// names the first divergence and exits 1; --json says the same to machines.
func TestDiff(t *testing.T) {
	dir := t.TempDir()
	a := runFlowTo(t, dir, "supervisor")
	b := runFlowTo(t, t.TempDir(), "supervisor")
	other := runFlowTo(t, dir, "transfer-unknown")
	diff := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := cli.Run(context.Background(), append([]string{"diff"}, args...), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	if code, out, errOut := diff(a, b); code != 0 || !strings.Contains(out, "the runs took the same turns") || strings.Contains(out, "≠") {
		t.Errorf("diff of two supervisor runs = %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := diff(a, other)
	if code != 1 || !strings.Contains(out, "first divergence: routing decision, in turn 1 of A, 0 of B\n  A: supervisor, as the root (#2)\n  B: no such turn") || !strings.Contains(errOut, "the runs differ") {
		t.Errorf("diff of two flows = %d\n%s%s", code, out, errOut)
	}
	code, out, _ = diff("--json", a, other)
	var got struct {
		First struct {
			What string `json:"what"`
		} `json:"first_divergence"`
		Turns []json.RawMessage `json:"turns"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 1 || got.First.What != "routing decision" || len(got.Turns) == 0 {
		t.Errorf("diff --json = %d %q (%v)", code, out, err)
	}
	if code, _, errOut := diff(a); code != 1 || !strings.Contains(errOut, "diff compares two runs") {
		t.Errorf("diff with one run = %d %q", code, errOut)
	}
	if code, _, errOut := diff(a, "no-such-run", "--db", filepath.Join(dir, "none.db")); code != 1 || !strings.Contains(errOut, "no database of runs") {
		t.Errorf("diff with an unknown run = %d %q", code, errOut)
	}
}

// TestStory: `baton story` tells a trace file's handoff story, turn by turn.
func TestStory(t *testing.T) {
	file := runFlowTo(t, t.TempDir(), "supervisor")
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), []string{"story", file}, &stdout, &stderr); code != 0 {
		t.Fatalf("story = %d: %s", code, stderr.String())
	}
	for _, want := range []string{"route: supervisor > research_agent > supervisor > math_agent > supervisor\nstatus: completed\n",
		"2. research_agent, by transfer from supervisor, fed 1 from the user, 2 from other agents (For context:)\n   calls search(",
		"   hands off to supervisor (deterministic)\n", "answer by supervisor: "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the story lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestFork: `baton fork` re-runs a recorded run with one call answered otherwise; diff finds
// the fork's handoff; a seq that is no model call is refused with what a fork needs.
func TestFork(t *testing.T) {
	dir := t.TempDir()
	original := runFlowTo(t, dir, "supervisor")
	forked := filepath.Join(dir, "fork.json")
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), []string{"fork", original, "--at", "3", "--transfer-to", "math_agent", "--out", forked}, &stdout, &stderr); code != 0 {
		t.Fatalf("fork = %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "supervisor → math_agent (llm)") {
		t.Errorf("the fork's events lack the new handoff:\n%s", stdout.String())
	}
	if tr := readTraceFile(t, forked); tr.Events[0].Run.ForkedFrom == nil || tr.Events[0].Run.ForkedFrom.Seq != 3 {
		t.Errorf("the fork's run.started says forked_from %+v, want the original at #3", tr.Events[0].Run.ForkedFrom)
	}
	stdout.Reset()
	if code := cli.Run(context.Background(), []string{"diff", original, forked}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stdout.String(), "routing decision: A hands off to research_agent (llm) (#9); B hands off to math_agent (llm) (#9)") {
		t.Errorf("diff of the fork = %d:\n%s", code, stdout.String())
	}
	stderr.Reset()
	if code := cli.Run(context.Background(), []string{"fork", original, "--at", "1", "--reply", "x"}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "is no model call (model.started)") {
		t.Errorf("fork at run.started = %d: %s", code, stderr.String())
	}
}
