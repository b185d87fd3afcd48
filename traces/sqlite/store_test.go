package sqlite_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/traces/sqlite"
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
func closeBroker(tb testing.TB, b *traces.Broker) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		tb.Fatal(err)
	}
}

func marshal(tb testing.TB, tr traces.Trace) []byte {
	tb.Helper()
	data, err := traces.Marshal(tr)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// Every flow of the catalogue, run by eino with the scripted model and written as it goes, reads
// back from the database byte for byte as the recording holds it, and as a new process would
// see it after reopening the file.
func TestCatalogueReadsBackIdentical(t *testing.T) {
	store, path := mustOpen(t, 0)
	b := traces.NewStoredBroker(0, store, slog.New(slog.DiscardHandler))
	var recs []*traces.Recording
	for _, flow := range agents.Catalogue() {
		rec := traces.NewRecording(traces.Run{ID: "run-" + flow.Name, Flow: flow.Name, Input: flow.DefaultInput, Model: "scripted"}, flow.Agents)
		if err := b.Add(rec); err != nil {
			t.Fatal(err)
		}
		agents.RunFlow(context.Background(), flow, flow.DefaultInput, agents.Options{Pace: agents.NewPace(0)}, rec)
		recs = append(recs, rec)
	}
	closeBroker(t, b)
	reopened, err := sqlite.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer reopened.Close()
	for _, rec := range recs {
		want := marshal(t, rec.Snapshot())
		for name, s := range map[string]*sqlite.Store{"same store": store, "reopened": reopened} {
			tr, err := s.Load(rec.ID())
			if err != nil {
				t.Fatalf("%s: Load(%s): %v", name, rec.ID(), err)
			}
			if got := marshal(t, tr); !bytes.Equal(got, want) {
				t.Errorf("%s: run %s reads back different from the recording:\n got %.300s\nwant %.300s", name, rec.ID(), got, want)
			}
		}
	}
	page, err := b.List(traces.RunQuery{Flow: "supervisor"})
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
	b := traces.NewStoredBroker(0, store, slog.New(slog.DiscardHandler))
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

// create stores an ended run of flow with status, input and one message, started at minute m.
func create(tb testing.TB, s traces.Store, id, flow string, status traces.Status, input, message string, m int) {
	tb.Helper()
	start := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC).Add(time.Duration(m) * time.Minute)
	events := []traces.Event{
		{Seq: 1, Time: start, Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: flow, Input: input, Status: traces.StatusRunning}},
		{Seq: 2, Time: start.Add(time.Second), Kind: traces.KindMessage, Agent: "a", Message: &traces.Message{Role: "assistant", Content: message}},
		{Seq: 3, Time: start.Add(2 * time.Second), Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: status}},
	}
	var tally traces.Tally
	for _, e := range events {
		tally.Add(e)
	}
	run := tally.Apply(traces.Run{ID: id, Flow: flow, Input: input, StartedAt: start})
	if err := s.Create(run, tally, []traces.Agent{{Name: "a", Kind: traces.AgentChatModel}}, events); err != nil {
		tb.Fatal(err)
	}
}

func ids(p traces.RunPage) []string {
	var out []string
	for _, r := range p.Runs {
		out = append(out, r.ID)
	}
	return out
}

func TestListPagesFiltersAndSearches(t *testing.T) {
	store, _ := mustOpen(t, 0)
	for i := range 25 {
		flow, status := "alpha", traces.StatusCompleted
		if i%2 == 1 {
			flow = "beta"
		}
		if i%5 == 0 {
			status = traces.StatusFailed
		}
		create(t, store, fmt.Sprintf("r-%02d", i), flow, status,
			fmt.Sprintf("question %d\nsecond line", i), fmt.Sprintf("answer about Zebra-%d", i), i)
	}
	b := traces.NewStoredBroker(0, store, nil)
	list := func(q traces.RunQuery) traces.RunPage {
		t.Helper()
		p, err := b.List(q)
		if err != nil {
			t.Fatalf("List(%+v): %v", q, err)
		}
		return p
	}

	t.Run("pages cover every run once, newest first", func(t *testing.T) {
		var all []string
		q := traces.RunQuery{Limit: 10}
		for pages := 0; ; pages++ {
			p := list(q)
			all = append(all, ids(p)...)
			if p.Next == "" {
				if pages != 2 {
					t.Errorf("%d pages, want 3", pages+1)
				}
				break
			}
			q.After = p.Next
		}
		if len(all) != 25 || all[0] != "r-24" || all[24] != "r-00" {
			t.Errorf("listed %v", all)
		}
	})
	t.Run("a summary has the first line of the input and the tally", func(t *testing.T) {
		r := list(traces.RunQuery{Limit: 1}).Runs[0]
		if r.Input != "question 24" || r.Events != 3 || r.EndedAt == nil || r.EndedAt.Sub(r.StartedAt) != 2*time.Second {
			t.Errorf("summary %+v", r)
		}
	})
	t.Run("flow and status", func(t *testing.T) {
		p := list(traces.RunQuery{Flow: "beta", Status: traces.StatusFailed})
		if got := fmt.Sprint(ids(p)); got != "[r-15 r-05]" {
			t.Errorf("failed beta runs %s, want [r-15 r-05]", got)
		}
	})
	t.Run("text in a message, any case", func(t *testing.T) {
		if got := fmt.Sprint(ids(list(traces.RunQuery{Text: "zebra-17"}))); got != "[r-17]" {
			t.Errorf("search zebra-17: %s", got)
		}
	})
	t.Run("text in an input", func(t *testing.T) {
		if got := ids(list(traces.RunQuery{Text: "second LINE", Flow: "alpha"})); len(got) != 13 {
			t.Errorf("search in inputs of alpha: %d runs, want 13", len(got))
		}
	})
	t.Run("text with quotes and operators is literal", func(t *testing.T) {
		if got := ids(list(traces.RunQuery{Text: `"zebra" OR *`})); len(got) != 0 {
			t.Errorf("literal search found %v", got)
		}
	})
	t.Run("bad queries", func(t *testing.T) {
		for _, q := range []traces.RunQuery{{Text: "ab"}, {Status: "done"}, {Limit: 100000}, {After: "yesterday"}} {
			if _, err := b.List(q); traces.ErrorCode(err) != traces.CodeInvalid {
				t.Errorf("List(%+v): %v, want an invalid-input error", q, err)
			}
		}
	})
	t.Run("delete", func(t *testing.T) {
		if err := b.Delete("r-17"); err != nil {
			t.Fatal(err)
		}
		if got := ids(list(traces.RunQuery{Text: "zebra-17"})); len(got) != 0 {
			t.Errorf("the deleted run is still found: %v", got)
		}
		if _, err := store.Load("r-17"); traces.ErrorCode(err) != traces.CodeNotFound {
			t.Errorf("Load of a deleted run: %v", err)
		}
		if err := b.Delete("r-17"); traces.ErrorCode(err) != traces.CodeNotFound {
			t.Errorf("second delete: %v", err)
		}
	})
}

func TestRetentionKeepsTheNewestAdded(t *testing.T) {
	store, _ := mustOpen(t, 3)
	for i := range 5 {
		create(t, store, fmt.Sprintf("r-%d", i), "f", traces.StatusCompleted, "in", "out", 10-i) // added last, started first
	}
	p, err := store.List(traces.RunQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(ids(p)); got != "[r-4 r-3 r-2]" {
		t.Errorf("kept %s, want the last 3 added", got)
	}
	if _, err := store.Load("r-0"); traces.ErrorCode(err) != traces.CodeNotFound {
		t.Errorf("Load(r-0) after retention: %v", err)
	}
}

func TestCreateRefusesATakenID(t *testing.T) {
	store, _ := mustOpen(t, 0)
	create(t, store, "r-1", "f", traces.StatusCompleted, "in", "out", 0)
	err := store.Create(traces.Run{ID: "r-1", Status: traces.StatusRunning}, traces.Tally{}, nil, nil)
	if traces.ErrorCode(err) != traces.CodeConflict {
		t.Errorf("Create of a taken id: %v, want a conflict", err)
	}
}
