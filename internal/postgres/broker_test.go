package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/postgres"
	"github.com/baton-dev/baton/internal/storetest"
	"github.com/baton-dev/baton/traces"
)

func marshal(tb testing.TB, tr traces.Trace) []byte {
	tb.Helper()
	data, err := traces.Marshal(tr)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// Every flow of the catalogue, written as it goes by a broker, reads back from PostgreSQL byte
// for byte as the recording holds it, from this store and from another one on the database.
func TestCatalogueReadsBackIdentical(t *testing.T) {
	store, url := mustOpen(t, 0)
	storetest.CatalogueReadsBack(t, store, func() live.Store {
		other, err := postgres.Open(url, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Close() })
		return other
	})
}

// Recover ends a run that a stopped server left running interrupted, after its last saved event,
// and the run can be resumed (saved again) from there.
func TestRecoverEndsRunsLeftRunning(t *testing.T) {
	s, url := mustOpen(t, 0)
	start := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	events := []traces.Event{
		{Seq: 1, Time: start, Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}},
		{Seq: 2, Time: start.Add(time.Second), Kind: traces.KindMessage, Agent: "a", Message: &traces.Message{Role: "user", Content: "hi"}},
	}
	var tally live.Tally
	for _, e := range events {
		tally.Add(e)
	}
	if err := s.Create(tally.Apply(traces.Run{ID: "r-left", Flow: "f", StartedAt: start}), tally, nil, events); err != nil {
		t.Fatal(err)
	}
	s.Close() // the server stops without ending it

	s2, err := postgres.Open(url, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if n, err := s2.Recover(context.Background()); err != nil || n != 1 {
		t.Fatalf("Recover = %d, %v; want 1 run", n, err)
	}
	tr, err := s2.Load("r-left")
	if err != nil {
		t.Fatal(err)
	}
	last := tr.Events[len(tr.Events)-1]
	if len(tr.Events) != 3 || tr.Run.Status != traces.StatusInterrupted || last.Kind != traces.KindRunFinished ||
		!last.Time.Equal(events[1].Time) {
		t.Errorf("recovered run: %s with %d events, last %+v; want interrupted after its 2 events", tr.Run.Status, len(tr.Events), last)
	}
	if n, err := s2.Recover(context.Background()); err != nil || n != 0 {
		t.Errorf("second Recover = %d, %v; want none", n, err)
	}
}
