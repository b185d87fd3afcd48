package postgres_test

import (
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// A run's writer whose write failed writes the batch again (live.Broker's retry); when the
// failed write had been committed all the same (its answer lost: the database stalled past the
// call's timeout, then went on), the batch again is written once: the run has each event once,
// and the write succeeds, where a second insert would fail for good ("duplicate key") and leave
// the run in memory only. Here the lost answer is played by saving a batch the database has: the
// first time it fails (the writer's encoder runs ahead of the database), the next succeeds.
func TestARewrittenBatchTheDatabaseHasIsWrittenOnce(t *testing.T) {
	s, _ := mustOpen(t, 0)
	start := time.Now().UTC()
	first := runningEvents(start, 1, 2)
	run := traces.Run{ID: "r-rewritten", Flow: "f", StartedAt: start, Status: traces.StatusRunning}
	var tally live.Tally
	for _, e := range first {
		tally.Add(e)
	}
	if err := s.Create(tally.Apply(run), tally, nil, first); err != nil {
		t.Fatal(err)
	}
	batch := runningEvents(start, 3, 3)
	for _, e := range batch {
		tally.Add(e)
	}
	if err := s.Save(tally.Apply(run), tally, nil, batch); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(tally.Apply(run), tally, nil, batch); err == nil {
		t.Log("the writer took the batch again at once") // a writer that checks first: fine too
	}
	if err := s.Save(tally.Apply(run), tally, nil, batch); err != nil {
		t.Fatalf("the batch written again after a failed write: %v; want it taken (the database has it)", err)
	}
	next := runningEvents(start, 6, 1)
	tally.Add(next[0])
	if err := s.Save(tally.Apply(run), tally, nil, next); err != nil {
		t.Fatalf("the next batch: %v", err)
	}
	tr, err := s.Load("r-rewritten")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) != 6 {
		t.Fatalf("the run has %d events; want 6, each once", len(tr.Events))
	}
	for i, e := range tr.Events {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i+1, e.Seq)
		}
	}
}
