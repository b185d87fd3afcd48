package agents

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// ForkModelType is what a fork's models answer to GetType.
const ForkModelType = "Fork"

// Fork changes one model call of a recorded run: "what if it had answered this instead".
type Fork struct {
	At    int64 // the seq of the call's model.started
	Reply Reply // what the call answers instead
}

// fork is a Model's fork: the recorded run, the change, and the model that goes on after it.
type fork struct {
	rec   *recordedCalls
	at    *recordedCall
	reply Reply
	live  *Model
}

// ForkOf returns a model for a new run of tr's flow on tr's input that forks tr as f says: every
// agent gets its recorded replies up to the fork point (no model is asked, no token spent), the
// changed call answers f.Reply, and from then on live answers (a scripted model starts past the
// steps its agent had used; a nil live is the scripted one). A seq that is no model call of tr is
// a traces.CodeInvalid error.
func ForkOf(tr traces.Trace, f Fork, live *Model) (*Model, error) {
	m, err := ReplayOf(tr)
	if err != nil {
		return nil, err
	}
	for _, c := range m.replay.calls {
		if c.Seq == f.At {
			if live == nil {
				live = Scripted()
			}
			return &Model{spec: fmt.Sprintf("fork of %s at #%d", tr.Run.ID, f.At), name: fmt.Sprintf("fork of %s at #%d, then %s", tr.Run.ID, f.At, live.name),
				replay: m.replay, fork: &fork{rec: m.replay, at: c, reply: f.Reply, live: live}}, nil
		}
	}
	return nil, traces.Errorf(traces.CodeInvalid, "event #%d of run %s is no model call (model.started): a fork changes what a model answered", f.At, tr.Run.ID)
}

// modelFor returns the fork's models for one run of flow.
func (f *fork) modelFor(flow Flow, pace *Pace) ModelFor {
	live, _ := f.live.forRun(flow, pace)
	return func(agent string) (model.ToolCallingChatModel, error) {
		var before []*recordedCall // the agent's calls up to the fork's, replayed
		for _, c := range f.rec.byAgent[agent] {
			if c.N < f.at.N {
				before = append(before, c)
			}
		}
		replies := make([]*schema.Message, 0, len(before)+1)
		ids := 0
		for _, c := range before {
			replies = append(replies, replyMessage(c))
			ids += len(replies[len(replies)-1].ToolCalls)
		}
		if agent == f.at.Agent {
			msg := editedReply(f.reply, agent, ids+1)
			replies = append(replies, msg)
			ids += len(msg.ToolCalls)
		}
		var after model.ToolCallingChatModel
		if f.live.scripted() {
			after = scriptedModelAt(agent, flow.Scripts[agent], pace, &scriptPosition{next: len(replies), calls: ids})
		} else {
			var err error
			if after, err = live(agent); err != nil {
				return nil, err
			}
		}
		var asked atomic.Int64
		recorded := &cannedModel{typ: ForkModelType, name: "replay", pace: pace,
			next: func([]*schema.Message, []*schema.ToolInfo) (*schema.Message, error) {
				return replies[asked.Load()-1], nil
			}}
		return &forkModel{before: recorded, after: after, n: int64(len(replies)), asked: &asked}, nil
	}
}

// editedReply is r as agent's model's message, its tool calls numbered from first as the scripted
// model numbers them.
func editedReply(r Reply, agent string, first int) *schema.Message {
	msg := &schema.Message{Role: schema.Assistant, Content: r.Text, ResponseMeta: &schema.ResponseMeta{FinishReason: "stop"}}
	for i, tc := range r.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, schema.ToolCall{ID: fmt.Sprintf("%s_call_%d", agent, first+i), Type: "function",
			Function: schema.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
		msg.ResponseMeta.FinishReason = "tool_calls"
	}
	return msg
}

// forkModel answers an agent's first n calls from the recording (the fork's reply last), and the
// rest with the live model. Its WithTools copies share the count.
type forkModel struct {
	before, after model.ToolCallingChatModel
	n             int64
	asked         *atomic.Int64
}

func (m *forkModel) pick() model.ToolCallingChatModel {
	if m.asked.Add(1) <= m.n {
		return m.before
	}
	return m.after
}

// GetType implements components.Typer.
func (m *forkModel) GetType() string { return ForkModelType }

// IsCallbacksEnabled implements components.Checker: both models fire their own callbacks.
func (m *forkModel) IsCallbacksEnabled() bool { return true }

// Generate implements model.BaseChatModel.
func (m *forkModel) Generate(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	return m.pick().Generate(ctx, in, opts...)
}

// Stream implements model.BaseChatModel.
func (m *forkModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return m.pick().Stream(ctx, in, opts...)
}

// WithTools implements model.ToolCallingChatModel.
func (m *forkModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	before, err := m.before.WithTools(tools)
	if err != nil {
		return nil, err
	}
	after, err := m.after.WithTools(tools)
	if err != nil {
		return nil, err
	}
	return &forkModel{before: before, after: after, n: m.n, asked: m.asked}, nil
}
