package sqlite_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/sqlite"
	"github.com/baton-dev/baton/internal/storetest"
	"github.com/baton-dev/baton/traces"
)

func TestMain(m *testing.M) {
	if childMain() {
		return
	}
	code := m.Run()
	// The benchmarks' shared database is closed before looking for leaks: its pool's goroutine
	// is not one.
	closeFilled()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// mustOpen opens a store in a fresh file of the test's; cleanup closes it.
func mustOpen(tb testing.TB, keep int) (*sqlite.Store, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "baton.db")
	s, err := sqlite.Open(path, keep)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s, path
}

// closeBroker waits until b has written every run.
func closeBroker(tb testing.TB, b *live.Broker) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		tb.Fatal(err)
	}
}

// Every flow of the catalogue, written as it goes by a broker, reads back from the database byte
// for byte as the recording holds it, and as a new process would see it after reopening the
// file; its runs are listed with their tally.
func TestCatalogueReadsBackIdentical(t *testing.T) {
	store, path := mustOpen(t, 0)
	storetest.CatalogueReadsBack(t, store, func() live.Store {
		reopened, err := sqlite.Open(path, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { reopened.Close() })
		return reopened
	})
	page, err := store.List(live.RunQuery{Flow: "supervisor"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Runs) != 1 {
		t.Fatalf("supervisor runs listed: %d, want 1", len(page.Runs))
	}
	if got := page.Runs[0]; got.Status != traces.StatusCompleted || got.Transfers != 4 || got.Agents != 3 || got.Tokens == 0 {
		t.Errorf("supervisor summary %+v, want completed with 4 transfers, 3 agents and its tokens", got)
	}
}

// Runs recorded at the same time each keep their own events, numbered 1, 2, 3... in order.
func TestConcurrentRunsKeepTheirOwnSequence(t *testing.T) {
	store, _ := mustOpen(t, 0)
	b := live.NewStoredBroker(0, store, slog.New(slog.DiscardHandler))
	const runs, events = 8, 300
	var wg sync.WaitGroup
	for r := range runs {
		id := fmt.Sprintf("run-%d", r)
		rec := traces.NewRecording(traces.Run{ID: id, Flow: "concurrent"}, nil)
		if err := b.Add(rec); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for i := range events {
				rec.Emit(traces.Event{Kind: traces.KindMessage, Agent: id,
					Message: &traces.Message{Role: "assistant", Content: fmt.Sprintf("%s says %d", id, i+1)}})
			}
			rec.Finish(traces.StatusCompleted, "")
		})
	}
	wg.Wait()
	closeBroker(t, b)
	for r := range runs {
		id := fmt.Sprintf("run-%d", r)
		tr, err := store.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Events) != events+1 {
			t.Fatalf("%s has %d events, want %d", id, len(tr.Events), events+1)
		}
		for i, e := range tr.Events[:events] {
			if e.Seq != int64(i+1) || e.Agent != id || e.Message.Content != fmt.Sprintf("%s says %d", id, i+1) {
				t.Fatalf("%s events[%d] = seq %d by %s %q: another run's event, or out of order", id, i, e.Seq, e.Agent, e.Message.Content)
			}
		}
		if tr.Run.Status != traces.StatusCompleted {
			t.Errorf("%s status %s, want completed", id, tr.Run.Status)
		}
	}
}

// The SQLite store meets the Store contract, as the in-memory one does.
func TestStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T, keep int) live.Store {
		s, _ := mustOpen(t, keep)
		return s
	})
}
