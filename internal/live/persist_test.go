package live_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// heldStore is a MemoryStore whose Saves wait for the test: each takes a value from commits, and
// fails when it is an error.
type heldStore struct {
	*live.MemoryStore
	commits chan error
}

func (s heldStore) Save(run traces.Run, tally live.Tally, agents []traces.Agent, events []traces.Event) error {
	if err := <-s.commits; err != nil {
		return err
	}
	return s.MemoryStore.Save(run, tally, agents, events)
}

// pump answers every Save of store with err from now until the test ends.
func pump(t *testing.T, store heldStore, err error) {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for {
			select {
			case store.commits <- err:
			case <-stop:
				return
			}
		}
	}()
}

// closed waits until b has written its runs.
func closed(t *testing.T, b *live.Broker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestViewersSeeOnlyWhatTheStoreCommitted holds the store's commits: a subscriber of a stored run
// reads nothing the store has not committed, run.finished included, and reads each batch once it
// is. A broker whose store fails lets its subscribers read the run as recorded.
func TestViewersSeeOnlyWhatTheStoreCommitted(t *testing.T) {
	store := heldStore{live.NewMemoryStore(0), make(chan error)}
	b := live.NewStoredBroker(0, store, nil)
	rec := traces.NewRecording(traces.Run{ID: "r", Flow: "f"}, nil)
	rec.Emit(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{}})
	if err := b.Add(rec); err != nil { // created with its first event, committed
		t.Fatal(err)
	}
	sub := rec.Subscribe(0)
	rec.Emit(traces.Event{Kind: traces.KindMessage, Message: &traces.Message{Role: "user", Content: "hi"}})
	rec.Finish(traces.StatusCompleted, "")

	buf := make([]traces.Event, 8)
	if n, err := sub.Poll(buf); n != 1 || err != nil || buf[0].Seq != 1 {
		t.Fatalf("before any commit the subscriber read %d events (%v); want only the created run.started", n, err)
	}
	if n, err := sub.Poll(buf); n != 0 || err != nil {
		t.Fatalf("before the writer's commit the subscriber read %d events (%v); want none", n, err)
	}
	pump(t, store, nil)
	if got := seqs(readAll(t, sub, 8)); !slices.Equal(got, []int64{2, 3}) {
		t.Errorf("after the commits the subscriber read %v; want 2 and 3", got)
	}
	closed(t, b)

	// A store that fails: the run goes on in memory, and its subscribers read it all.
	store = heldStore{live.NewMemoryStore(0), make(chan error)}
	b = live.NewStoredBroker(0, store, slog.New(slog.DiscardHandler))
	failed := traces.NewRecording(traces.Run{ID: "s", Flow: "f"}, nil)
	if err := b.Add(failed); err != nil {
		t.Fatal(err)
	}
	sub = failed.Subscribe(0)
	failed.Emit(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{}})
	failed.Finish(traces.StatusCompleted, "")
	pump(t, store, errors.New("disk full"))
	if got := seqs(readAll(t, sub, 8)); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("after the store failed the subscriber read %v; want 1 and 2", got)
	}
	closed(t, b)
}

// TestBrokerResumeOfARunningRunAnswersAtOnce: a broker asked to resume a run that is going on
// (resumed already, its writer busy) refuses at once instead of waiting for the run's end, which
// held the caller, and whoever waited on it, for as long as the run went on.
func TestBrokerResumeOfARunningRunAnswersAtOnce(t *testing.T) {
	b := live.NewStoredBroker(0, live.NewMemoryStore(0), nil)
	rec := traces.NewRecording(traces.Run{ID: "r1", Flow: "f"}, nil)
	if err := b.Add(rec); err != nil {
		t.Fatal(err)
	}
	defer rec.Finish(traces.StatusCompleted, "")
	done := make(chan error, 1)
	go func() { done <- b.Resume(rec) }()
	select {
	case err := <-done:
		if traces.ErrorCode(err) != traces.CodeConflict {
			t.Errorf("Resume of a running run = %v, want a conflict", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Resume of a running run waited for its end")
	}
}

// readAll reads sub to its end, in reads of at most batch events.
func readAll(tb testing.TB, sub *traces.Subscription, batch int) []traces.Event {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var events []traces.Event
	buf := make([]traces.Event, batch)
	for {
		k, err := sub.Read(ctx, buf)
		if errors.Is(err, io.EOF) {
			return events
		}
		if err != nil {
			tb.Fatalf("Read after %d events: %v", len(events), err)
		}
		events = append(events, buf[:k]...)
	}
}

// TestAStoreFaultThatPassesLosesNothing: the store fails a run's writes with a fault that may
// pass (a database restarting: CodeUnavailable with a Retry), three times, then takes them: the
// batch is written again, the store ends with every event and the run's end, and its viewers
// read each event once, in order, once committed. A fault that waiting does not mend (NoRetry)
// is given up at once: the run goes on in memory only.
func TestAStoreFaultThatPassesLosesNothing(t *testing.T) {
	store := heldStore{live.NewMemoryStore(0), make(chan error)}
	b := live.NewStoredBroker(0, store, slog.New(slog.DiscardHandler))
	rec := traces.NewRecording(traces.Run{ID: "r", Flow: "f"}, nil)
	if err := b.Add(rec); err != nil {
		t.Fatal(err)
	}
	sub := rec.Subscribe(0)
	rec.Emit(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{}})
	rec.Emit(traces.Event{Kind: traces.KindMessage, Message: &traces.Message{Role: "user", Content: "hi"}})
	rec.Finish(traces.StatusCompleted, "")
	down := &traces.Error{Code: traces.CodeUnavailable, Retry: time.Second, Message: "the database is not available"}
	for range 3 {
		store.commits <- down
	}
	buf := make([]traces.Event, 8)
	if n, err := sub.Poll(buf); n != 0 || err != nil {
		t.Fatalf("while the store failed the subscriber read %d events (%v); want none", n, err)
	}
	pump(t, store, nil)
	if got := seqs(readAll(t, sub, 8)); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("once the store took the writes the subscriber read %v; want 1, 2, 3", got)
	}
	closed(t, b)
	tr, err := store.Load("r")
	if err != nil || len(tr.Events) != 3 || tr.Run.Status != traces.StatusCompleted {
		t.Errorf("the store holds %d events, the run %s (%v); want all 3, completed", len(tr.Events), tr.Run.Status, err)
	}

	// Waiting does not mend it: given up at the first failure.
	store = heldStore{live.NewMemoryStore(0), make(chan error)}
	b = live.NewStoredBroker(0, store, slog.New(slog.DiscardHandler))
	failed := traces.NewRecording(traces.Run{ID: "s", Flow: "f"}, nil)
	if err := b.Add(failed); err != nil {
		t.Fatal(err)
	}
	sub = failed.Subscribe(0)
	failed.Emit(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{}})
	failed.Finish(traces.StatusCompleted, "")
	store.commits <- &traces.Error{Code: traces.CodeUnavailable, Retry: traces.NoRetry, Message: "read-only"}
	if got := seqs(readAll(t, sub, 8)); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("after the store failed for good the subscriber read %v; want 1 and 2", got)
	}
	closed(t, b)
}
