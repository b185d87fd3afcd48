package traces

import "github.com/baton-dev/baton/internal/atomicfile"

// WriteFile writes t to path as Marshal does, whole or not at all: through a temporary file
// beside path, renamed into place, so that a reader never sees half a trace and a failed write
// leaves what path held before.
func WriteFile(path string, t Trace) error {
	data, err := Marshal(t)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, data)
}
