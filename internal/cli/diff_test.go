package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/cli"
	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
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

// TestForkOfAnAppsRun: `baton fork` of a run whose flow Baton does not run (an app's) prints the
// environment that makes the app's next run the fork, which the app's middleware reads back as
// asked; it refuses --model (the app goes on with its own) and a transfer to no agent of the run.
func TestForkOfAnAppsRun(t *testing.T) {
	dir := t.TempDir()
	tr := readTraceFile(t, runFlowTo(t, dir, "supervisor"))
	tr.Run.Flow = "support-app"
	for i := range tr.Events {
		if r := tr.Events[i].Run; r != nil {
			r.Flow = "support-app"
		}
	}
	app := filepath.Join(dir, "app.json")
	if err := traces.WriteFile(app, tr); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), []string{"fork", app, "--at", "3", "--transfer-to", "math_agent"}, &stdout, &stderr); code != 0 {
		t.Fatalf("fork of an app's run = %d: %s", code, stderr.String())
	}
	_, rest, ok := strings.Cut(stdout.String(), agents.ForkEnv+"='")
	value, _, ok2 := strings.Cut(rest, "'")
	if !ok || !ok2 {
		t.Fatalf("no %s='...' in:\n%s", agents.ForkEnv, stdout.String())
	}
	if f, err := record.ParseAppFork(value); err != nil || f.Run != tr.Run.ID || f.At != 3 || f.TransferTo != "math_agent" {
		t.Errorf("the app would read %+v (%v); want run %s at #3 transferring to math_agent", f, err, tr.Run.ID)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fork", app, "--at", "3", "--transfer-to", "math_agent", "--model", "scripted"}, "takes no --model or --out"},
		{[]string{"fork", app, "--at", "3", "--transfer-to", "nobody"}, `transfer_to "nobody" is no agent of run`},
		{[]string{"fork", app, "--at", "1", "--reply", "x"}, "is no model call (model.started)"},
	} {
		stderr.Reset()
		if code := cli.Run(context.Background(), c.args, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v = %d: %s; want a failure saying %q", c.args[3:], code, stderr.String(), c.want)
		}
	}
}

// TestDiffPricesEachCall: `baton diff --prices FILE` of two runs whose calls name different
// models prints, beside each turn's tokens and in the totals, what the calls cost at the file's
// prices, each call at its own model's; --json gives each turn's cost and the totals in dollars.
func TestDiffPricesEachCall(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, tr traces.Trace) string {
		path := filepath.Join(dir, name)
		if err := traces.WriteFile(path, tr); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a := write("a.json", webtest.Handoff("a", "openai:test-big", []webtest.ModelUse{{Model: "test-big", Prompt: 1000, Completion: 100}},
		[]webtest.ModelUse{{Model: "test-small", Prompt: 2000, Completion: 500}, {Model: "test-big", Prompt: 300, Completion: 30}}))
	b := write("b.json", webtest.Handoff("b", "openai:test-small", []webtest.ModelUse{{Model: "test-small", Prompt: 1000, Completion: 100}},
		[]webtest.ModelUse{{Model: "test-small", Prompt: 400, Completion: 40}}))
	pricesFile := filepath.Join(dir, "prices.json")
	if err := os.WriteFile(pricesFile, []byte(`{"test-big": {"input": 10, "output": 30}, "test-small": {"input": 1, "output": 2}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	usd := func(p, c int, in, out float64) float64 { return (float64(p)*in + float64(c)*out) / 1e6 }
	helperA := usd(2000, 500, 1, 2) + usd(300, 30, 10, 30)
	totalA, totalB := usd(1000, 100, 10, 30)+helperA, usd(1400, 140, 1, 2)

	var stdout, stderr bytes.Buffer
	cli.Run(context.Background(), []string{"diff", a, b, "--prices", pricesFile}, &stdout, &stderr)
	out := strings.Join(strings.Fields(stdout.String()), " ") // the columns' padding aside
	for _, want := range []string{"2830 tok " + prices.Format(helperA) + " | 440 tok " + prices.Format(usd(400, 40, 1, 2)),
		"total 3930 tok " + prices.Format(totalA) + " | 1540 tok " + prices.Format(totalB)} {
		if !strings.Contains(out, want) {
			t.Errorf("diff --prices lacks %q:\n%s%s", want, out, stderr.String())
		}
	}

	// A call naming a model the file has no price for is marked so, never charged at the run's
	// model's price.
	c := write("c.json", webtest.Handoff("c", "openai:test-big", []webtest.ModelUse{{Model: "test-big", Prompt: 1000, Completion: 100}},
		[]webtest.ModelUse{{Model: "test-mystery", Prompt: 400, Completion: 40}}))
	stdout.Reset()
	cli.Run(context.Background(), []string{"diff", a, c, "--prices", pricesFile}, &stdout, &stderr)
	out = strings.Join(strings.Fields(stdout.String()), " ")
	rootC := prices.Format(usd(1000, 100, 10, 30))
	for _, want := range []string{"| 440 tok no price for test-mystery", "| 1540 tok " + rootC + " + no price for test-mystery"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff of a run with an unpriced call lacks %q:\n%s%s", want, out, stderr.String())
		}
	}

	stdout.Reset()
	cli.Run(context.Background(), []string{"diff", "--json", "--prices", pricesFile, a, b}, &stdout, &stderr)
	var got struct {
		Turns []struct {
			A struct {
				Cost *struct{ USD float64 } `json:"cost"`
			} `json:"a"`
		} `json:"turns"`
		Totals [2]struct {
			Tokens int
			Cost   *struct{ USD float64 }
		} `json:"totals"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil || len(got.Turns) != 2 {
		t.Fatalf("diff --json: %v\n%s", err, stdout.String())
	}
	near := func(c *struct{ USD float64 }, want float64) bool { return c != nil && math.Abs(c.USD-want) < 1e-12 }
	if !near(got.Turns[1].A.Cost, helperA) || !near(got.Totals[0].Cost, totalA) || !near(got.Totals[1].Cost, totalB) || got.Totals[0].Tokens != 3930 {
		t.Errorf("diff --json: helper A %+v, totals %+v; want %v, %v and %v", got.Turns[1].A.Cost, got.Totals, helperA, totalA, totalB)
	}
}
