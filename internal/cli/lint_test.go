package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/cli"
)

// runFlowTo records flow with `baton run` into dir and returns the trace file's path.
func runFlowTo(t *testing.T, dir, flow string) string {
	t.Helper()
	out := filepath.Join(dir, flow+".json")
	var stdout, stderr bytes.Buffer
	cli.Run(context.Background(), []string{"run", flow, "--out", out}, &stdout, &stderr) // a failing flow exits 1, and still writes
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("run %s wrote no trace: %v\n%s", flow, err, stderr.String())
	}
	return out
}

// TestLint: `baton lint` names a refused transfer on the run that has one, is silent on a
// healthy run, and exits 1 only for findings at or above --fail-on.
func TestLint(t *testing.T) {
	dir := t.TempDir()
	refused, healthy := runFlowTo(t, dir, "transfer-unknown"), runFlowTo(t, dir, "supervisor")
	lint := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := cli.Run(context.Background(), append([]string{"lint"}, args...), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	code, out, errOut := lint(healthy, refused)
	if code != 1 || !strings.Contains(out, healthy+": no findings") || !strings.Contains(out, refused+": #9 warning refused-transfer: eino refused helpdesk's transfer to refunds_agent") ||
		!strings.Contains(errOut, "1 findings at or above warning") {
		t.Errorf("lint = %d\n%s%s, want the refused transfer named, exit 1", code, out, errOut)
	}
	if code, out, errOut := lint(refused, "--fail-on", "error"); code != 0 || !strings.Contains(out, "refused-transfer") {
		t.Errorf("lint --fail-on error = %d\n%s%s, want the finding printed and exit 0", code, out, errOut)
	}

	code, out, _ = lint("--json", refused)
	var got struct {
		File     string `json:"file"`
		Findings []struct {
			Rule     string  `json:"rule"`
			Severity string  `json:"severity"`
			Seqs     []int64 `json:"seqs"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 1 || got.File != refused || len(got.Findings) != 1 ||
		got.Findings[0].Rule != "refused-transfer" || got.Findings[0].Severity != "warning" || got.Findings[0].Seqs[0] != 9 {
		t.Errorf("lint --json = %d %q (%v)", code, out, err)
	}

	config := filepath.Join(dir, "lint.json")
	if err := os.WriteFile(config, []byte(`{"severity": {"refused-transfer": "info"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := lint(refused, "--config", config); code != 0 || !strings.Contains(out, "info refused-transfer") {
		t.Errorf("lint with the severity lowered = %d\n%s%s, want info and exit 0", code, out, errOut)
	}
}

func TestLintRefusesWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	trace := runFlowTo(t, dir, "supervisor")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"ping_pong_hop": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "lint needs at least one trace file"},
		{[]string{trace, "--fail-on", "fatal"}, `unknown severity "fatal"`},
		{[]string{trace, "--config", bad}, `unknown field "ping_pong_hop"`},
		{[]string{filepath.Join(dir, "missing.json")}, "no such file"},
	} {
		var stdout, stderr bytes.Buffer
		if code := cli.Run(context.Background(), append([]string{"lint"}, tc.args...), &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("lint %v = %d %q, want exit 1 saying %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
