package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// A run created with many events (an import) commits with the WAL's checkpoint left to the
// store's goroutine: once it is done, the database file holds the run (not only the WAL), and
// the connection that wrote it checkpoints again on its own (wal_autocheckpoint restored).
func TestLargeCreateCheckpointsAfter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "baton.db")
	s, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.db.SetMaxOpenConns(1) // the connection that writes is the one asked below
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	events := make([]traces.Event, pipelineEvents)
	for i := range events {
		events[i] = traces.Event{Seq: int64(i + 1), Time: at, Kind: traces.KindMessage, Agent: "a",
			Message: &traces.Message{Role: "assistant", Content: fmt.Sprintf("reply number %d, which takes some room in the file", i+1)}}
	}
	if err := s.Create(traces.Run{ID: "big", Flow: "f", StartedAt: at, Status: traces.StatusCompleted}, live.Tally{Events: int64(len(events))}, nil, events); err != nil {
		t.Fatal(err)
	}
	s.background.Wait()
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() < before.Size()+int64(len(events))*40 {
		t.Errorf("the database file grew from %d to %d bytes: the run's pages are not checkpointed into it", before.Size(), after.Size())
	}
	conn, err := s.db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var pages int
	if err := conn.QueryRowContext(context.Background(), `PRAGMA wal_autocheckpoint`).Scan(&pages); err != nil || pages != autocheckpoint {
		t.Errorf("wal_autocheckpoint = %d, %v: want %d", pages, err, autocheckpoint)
	}
}

// Deleting a run deletes its search rows' marks as rows of several texts (search_joined), and
// only its own.
func TestDeleteForgetsJoinedRows(t *testing.T) {
	s, err := Open(Memory, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	for _, id := range []string{"r1", "r2"} {
		events := make([]traces.Event, 3000) // three chunks, each a row of several texts
		for i := range events {
			events[i] = traces.Event{Seq: int64(i + 1), Time: at, Kind: traces.KindMessage, Agent: "a",
				Message: &traces.Message{Role: "assistant", Content: fmt.Sprintf("%s says %d", id, i)}}
		}
		if err := s.Create(traces.Run{ID: id, Flow: "f", StartedAt: at, Status: traces.StatusCompleted}, live.Tally{Events: 3000}, nil, events); err != nil {
			t.Fatal(err)
		}
	}
	count := func() (n int) {
		if err := s.db.QueryRow(`SELECT count(*) FROM search_joined`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 6 {
		t.Fatalf("%d rows of several texts for two runs of three chunks, want 6", n)
	}
	if err := s.Delete("r1"); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 3 {
		t.Errorf("%d rows of several texts once r1 is deleted, want r2's 3", n)
	}
}
