package sqlite

import (
	"fmt"

	"github.com/baton-dev/baton/traces"
)

// The store keeps each event as the bytes of this one pair: encoder.encode, which may refer to
// the run's earlier events (through the state newEncoder builds from them), and decodeEvents,
// which reads a run's events back in order. An event is its line of a trace file in the current
// format version: a model or agent input that begins with an earlier event's input refers to it
// and holds only the messages after, so a long conversation is stored in space linear in its
// messages.

// encoder encodes the events of one run, in order.
type encoder struct{ enc traces.EventEncoder }

// newEncoder returns the encoder of a run whose events so far are earlier.
func newEncoder(earlier []traces.Event) *encoder {
	e := &encoder{}
	var scratch []byte
	for _, ev := range earlier {
		// Only the references the encoder remembers matter; earlier events were encoded once.
		scratch, _ = e.enc.AppendEvent(scratch[:0], ev)
	}
	return e
}

// encode returns the bytes stored for e, the event after the last one encoded.
func (e *encoder) encode(ev traces.Event) ([]byte, error) {
	data, err := e.enc.AppendEvent(nil, ev)
	if err != nil {
		return nil, fmt.Errorf("encode event %d: %w", ev.Seq, err)
	}
	return data, nil
}

// decodeEvents reads back a run's events from the bytes encode made of each, in seq order, with
// the checks a trace file's events get (on several cores for a long run: traces.DecodeRows).
func decodeEvents(rows [][]byte) ([]traces.Event, error) {
	events, err := traces.DecodeRows(rows)
	if err != nil {
		return nil, fmt.Errorf("decode stored events: %w", err)
	}
	return events, nil
}
