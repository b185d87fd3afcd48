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

// TestEncodeEventsIsMarshal: a trace whose events come in batches, some in t.Events and the rest
// from next, encodes to the bytes Marshal returns, and next's error ends it.
func TestEncodeEventsIsMarshal(t *testing.T) {
	tr := webtest.Large(5_000)
	want, err := traces.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	for _, split := range []struct{ head, batch int }{{0, 1}, {0, 999}, {7, 1000}, {4999, 5000}, {5000, 1}} {
		head := tr
		head.Events = tr.Events[:split.head]
		rest := tr.Events[split.head:]
		var got bytes.Buffer
		err := traces.EncodeEvents(&got, head, func() ([]traces.Event, error) {
			n := min(split.batch, len(rest))
			batch := rest[:n]
			rest = rest[n:]
			return batch, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%+v: EncodeEvents wrote %d bytes unlike Marshal's %d", split, got.Len(), len(want))
		}
	}
	empty := traces.Trace{Run: tr.Run}
	var got bytes.Buffer
	if err := traces.EncodeEvents(&got, empty, func() ([]traces.Event, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if want := mustMarshal(t, empty); !bytes.Equal(got.Bytes(), want) {
		t.Errorf("no events: EncodeEvents wrote %q, want %q", got.Bytes(), want)
	}
	broken := errors.New("log unreadable")
	err = traces.EncodeEvents(&got, empty, func() ([]traces.Event, error) { return nil, broken })
	if !errors.Is(err, broken) {
		t.Errorf("EncodeEvents with a failing source: %v, want its error", err)
	}
}

type countingWriter struct {
	w      *bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) { c.writes++; return c.w.Write(p) }

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }
