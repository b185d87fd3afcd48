package agentstest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
)

// gatedRun starts flow's default input on a real Runner through gate and returns the model
// calls that have started and a channel closed once
// the run's events are all read, with the last error event's error.
func gatedRun(t *testing.T, ctx context.Context, gate *agentstest.Gate, flow agents.Flow) (*modelCalls, <-chan error) {
	t.Helper()
	flow = gate.Flow(flow)
	root, err := flow.Build(ctx, flow.ScriptedModels(nil))
	if err != nil {
		t.Fatal(err)
	}
	started := &modelCalls{seen: map[*callbacks.RunInfo]bool{}}
	h := callbacks.NewHandlerBuilder().OnStartFn(func(ctx context.Context, info *callbacks.RunInfo, _ callbacks.CallbackInput) context.Context {
		if info.Component == components.ComponentOfChatModel {
			started.add(info)
		}
		return ctx
	}).Build()
	iter := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root}).Query(ctx, flow.DefaultInput, adk.WithCallbacks(h))
	done := make(chan error, 1)
	go func() {
		var last error
		for ev, ok := iter.Next(); ok; ev, ok = iter.Next() {
			if ev.Err != nil {
				last = ev.Err
			}
		}
		done <- last
	}()
	return started, done
}

// modelCalls counts model calls by their start callbacks. Some agents' callbacks fire twice
// (eino's containers pass them on), with the call's one RunInfo: it counts each RunInfo once.
type modelCalls struct {
	mu   sync.Mutex
	seen map[*callbacks.RunInfo]bool
}

func (c *modelCalls) add(info *callbacks.RunInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[info] = true
}

// Load returns the number of model calls that started.
func (c *modelCalls) Load() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

func TestGateHoldsTheRunAtAModelCall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// pipeline's calls go one at a time (collector 2, writer 1, editor 1, fact_checker 2, editor
	// 2), each callback once (unlike supervisor's, which its container doubles).
	pipeline, err := agents.Lookup("pipeline")
	if err != nil {
		t.Fatal(err)
	}
	gate := agentstest.NewGate()
	started, done := gatedRun(t, ctx, gate, pipeline)

	// editor's first reply is held before its model starts, with the three before it started.
	if err := gate.HoldAt(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if n := started.Load(); n != 3 {
		t.Fatalf("held at the 4th model call with %d calls started, want 3", n)
	}
	if err := gate.HoldAt(ctx, 2); err == nil {
		t.Errorf("HoldAt(2) after call 2 went through: no error")
	}
	if err := gate.HoldAt(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if n := started.Load(); n != 4 {
		t.Fatalf("held at the 5th model call with %d calls started, want 4", n)
	}
	gate.Open()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the run failed: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the run did not end once the gate opened")
	}
	if n := started.Load(); n != 8 {
		t.Errorf("%d model calls in the whole run, want the pipeline flow's 8", n)
	}
	if err := gate.HoldAt(ctx, 9); err == nil {
		t.Errorf("HoldAt on an open gate: no error")
	}
}

func TestGateGivesUpWhenTheRunIsCanceled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	gate := agentstest.NewGate()
	started, done := gatedRun(t, runCtx, gate, agentstest.Hostile())
	if err := gate.HoldAt(ctx, 1); err != nil {
		t.Fatal(err)
	}
	stop()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("a run canceled at the gate ended without an error event")
		}
	case <-ctx.Done():
		t.Fatal("a run canceled at the gate did not end")
	}
	if n := started.Load(); n != 0 {
		t.Errorf("%d model calls started, want none: the only one was held", n)
	}
	short, cancelShort := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancelShort()
	if err := gate.HoldAt(short, 2); err == nil {
		t.Errorf("HoldAt(2) with no run left returned without an error")
	}
}
