package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/cli"
	"github.com/baton-dev/baton/traces"
)

// TestCompareCommand: the table has a row per flow whose model-call count is the written trace's,
// and a wrong flow name is refused with the known names.
func TestCompareCommand(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"compare", "supervisor", "supervisor-agenttool", "--out", dir}
	if code := cli.Run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "task: \"Find US and NY GDP") {
		t.Errorf("the two flows share a default input, yet:\n%s", stdout.String())
	}
	for _, flow := range []string{"supervisor", "supervisor-agenttool"} {
		data, err := os.ReadFile(filepath.Join(dir, flow+".json"))
		if err != nil {
			t.Fatal(err)
		}
		tr, err := traces.Unmarshal(data)
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		for _, e := range tr.Events {
			if e.Kind == traces.KindModelFinished {
				calls++
			}
		}
		var row []string
		for _, line := range strings.Split(stdout.String(), "\n") {
			if f := strings.Fields(line); len(f) > 2 && f[0] == flow {
				row = f
				break
			}
		}
		if len(row) < 3 || row[2] != strconv.Itoa(calls) {
			t.Errorf("%s row %q, want %d model calls", flow, row, calls)
		}
		if !strings.HasSuffix(strings.Join(row, " "), "scripted: $0") {
			t.Errorf("%s row %q, want it to cost scripted: $0", flow, row)
		}
		if !strings.Contains(stdout.String(), "(run "+tr.Run.ID+",") {
			t.Errorf("output does not name run %s", tr.Run.ID)
		}
	}
	stderr.Reset()
	if code := cli.Run(context.Background(), []string{"compare", "supervisor", "nope"}, &stdout, &stderr); code == 0 ||
		!strings.Contains(stderr.String(), "nope") || !strings.Contains(stderr.String(), "supervisor-agenttool") {
		t.Errorf("unknown flow: exit %d, %s", code, stderr.String())
	}
}
