package traces_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
)

// TestEncodeIsMarshal: Encode writes, a block at a time, the bytes Marshal returns, for a trace
// of several blocks and an empty one, and reports a writer's failure.
func TestEncodeIsMarshal(t *testing.T) {
	for _, tr := range []traces.Trace{webtest.Large(20_000), {Run: webtest.Large(1).Run}} {
		want, err := traces.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		w := &countingWriter{w: &got}
		if err := traces.Encode(w, tr); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("Encode wrote %d bytes unlike Marshal's %d", got.Len(), len(want))
		}
		// Blocks are flushed once past 7/8 of a MiB.
		if most := len(want)/(7<<17) + 1; w.writes > most || len(want) > 4<<20 && w.writes < 4 {
			t.Errorf("%d bytes in %d writes, want about one a megabyte", len(want), w.writes)
		}
	}
	broken := errors.New("disk full")
	if err := traces.Encode(failingWriter{broken}, webtest.Large(100)); !errors.Is(err, broken) {
		t.Errorf("Encode into a failing writer: %v, want its error", err)
	}
}

type countingWriter struct {
	w      *bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) { c.writes++; return c.w.Write(p) }

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }
