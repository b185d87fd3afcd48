package traces

import (
	"io"

	"github.com/baton-dev/baton/internal/atomicfile"
)

// WriteFile writes t to path as Marshal does, whole or not at all: through a temporary file
// beside path, renamed into place, so that a reader never sees half a trace and a failed write
// leaves what path held before. The file is written as Encode makes it, a block at a time.
func WriteFile(path string, t Trace) error {
	return atomicfile.WriteWith(path, func(w io.Writer) error { return Encode(w, t) })
}
