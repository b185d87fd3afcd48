package cli

import (
	"fmt"
	"os"

	"github.com/baton-dev/baton/traces"
)

// readTrace reads a trace file; a file traces.Unmarshal refuses gets its message.
func readTrace(file string) (traces.Trace, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return traces.Trace{}, err
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		return traces.Trace{}, fmt.Errorf("%s: %s", file, traces.ErrorMessage(err))
	}
	return tr, nil
}

// writeTrace writes the trace to path; a reader never sees a half-written file.
func writeTrace(path string, t traces.Trace) error {
	data, err := traces.Marshal(t)
	if err != nil {
		return err
	}
	return writeWhole(path, data)
}

// writeWhole writes data next to path and renames it into place.
func writeWhole(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
