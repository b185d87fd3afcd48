package traces_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/baton-dev/baton/traces"
)

// TestWriteFile: a trace written replaces what the path held, reads back as it was written, and
// leaves nothing else in the folder; a folder that does not exist is an error, not a file.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.trace.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := richTrace()
	if err := traces.WriteFile(path, want); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := traces.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	assertEqualTraces(t, got, want)
	if err := traces.WriteFile(filepath.Join(dir, "missing", "run.trace.json"), want); err == nil {
		t.Error("WriteFile into a folder that does not exist succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %d entries after the writes, want only the trace", len(entries))
	}
}
