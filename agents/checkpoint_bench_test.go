package agents_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/internal/agentstest"
)

// memStore is an in-memory adk.CheckPointStore, as RunFlow gives every run.
type memStore struct {
	mu   sync.Mutex
	data map[string][]byte
}

func (s *memStore) Get(_ context.Context, id string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.data[id]
	return b, ok, nil
}

func (s *memStore) Set(_ context.Context, id string, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data[id] = b
	return nil
}

// BenchmarkCheckpointStore runs the long scripted run (no recorder, zero pace: eino's own cost
// only) in turn without and with a checkpoint store and id, as RunFlow now runs every flow so
// that an interrupted run can be resumed. eino saves a checkpoint only at an interrupt; with a
// store it relays the run's events through one more iterator. ns/op is one round of both.
func BenchmarkCheckpointStore(b *testing.B) {
	flow := agentstest.Long(longTicks)
	ctx := context.Background()
	run := func(store adk.CheckPointStore) time.Duration {
		root, err := flow.Build(ctx, flow.ScriptedModels(nil))
		if err != nil {
			b.Fatal(err)
		}
		var opts []adk.AgentRunOption
		if store != nil {
			opts = append(opts, adk.WithCheckPointID("r-bench"))
		}
		start := time.Now()
		events := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, CheckPointStore: store}).
			Run(ctx, []adk.Message{schema.UserMessage(flow.DefaultInput)}, opts...)
		for {
			ev, ok := events.Next()
			if !ok {
				break
			}
			if ev.Err != nil {
				b.Fatal(ev.Err)
			}
		}
		return time.Since(start)
	}
	var without, with time.Duration
	for b.Loop() {
		without += run(nil)
		with += run(&memStore{data: map[string][]byte{}})
	}
	b.ReportMetric(float64(with)/float64(without), "with/without")
}
