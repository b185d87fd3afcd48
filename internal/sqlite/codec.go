package sqlite

import (
	"bytes"
	"fmt"

	"github.com/baton-dev/baton/traces"
)

// The store keeps each event as the bytes of this one pair: encoder.append, which may refer to
// the run's earlier events (through the state newEncoder builds from them), and decodeEvents,
// which reads a run's events back in order. An event is its line of a trace file in the current
// format version: a model or agent input that begins with an earlier event's input refers to it
// and holds only the messages after, so a long conversation is stored in space linear in its
// messages.

// encoder encodes the events of one run, in order.
type encoder struct {
	enc  traces.EventEncoder
	last int64 // the seq of the last event encoded
}

// newEncoder returns the encoder of a run whose events so far are earlier.
func newEncoder(earlier []traces.Event) *encoder {
	e := &encoder{}
	for i := range earlier {
		// Only the references the encoder remembers matter; earlier events were encoded once.
		e.enc.Refs(&earlier[i])
		e.last = earlier[i].Seq
	}
	return e
}

// append appends the line stored for ev, the event after the last one encoded, to dst. The
// line has no newline: a chunk of events joins them by newlines (insertEvents).
func (e *encoder) append(dst []byte, ev traces.Event) ([]byte, error) {
	data, err := e.enc.AppendEvent(dst, ev)
	if err != nil {
		return dst, err // it names the event
	}
	e.last = ev.Seq
	return data, nil
}

// decodeEvents reads back a run's events from its chunks, in seq order, with the checks a trace
// file's events get (on several cores for a long run: traces.DecodeRows). Each event is a slice
// of its chunk, not a copy.
func decodeEvents(chunks [][]byte) ([]traces.Event, error) {
	n := 0
	for _, c := range chunks {
		n += bytes.Count(c, []byte{'\n'}) + 1
	}
	rows := make([][]byte, 0, n)
	for _, c := range chunks {
		for len(c) > 0 {
			line, rest, _ := bytes.Cut(c, []byte{'\n'})
			rows, c = append(rows, line), rest
		}
	}
	events, err := traces.DecodeRows(rows)
	if err != nil {
		return nil, fmt.Errorf("decode stored events: %w", err)
	}
	return events, nil
}
