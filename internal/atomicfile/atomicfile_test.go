package atomicfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/atomicfile"
)

// TestWriteWithIsWholeOrNothing: a write that fails halfway leaves what the file held before and
// no temporary file; one that succeeds replaces it whole, readable by others.
func TestWriteWithIsWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.trace.json")
	if err := atomicfile.Write(path, []byte("before")); err != nil {
		t.Fatal(err)
	}
	broken := errors.New("disk on fire")
	err := atomicfile.WriteWith(path, func(w io.Writer) error {
		if _, err := io.WriteString(w, strings.Repeat("half ", 1<<16)); err != nil {
			return err
		}
		return broken
	})
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), path) {
		t.Fatalf("failed write: %v, want %v naming %s", err, broken, path)
	}
	if got, _ := os.ReadFile(path); string(got) != "before" {
		t.Fatalf("after a failed write the file holds %.20q, want what it held before", got)
	}
	big := strings.Repeat("whole ", 1<<16)
	if err := atomicfile.WriteWith(path, func(w io.Writer) error { _, err := io.WriteString(w, big); return err }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != big {
		t.Fatalf("the file holds %d bytes, want the %d written", len(got), len(big))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, want 0644", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("%d entries in the folder, want the file alone (no temporary left)", len(entries))
	}
}
