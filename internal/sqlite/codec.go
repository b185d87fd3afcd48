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
// file's events get: each chunk as next returns it (false at the end), on several cores for a
// long run, beside the reading of the next ones (traces.DecodeRowsFrom); count is how many events
// the chunks hold, a wrong count costing only time. Each event is a slice of its chunk, not a copy.
func decodeEvents(count int, next func() ([]byte, bool)) ([]traces.Event, error) {
	events, err := traces.DecodeRowsFrom(count, func() [][]byte {
		c, ok := next()
		for ok && len(c) == 0 { // holds no event
			c, ok = next()
		}
		if !ok {
			return nil
		}
		rows := make([][]byte, 0, bytes.Count(c, []byte{'\n'})+1)
		for len(c) > 0 {
			line, rest, _ := bytes.Cut(c, []byte{'\n'})
			rows, c = append(rows, line), rest
		}
		return rows
	})
	if err != nil {
		return nil, fmt.Errorf("decode stored events: %w", err)
	}
	return events, nil
}
