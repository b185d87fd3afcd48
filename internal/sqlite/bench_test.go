package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/sqlite"
	"github.com/baton-dev/baton/internal/storetest"
	"github.com/baton-dev/baton/traces"
)

// benchRuns is how many runs the list benchmarks query.
const benchRuns = 10_000

// fill stores n ended runs of 4 flows and 3 statuses, each with 40 events: 8 model calls with
// their usage, 4 transfers, and 12 messages whose words vary by run, so that a search for a rare
// word matches one run and one for a common word matches them all.
func fill(b *testing.B, s *sqlite.Store, n int) {
	flows := []string{"supervisor", "transfer", "agenttool", "pipeline"}
	statuses := []traces.Status{traces.StatusCompleted, traces.StatusCompleted, traces.StatusFailed, traces.StatusCanceled}
	t0 := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	for i := range n {
		start := t0.Add(time.Duration(i) * time.Minute)
		events := []traces.Event{{Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}}}
		for j := range 12 {
			events = append(events,
				traces.Event{Kind: traces.KindModelStarted, Agent: "boss", Model: &traces.ModelCall{ID: fmt.Sprint(j)}},
				traces.Event{Kind: traces.KindMessage, Agent: "boss", Message: &traces.Message{Role: "assistant",
					Content: fmt.Sprintf("Step %d of order %d: the common answer mentions invoice-%d and warehouse %d.", j, i, i, i%97)}})
			if j < 8 {
				events = append(events, traces.Event{Kind: traces.KindModelFinished, Agent: "boss",
					Model: &traces.ModelCall{ID: fmt.Sprint(j), Usage: &traces.Usage{PromptTokens: 300, CompletionTokens: 20, TotalTokens: 320}}})
			}
			if j < 4 {
				events = append(events, traces.Event{Kind: traces.KindTransfer, Agent: "boss",
					Transfer: &traces.Transfer{From: "boss", To: "helper", Mode: traces.TransferLLM}})
			}
		}
		status := statuses[i%len(statuses)]
		events = append(events, traces.Event{Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: status}})
		var tally live.Tally
		for k := range events {
			events[k].Seq, events[k].Time = int64(k+1), start.Add(time.Duration(k)*time.Second)
			tally.Add(events[k])
		}
		run := tally.Apply(traces.Run{ID: fmt.Sprintf("r-%05d", i), Flow: flows[i%len(flows)], StartedAt: start,
			Input: fmt.Sprintf("Please check order %d for customer %d\nand say why it was charged twice.", i, i%501)})
		if err := s.Create(run, tally, []traces.Agent{{Name: "boss"}, {Name: "helper", Parent: "boss"}}, events); err != nil {
			b.Fatal(err)
		}
	}
}

// filled is the database of benchRuns runs, filled once per process and shared by every round of
// the benchmark; TestMain removes its directory.
var filled struct {
	once  sync.Once
	dir   string
	store *sqlite.Store
	err   error
}

// filledStore returns the shared database of benchRuns runs.
func filledStore(b *testing.B) *sqlite.Store {
	filled.once.Do(func() {
		if filled.dir, filled.err = os.MkdirTemp("", "baton-bench-"); filled.err != nil {
			return
		}
		if filled.store, filled.err = sqlite.Open(filepath.Join(filled.dir, "baton.db"), -1); filled.err != nil {
			return
		}
		began := time.Now()
		fill(b, filled.store, benchRuns)
		b.Logf("filled %d runs in %s", benchRuns, time.Since(began).Round(time.Millisecond))
	})
	if filled.err != nil {
		b.Fatal(filled.err)
	}
	return filled.store
}

// closeFilled closes and removes the shared database, if a benchmark made it.
func closeFilled() {
	if filled.store != nil {
		filled.store.Close()
	}
	if filled.dir != "" {
		os.RemoveAll(filled.dir)
	}
}

// BenchmarkList10k queries a database of 10,000 runs as the index page and GET /api/runs do.
//
//	go test ./internal/sqlite -run '^$' -bench List10k -count 5
func BenchmarkList10k(b *testing.B) {
	s := filledStore(b)
	deep, err := s.List(live.RunQuery{Limit: 500})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		q    live.RunQuery
		want int // runs on the page
	}{
		{"first page", live.RunQuery{}, 50},
		{"page after 500", live.RunQuery{After: deep.Next}, 50},
		{"flow and status", live.RunQuery{Flow: "transfer", Status: traces.StatusCompleted}, 50},
		{"search rare", live.RunQuery{Text: "invoice-4242"}, 1},
		{"search common", live.RunQuery{Text: "common answer"}, 50},
		{"search input", live.RunQuery{Text: "customer 77\n"[:11]}, 20},
		{"search and flow", live.RunQuery{Text: "warehouse 13", Flow: "pipeline"}, 26},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				p, err := s.List(bc.q)
				if err != nil {
					b.Fatal(err)
				}
				if len(p.Runs) != bc.want {
					b.Fatalf("%d runs, want %d", len(p.Runs), bc.want)
				}
			}
		})
	}
}

// BenchmarkRecordStored runs a 300-tool-call eino flow with a model that answers at once, recorded
// in memory and recorded into a store; "stored+written" also waits until the store has every
// event. The run itself should not notice the store: its writes happen off the run's goroutine.
//
//	go test ./internal/sqlite -run '^$' -bench RecordStored -count 5
func BenchmarkRecordStored(b *testing.B) {
	flow := agentstest.Long(300)
	store, err := sqlite.Open(filepath.Join(b.TempDir(), "baton.db"), -1)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	run := func(b *testing.B, broker *live.Broker, wait bool) {
		for b.Loop() {
			rec := traces.NewRecording(traces.Run{ID: traces.NewRunID(), Flow: flow.Name, Input: flow.DefaultInput}, flow.Agents)
			if err := broker.Add(rec); err != nil {
				b.Fatal(err)
			}
			agents.RunFlow(context.Background(), flow, flow.DefaultInput, agents.Options{Pace: agents.NewPace(0)}, rec)
			if wait {
				if err := broker.Close(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StopTimer()
		broker.Close(context.Background())
	}
	b.Run("memory", func(b *testing.B) { run(b, live.NewBroker(0), false) })
	b.Run("stored", func(b *testing.B) { run(b, live.NewStoredBroker(0, store, nil), false) })
	b.Run("stored+written", func(b *testing.B) { run(b, live.NewStoredBroker(0, store, nil), true) })
}

// BenchmarkWrite: events a second one server writes into SQLite (WAL, synchronous=NORMAL),
// beside PostgreSQL's BenchmarkWrite.
//
//	go test ./internal/sqlite -run '^$' -bench Write -count 5
func BenchmarkWrite(b *testing.B) {
	storetest.BenchWrite(b, func(b *testing.B) live.Store {
		s, err := sqlite.Open(filepath.Join(b.TempDir(), "baton.db"), -1)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	})
}
