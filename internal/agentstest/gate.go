package agentstest

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
)

// Gate holds the model calls of the flows it wraps until a test lets them through, so that a
// test acts while a run is known to stand at a given point, however slow or fast the machine
// is, instead of hoping a paced run outlasts it:
//
//	gate := agentstest.NewGate()
//	flow := gate.Flow(supervisor)
//	... start a run of flow ...
//	gate.HoldAt(ctx, 4) // the run waits before its 4th model reply
//	... look at the page ...
//	gate.Open()
//
// Calls are numbered from 1 in the order they reach the gate, over every run of every flow it
// wraps: use one gate per run, or Open it before the next run. A held call gives up when its
// run's context ends (the run is canceled), so a test that fails while holding never hangs.
// Safe for concurrent use.
type Gate struct {
	mu      sync.Mutex
	allowed int           // calls that may pass, the first ones to arrive; math.MaxInt once open
	arrived int           // calls that reached the gate
	changed chan struct{} // closed, and replaced, when allowed or arrived changes
}

// NewGate returns a gate that holds every call, the first included, until HoldAt or Open.
func NewGate() *Gate { return &Gate{changed: make(chan struct{})} }

// Flow returns flow with every agent's chat model waiting at g before each reply (Generate and
// Stream). The model's callbacks fire only once the call passes.
func (g *Gate) Flow(flow agents.Flow) agents.Flow {
	build := flow.Build
	flow.Build = func(ctx context.Context, models agents.ModelFor) (adk.Agent, error) {
		return build(ctx, func(agent string) (model.ToolCallingChatModel, error) {
			m, err := models(agent)
			if err != nil {
				return nil, err
			}
			return &heldModel{ToolCallingChatModel: m, gate: g}, nil
		})
	}
	return flow
}

// HoldAt lets calls through up to the n-th (n >= 1) and returns once the n-th waits at the gate,
// held until a later HoldAt or Open. It fails when ctx ends first, when the gate is open, and when
// the n-th call was already let through.
func (g *Gate) HoldAt(ctx context.Context, n int) error {
	g.mu.Lock()
	switch {
	case g.allowed == math.MaxInt:
		g.mu.Unlock()
		return fmt.Errorf("hold at model call %d: the gate is open", n)
	case n < 1 || n <= g.allowed:
		allowed := g.allowed
		g.mu.Unlock()
		return fmt.Errorf("hold at model call %d: calls up to %d were already let through", n, allowed)
	}
	g.allowed = n - 1
	g.broadcast()
	for g.arrived < n {
		changed := g.changed
		g.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			g.mu.Lock()
			arrived := g.arrived
			g.mu.Unlock()
			return fmt.Errorf("hold at model call %d: %d calls arrived before %w", n, arrived, context.Cause(ctx))
		}
		g.mu.Lock()
	}
	g.mu.Unlock()
	return nil
}

// Open lets every call through, those held and those to come.
func (g *Gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.allowed = math.MaxInt
	g.broadcast()
}

// pass numbers a call and waits until it may go on, or until ctx ends.
func (g *Gate) pass(ctx context.Context) error {
	g.mu.Lock()
	g.arrived++
	n := g.arrived
	g.broadcast()
	for n > g.allowed {
		changed := g.changed
		g.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
		g.mu.Lock()
	}
	g.mu.Unlock()
	return nil
}

// broadcast wakes every waiter; g.mu must be held.
func (g *Gate) broadcast() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// heldModel is a chat model that waits at its gate before each reply.
type heldModel struct {
	model.ToolCallingChatModel
	gate *Gate
}

var _ components.Checker = (*heldModel)(nil)

// IsCallbacksEnabled reports what the wrapped model does, so eino treats the pair as it treats
// the model alone.
func (m *heldModel) IsCallbacksEnabled() bool {
	return components.IsCallbacksEnabled(m.ToolCallingChatModel)
}

// GetType is the wrapped model's type.
func (m *heldModel) GetType() string {
	t, _ := components.GetType(m.ToolCallingChatModel)
	return t
}

// WithTools implements model.ToolCallingChatModel.
func (m *heldModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	inner, err := m.ToolCallingChatModel.WithTools(tools)
	if err != nil {
		return nil, err
	}
	return &heldModel{ToolCallingChatModel: inner, gate: m.gate}, nil
}

// Generate implements model.BaseChatModel.
func (m *heldModel) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	if err := m.gate.pass(ctx); err != nil {
		return nil, err
	}
	return m.ToolCallingChatModel.Generate(ctx, input, opts...)
}

// Stream implements model.BaseChatModel.
func (m *heldModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	if err := m.gate.pass(ctx); err != nil {
		return nil, err
	}
	return m.ToolCallingChatModel.Stream(ctx, input, opts...)
}
