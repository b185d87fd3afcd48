package agents

import (
	"context"

	"github.com/cloudwego/eino/components"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/internal/record"
)

// Debugger holds a flow run at breakpoints (Options.Debugger); see record.Debugger.
type Debugger = record.Debugger

// Breakpoint is where a Debugger holds a run; see record.Breakpoint.
type Breakpoint = record.Breakpoint

// Stop is where a run is held; see record.Stop.
type Stop = record.Stop

// Resume is how a held run goes on; see record.Resume.
type Resume = record.Resume

// NewDebugger returns a debugger holding a run at points, telling notify (when set) of each
// stop; see record.NewDebugger.
func NewDebugger(points []Breakpoint, notify func(Stop)) *Debugger {
	return record.NewDebugger(points, notify)
}

// ErrStopped, as the cause of the end of a run's context, ends a run held at a breakpoint
// interrupted, not canceled; see record.ErrStopped.
var ErrStopped = record.ErrStopped

// AppFork is a fork an app's next run carries out; see record.AppFork.
type AppFork = record.AppFork

// ForkEnv names the environment variable that carries an AppFork to the app.
const ForkEnv = record.ForkEnv

// ParseBreakpoint reads KIND[:TARGET][@AGENT]; see record.ParseBreakpoint.
func ParseBreakpoint(s string) (Breakpoint, error) { return record.ParseBreakpoint(s) }

// withDebugger wraps the models of models so that a debugger can hold each call before it is
// made and each reply that transfers before the transfer takes effect, and apply the edits it
// was continued with: only the model can change what it is given and what it answers.
func withDebugger(models ModelFor) ModelFor {
	return func(agent string) (model.ToolCallingChatModel, error) {
		m, err := models(agent)
		if err != nil {
			return nil, err
		}
		return &debugModel{ToolCallingChatModel: m}, nil
	}
}

// debugModel is a model a debugger can hold. It fires no callbacks of its own: the model it
// wraps does (or eino does for it), with what the debugger let through, so the trace records
// the call as made.
type debugModel struct {
	model.ToolCallingChatModel
}

var _ components.Checker = (*debugModel)(nil)

// IsCallbacksEnabled reports what the wrapped model does.
func (m *debugModel) IsCallbacksEnabled() bool {
	return components.IsCallbacksEnabled(m.ToolCallingChatModel)
}

// GetType is the wrapped model's type.
func (m *debugModel) GetType() string {
	t, _ := components.GetType(m.ToolCallingChatModel)
	return t
}

// WithTools implements model.ToolCallingChatModel.
func (m *debugModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	inner, err := m.ToolCallingChatModel.WithTools(tools)
	if err != nil {
		return nil, err
	}
	return &debugModel{ToolCallingChatModel: inner}, nil
}

// Generate implements model.BaseChatModel.
func (m *debugModel) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	return record.GenerateHeld(ctx, m.ToolCallingChatModel, input, opts...)
}

// Stream implements model.BaseChatModel; see record.StreamHeld.
func (m *debugModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return record.StreamHeld(ctx, m.ToolCallingChatModel, input, opts...)
}
