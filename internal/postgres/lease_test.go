package postgres_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/postgres"
	"github.com/baton-dev/baton/traces"
)

// syncBuffer is a log's output that tests read while a lease's heartbeat writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// events returns n events of a running run, from run.started on.
func runningEvents(start time.Time, from, n int) []traces.Event {
	var events []traces.Event
	for i := from; i < from+n; i++ {
		e := traces.Event{Seq: int64(i), Time: start.Add(time.Duration(i) * time.Second), Kind: traces.KindMessage, Agent: "a",
			Message: &traces.Message{Role: "user", Content: "hi"}}
		if i == 1 {
			e = traces.Event{Seq: 1, Time: start, Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}}
		}
		events = append(events, e)
	}
	return events
}

// Two servers hold leases on one database at once. While A's lease is renewed, B's Recover
// leaves A's running run alone; once A dies (its heartbeat stops), B's heartbeat ends the run
// interrupted after A's last committed event, within the lease's timeout. A's late write to it
// (A was only cut off) is refused with CodeConflict and changes nothing.
func TestADeadServersRunsAreTakenOver(t *testing.T) {
	quick := postgres.LeaseTimes{Heartbeat: 100 * time.Millisecond, Expiry: 2 * time.Second}
	a, url := mustOpen(t, 0)
	b, err := postgres.Open(url, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var log syncBuffer
	la, err := a.Claim("http://a/", quick, nil)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := b.Claim("http://b/", quick, slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatalf("a second server on the database: %v", err)
	}
	defer lb.Release()

	start := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	var tally live.Tally
	save := func(s *postgres.Store, events []traces.Event, create bool) error {
		for _, e := range events {
			tally.Add(e)
		}
		run := tally.Apply(traces.Run{ID: "r-a", Flow: "f", StartedAt: start})
		if create {
			return s.Create(run, tally, nil, events)
		}
		return s.Save(run, tally, nil, events)
	}
	if err := save(a, runningEvents(start, 1, 2), true); err != nil {
		t.Fatal(err)
	}
	if err := save(a, runningEvents(start, 3, 2), false); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Recover(context.Background()); err != nil || n != 0 {
		t.Fatalf("B's Recover while A's lease is renewed = %d, %v; want A's run left alone", n, err)
	}
	if tr, err := b.Load("r-a"); err != nil || tr.Run.Status != traces.StatusRunning {
		t.Fatalf("A's run read by B: %s, %v; want running", tr.Run.Status, err)
	}

	la.Kill()
	var tr traces.Trace
	for deadline := time.Now().Add(30 * time.Second); tr.Run.Status != traces.StatusInterrupted; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("A's run is %s 30 s after A died; want B to end it interrupted. B's log:\n%s", tr.Run.Status, log.String())
		}
		if tr, err = b.Load("r-a"); err != nil {
			t.Fatal(err)
		}
	}
	last := tr.Events[len(tr.Events)-1]
	if len(tr.Events) != 5 || last.Kind != traces.KindRunFinished || last.Seq != 5 || !last.Time.Equal(start.Add(4*time.Second)) {
		t.Errorf("A's run ended by B: %d events, last %+v; want A's 4 committed events, then run.finished", len(tr.Events), last)
	}
	if !strings.Contains(log.String(), "runs of a server whose lease expired are now interrupted") {
		t.Errorf("B's log does not say it took A's run over:\n%s", log.String())
	}

	err = save(a, runningEvents(start, 5, 1), false)
	if traces.ErrorCode(err) != traces.CodeConflict || !strings.Contains(err.Error(), "lease") {
		t.Errorf("A's write after its run was taken over: %v; want CodeConflict naming the lease", err)
	}
	if again, err := b.Load("r-a"); err != nil || !bytes.Equal(marshal(t, again), marshal(t, tr)) {
		t.Errorf("A's late write changed the run B ended (%v)", err)
	}
}

// A server that stops cleanly gives its lease up: the runs it could not end are ended by the
// next server's Recover at once, without waiting for the lease to expire.
func TestAReleasedLeasesRunsAreRecoveredAtOnce(t *testing.T) {
	a, url := mustOpen(t, 0)
	la, err := a.Claim("", postgres.DefaultLeaseTimes, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	events := runningEvents(start, 1, 2)
	var tally live.Tally
	for _, e := range events {
		tally.Add(e)
	}
	if err := a.Create(tally.Apply(traces.Run{ID: "r-left", Flow: "f", StartedAt: start}), tally, nil, events); err != nil {
		t.Fatal(err)
	}
	b, err := postgres.Open(url, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if n, err := b.Recover(context.Background()); err != nil || n != 0 {
		t.Fatalf("Recover while A holds its lease = %d, %v; want none", n, err)
	}
	if err := la.Release(); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Recover(context.Background()); err != nil || n != 1 {
		t.Errorf("Recover once A released its lease = %d, %v; want its run", n, err)
	}
}

// Each lease expires by its own expiry, whatever the expiry of the server looking at it: a
// server with a short one leaves alone the runs of a server with a long one that is late by less
// than its own.
func TestALeaseExpiresByItsOwnExpiry(t *testing.T) {
	a, url := mustOpen(t, 0)
	la, err := a.Claim("http://a/", postgres.LeaseTimes{Heartbeat: 20 * time.Second, Expiry: 60 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	la.Kill() // no heartbeat during the test: its age is set below
	start := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	events := runningEvents(start, 1, 2)
	var tally live.Tally
	for _, e := range events {
		tally.Add(e)
	}
	if err := a.Create(tally.Apply(traces.Run{ID: "r-a", Flow: "f", StartedAt: start}), tally, nil, events); err != nil {
		t.Fatal(err)
	}
	b, err := postgres.Open(url, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	lb, err := b.Claim("http://b/", postgres.LeaseTimes{Heartbeat: 100 * time.Millisecond, Expiry: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	lb.Kill() // its Recover is the test's to call
	exec(t, url, `UPDATE baton_servers SET heartbeat = now() - interval '30 seconds' WHERE address = 'http://a/'`)
	if n, err := b.Recover(context.Background()); err != nil || n != 0 {
		t.Fatalf("Recover 30 s after the heartbeat of a lease that lasts 60 s = %d, %v; want its run left alone", n, err)
	}
	exec(t, url, `UPDATE baton_servers SET heartbeat = now() - interval '61 seconds' WHERE address = 'http://a/'`)
	if n, err := b.Recover(context.Background()); err != nil || n != 1 {
		t.Errorf("Recover 61 s after it = %d, %v; want its run ended", n, err)
	}
}

// Lease times a server cannot work with are refused, saying what to change.
func TestLeaseTimesChecked(t *testing.T) {
	s, _ := mustOpen(t, 0)
	for _, tc := range []struct {
		times postgres.LeaseTimes
		want  string
	}{
		{postgres.LeaseTimes{Heartbeat: 0, Expiry: time.Minute}, "heartbeat 0s is shorter than 100ms"},
		{postgres.LeaseTimes{Heartbeat: 5 * time.Second, Expiry: 10 * time.Second}, "expiry 10s is shorter than 3 heartbeats (15s)"},
	} {
		_, err := s.Claim("", tc.times, nil)
		if traces.ErrorCode(err) != traces.CodeInvalid || !strings.Contains(traces.ErrorMessage(err), tc.want) {
			t.Errorf("Claim with %+v: %v; want invalid, saying %q", tc.times, err, tc.want)
		}
	}
}
