package sqlite_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
)

// A run created with many events at once (an import) is written by many-row statements while
// its events are encoded on another goroutine: every event reads back in order, and the text of
// events in the first, a middle and the last, partial, statement is found by search. Its
// events also make a later Save of the run continue from the right state.
func TestCreateManyEventsReadsBack(t *testing.T) {
	store, _ := mustOpen(t, 0)
	const n = 9000 // past the pipeline's threshold, and not a multiple of the rows a statement
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	run := traces.Run{ID: "many", Flow: "bulk", Status: traces.StatusRunning, StartedAt: at, Input: "many events"}
	events := make([]traces.Event, n)
	for i := range events {
		events[i] = traces.Event{Seq: int64(i + 1), Time: at.Add(time.Duration(i) * time.Millisecond), Kind: traces.KindMessage,
			Agent: "bulk_agent", Message: &traces.Message{Role: "assistant", Content: fmt.Sprintf("reply number %d", i+1)}}
	}
	if err := store.Create(run, live.Tally{Events: n}, nil, events); err != nil {
		t.Fatal(err)
	}
	next := traces.Event{Seq: n + 1, Time: at.Add(time.Hour), Kind: traces.KindMessage, Agent: "bulk_agent",
		Message: &traces.Message{Role: "assistant", Content: "the last word"}}
	if err := store.Save(run, live.Tally{Events: n + 1}, nil, []traces.Event{next}); err != nil {
		t.Fatal(err)
	}
	tr, err := store.Load("many")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) != n+1 {
		t.Fatalf("read back %d events, want %d", len(tr.Events), n+1)
	}
	for i, e := range tr.Events[:n] {
		if e.Seq != int64(i+1) || e.Message == nil || e.Message.Content != events[i].Message.Content {
			t.Fatalf("events[%d] read back as seq %d %+v, want %+v", i, e.Seq, e.Message, events[i].Message)
		}
	}
	for _, text := range []string{"reply number 17", "reply number 4711", fmt.Sprintf("reply number %d", n), "the last word"} {
		page, err := store.List(live.RunQuery{Text: text})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Runs) != 1 || page.Runs[0].ID != "many" {
			t.Errorf("search for %q found %+v, want the run", text, page.Runs)
		}
	}
}

// An event that cannot be stored, late in a run created with many events, leaves nothing of the
// run behind: neither its first events, written before it was reached, nor the run.
func TestCreateManyEventsAllOrNothing(t *testing.T) {
	store, _ := mustOpen(t, 0)
	const n = 9000
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	run := traces.Run{ID: "broken", Flow: "bulk", Status: traces.StatusCompleted, StartedAt: at, Input: "many events"}
	events := make([]traces.Event, n)
	for i := range events {
		events[i] = traces.Event{Seq: int64(i + 1), Time: at, Kind: traces.KindMessage, Agent: "bulk_agent",
			Message: &traces.Message{Role: "assistant", Content: fmt.Sprintf("reply number %d", i+1)}}
	}
	events[n-100] = traces.Event{Seq: n - 99, Time: at, Kind: traces.KindSessionSet, Agent: "bulk_agent",
		Session: &traces.SessionSet{Key: "k", Value: []byte("{not json")}}
	err := store.Create(run, live.Tally{Events: n}, nil, events)
	if err == nil {
		t.Fatal("Create took an event whose session value is not JSON")
	}
	if msg := err.Error(); strings.Count(msg, fmt.Sprint(n-99)) != 1 || !strings.Contains(msg, `session value "k" is not JSON`) {
		t.Errorf("Create's error %q: want it to name the event once and say what is wrong with it", msg)
	}
	if _, err := store.Load("broken"); traces.ErrorCode(err) != traces.CodeNotFound {
		t.Errorf("Load of the run that failed to be created: %v, want not found", err)
	}
	page, err := store.List(live.RunQuery{Text: "reply number 17"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Runs) != 0 {
		t.Errorf("search finds %d runs, want none: the failed run's events were indexed", len(page.Runs))
	}
}

// A long run (input references, session values, tool calls) imported into the store reads back
// as it was recorded, byte for byte once marshalled: its rows are read in parts on several cores
// (traces.DecodeRows) where it has the text for them.
func TestLongRunReadsBackIdentical(t *testing.T) {
	store, _ := mustOpen(t, 0)
	tr := webtest.Large(40000)
	if err := store.Create(tr.Run, live.Tally{Events: int64(len(tr.Events))}, tr.Agents, tr.Events); err != nil {
		t.Fatal(err)
	}
	got, err := store.Load(tr.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	want, err := traces.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	back, err := traces.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d events, %d bytes marshalled", len(tr.Events), len(want))
	if !bytes.Equal(back, want) {
		t.Fatalf("the run read back differs from the one recorded (%d bytes against %d)", len(back), len(want))
	}
}
