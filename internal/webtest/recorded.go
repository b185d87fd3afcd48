package webtest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/baton-dev/baton/traces"
)

// RecordedSupervisor returns the trace the recorder wrote for a real eino run of the supervisor
// flow, the golden file agents' tests keep (agents/testdata/supervisor.trace.json).
func RecordedSupervisor(t testing.TB) traces.Trace {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "agents", "testdata", "supervisor.trace.json"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
