// Package atomicfile writes a file whole or not at all: the one way Baton writes trace files,
// reports and golden stories. Baton's own, not API.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write writes data to path through a temporary file beside it, renamed into place: a reader
// (baton open, a watcher, a test comparing golden files) never sees half a file, and a failed
// write leaves what path held before.
func Write(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // nothing left after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil { // CreateTemp's 0600 is not a trace's
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
