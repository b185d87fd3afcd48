package traces_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/baton-dev/baton/traces"
)

// heldStore is a MemoryStore whose Saves wait for the test: each takes a value from commits, and
// fails when it is an error.
type heldStore struct {
	*traces.MemoryStore
	commits chan error
}

func (s heldStore) Save(run traces.Run, tally traces.Tally, agents []traces.Agent, events []traces.Event) error {
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
func closed(t *testing.T, b *traces.Broker) {
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
	store := heldStore{traces.NewMemoryStore(0), make(chan error)}
	b := traces.NewStoredBroker(0, store, nil)
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
	store = heldStore{traces.NewMemoryStore(0), make(chan error)}
	b = traces.NewStoredBroker(0, store, slog.New(slog.DiscardHandler))
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
