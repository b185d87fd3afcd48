package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/postgres"
	"github.com/baton-dev/baton/traces"
)

// Each commit of a run's events announces them on EventsChannel, "RUN-ID LAST-SEQ", in commit
// order, to a connection LISTENing there; a write refused because another server took the run
// over announces nothing.
func TestCommitsAreAnnounced(t *testing.T) {
	s, url := mustOpen(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+postgres.EventsChannel); err != nil {
		t.Fatal(err)
	}
	next := func(want string) {
		t.Helper()
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			t.Fatalf("waiting for %q: %v", want, err)
		}
		if n.Channel != postgres.EventsChannel || n.Payload != want {
			t.Errorf("announced %s %q; want %q", n.Channel, n.Payload, want)
		}
	}
	start := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	var tally live.Tally
	write := func(id string, from, n int, create bool) error {
		events := runningEvents(start, from, n)
		for _, e := range events {
			tally.Add(e)
		}
		run := tally.Apply(traces.Run{ID: id, Flow: "f", StartedAt: start})
		if create {
			return s.Create(run, tally, nil, events)
		}
		return s.Save(run, tally, nil, events)
	}
	if err := write("r-n", 1, 2, true); err != nil {
		t.Fatal(err)
	}
	next("r-n 2")
	if err := write("r-n", 3, 2, false); err != nil {
		t.Fatal(err)
	}
	next("r-n 4")

	exec(t, url, `UPDATE baton_runs SET owner = 'another server' WHERE id = 'r-n'`)
	if err := write("r-n", 5, 1, false); traces.ErrorCode(err) != traces.CodeConflict {
		t.Fatalf("a write to a run taken over: %v; want CodeConflict", err)
	}
	tally = live.Tally{}
	if err := write("r-m", 1, 1, true); err != nil {
		t.Fatal(err)
	}
	next("r-m 1") // not "r-n 5" first
}
