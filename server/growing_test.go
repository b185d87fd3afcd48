package server_test

import (
	"fmt"
	"testing"

	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// TestEventsSocketSendsInputReferences: a growing conversation of 3,000 calls, whose inputs
// written out whole take about 100 MB, reaches a viewer of the events socket in a few times the
// trace's size, each input referring to the one it extends; the viewer resolves every input to
// what the trace holds. A viewer that joins midway gets the first input it cannot resolve whole,
// once, and the rest as references.
func TestEventsSocketSendsInputReferences(t *testing.T) {
	const calls = 3000
	ts := mustOpenServer(t, server.Config{})
	file := branchingFile(growingEvents(calls, 20, false))
	id := ts.importTrace(t, []byte(file)).ID
	tr := ts.trace(t, id)
	for _, after := range []int64{0, calls / 2} {
		t.Run(fmt.Sprintf("after=%d", after), func(t *testing.T) {
			conn := ts.mustDial(t, fmt.Sprintf("/api/runs/%s/events?after=%d", id, after))
			in := socketInputs{}
			dec := traces.NewEventDecoder() // what docs/live-streams.md offers a Go client from the start
			var got []traces.Event
			sent := 0
			for len(got) == 0 || got[len(got)-1].Kind != traces.KindRunFinished {
				_, data, err := conn.ReadMessage()
				if err != nil {
					t.Fatalf("after %d events: %v", len(got), err)
				}
				sent += len(data)
				batch, refs, err := decodeBatch(data)
				if err != nil {
					t.Fatal(err)
				}
				in.resolve(t, batch, refs)
				if after == 0 {
					if _, err := dec.DecodeEvents(data, nil); err != nil {
						t.Fatalf("traces.EventDecoder refuses the socket's message: %v", err)
					}
				}
				got = append(got, batch...)
			}
			if want := len(tr.Events) - int(after); len(got) != want {
				t.Fatalf("the viewer got %d events, want %d", len(got), want)
			}
			for _, e := range got {
				want := tr.Events[e.Seq-1]
				if e.Model == nil {
					continue
				}
				if n := len(e.Model.Input); n != len(want.Model.Input) || e.Model.Input[n-1].Content != want.Model.Input[n-1].Content || e.Model.Input[0].Content != want.Model.Input[0].Content {
					t.Fatalf("event %d: the viewer resolved an input of %d messages, the trace's has %d", e.Seq, n, len(want.Model.Input))
				}
			}
			if sent > 4*len(file) {
				t.Errorf("the socket sent %d bytes for a trace of %d: inputs went whole", sent, len(file))
			}
			t.Logf("sent %d bytes for a trace of %d", sent, len(file))
		})
	}
}
