package sqlite

import (
	"encoding/json"
	"fmt"

	"github.com/baton-dev/baton/traces"
)

// The store keeps each event as the bytes of this one pair: encoder.encode, which may refer to
// the run's earlier events (through the state newEncoder builds from them), and decodeEvents,
// which reads a run's events back in order. Today an event is its version-1 JSON, on its own; a
// more compact encoding changes these two and nothing else.

// encoder encodes the events of one run, in order.
type encoder struct{}

// newEncoder returns the encoder of a run whose events so far are earlier.
func newEncoder(earlier []traces.Event) *encoder { return &encoder{} }

// encode returns the bytes stored for e, the event after the last one encoded.
func (*encoder) encode(e traces.Event) ([]byte, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode event %d: %w", e.Seq, err)
	}
	return data, nil
}

// decodeEvents reads back a run's events from the bytes encode made of each, in seq order.
func decodeEvents(rows [][]byte) ([]traces.Event, error) {
	events := make([]traces.Event, len(rows))
	for i, data := range rows {
		if err := json.Unmarshal(data, &events[i]); err != nil {
			return nil, fmt.Errorf("decode event %d: %w", i+1, err)
		}
	}
	traces.CompactSessionValues(events)
	return events, nil
}
