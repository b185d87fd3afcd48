package cli_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/cli"
	"github.com/baton-dev/baton/internal/otlp/otlptest"
	"github.com/baton-dev/baton/traces"
)

func TestRunExportsToOTLP(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flags   []string
		content bool
	}{
		{"without content", nil, false},
		{"with --otlp-content", []string{"--otlp-content"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcv := otlptest.NewReceiver(t)
			out := filepath.Join(t.TempDir(), "t.json")
			args := append([]string{"run", "supervisor", "--out", out, "--otlp-endpoint", rcv.URL}, tc.flags...)
			var stdout, stderr bytes.Buffer
			if code := cli.Run(context.Background(), args, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d, stderr: %s", code, stderr.String())
			}
			tr := readTraceFile(t, out)
			// The command exits once its run's spans are sent: no waiting needed here.
			var root otlptest.Span
			transfers, content := 0, false
			for _, s := range rcv.Spans() {
				if s.Parent == "" {
					root = s
				}
				if s.Name == "execute_tool transfer_to_agent" {
					transfers++
				}
				if _, ok := s.Attrs["gen_ai.input.messages"]; ok {
					content = true
				}
			}
			if root.Name != "invoke_agent supervisor" || root.Attrs["baton.run.id"] != tr.Run.ID || !root.End.Equal(*tr.Run.EndedAt) {
				t.Errorf("run span %+v, want run %s ending at %s", root, tr.Run.ID, tr.Run.EndedAt)
			}
			if transfers != 4 || content != tc.content {
				t.Errorf("%d transfer spans, content %v; want 4, %v", transfers, content, tc.content)
			}
		})
	}
}

// TestRunWithCollectorDown: a collector nobody listens on does not fail the run; the command
// says once that exporting failed.
func TestRunWithCollectorDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String()
	ln.Close()
	out := filepath.Join(t.TempDir(), "t.json")
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), []string{"run", "supervisor", "--out", out, "--otlp-endpoint", endpoint}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d with the collector down, stderr: %s", code, stderr.String())
	}
	if tr := readTraceFile(t, out); tr.Run.Status != traces.StatusCompleted {
		t.Errorf("run %s, want completed", tr.Run.Status)
	}
	if n := strings.Count(stderr.String(), "OpenTelemetry export failed"); n != 1 {
		t.Errorf("stderr says %d times that export failed, want once:\n%s", n, stderr.String())
	}
}

func readTraceFile(t *testing.T, path string) traces.Trace {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
