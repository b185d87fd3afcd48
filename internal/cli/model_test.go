package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/cli"
	"github.com/baton-dev/baton/traces"
)

func TestRunReplaysATrace(t *testing.T) {
	dir := t.TempDir()
	recorded, replayed := filepath.Join(dir, "recorded.json"), filepath.Join(dir, "replayed.json")
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), []string{"run", "transfer", "--input", "Weather in Berlin?", "--out", recorded}, &stdout, &stderr); code != 0 {
		t.Fatalf("record: exit %d: %s", code, stderr.String())
	}
	// No --input: the replay answers the recorded input.
	if code := cli.Run(context.Background(), []string{"run", "transfer", "--model", "replay:" + recorded, "--out", replayed}, &stdout, &stderr); code != 0 {
		t.Fatalf("replay: exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(replayed)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Run.Input != "Weather in Berlin?" || !strings.HasPrefix(tr.Run.Model, "replay of ") || tr.Run.Status != traces.StatusCompleted {
		t.Errorf("replayed run = %+v", tr.Run)
	}
}

func TestRunModelErrors(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "transfer", "--model", "openai:gpt-4o-mini"}, "needs an API key: set OPENAI_API_KEY"},
		{[]string{"run", "transfer", "--model", "gpt-4o"}, `unknown model "gpt-4o": write scripted, openai:MODEL or replay:FILE`},
		{[]string{"run", "transfer", "--model", "replay:/nonexistent.json"}, "cannot read the trace"},
		{[]string{"run", "transfer", "--model", "scripted", "--model", "scripted"}, "run takes one --model"},
		{[]string{"serve", "--model", "openai:"}, "names no model"},
	} {
		var stdout, stderr bytes.Buffer
		if code := cli.Run(context.Background(), c.args, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want an error saying %q", c.args, code, stderr.String(), c.want)
		}
	}
}
