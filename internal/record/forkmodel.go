package record

import (
	"context"
	"errors"

	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
)

// Forking reports whether the run ctx is part of carries out the process's fork (see AppFork).
func Forking(ctx context.Context) bool { return forkOf(ctx) != nil }

func forkOf(ctx context.Context) *forking {
	v := visitIn(ctx)
	if v == nil {
		return nil
	}
	s, ok := v.rec.out.sink.(*remoteRun)
	if !ok {
		return nil
	}
	return s.fork
}

// ForkedModel wraps m, the model of an agent of a run that carries out a fork (Forking), so
// that its calls before the fork point are answered from the recording (m is not asked), the
// fork's call as the fork edits it, and the rest by m. It fires the model callbacks of the calls it
// answers itself, as eino does around a model: the trace records them as calls made. Outside
// such a run, it returns m.
func ForkedModel(ctx context.Context, m model.BaseChatModel) model.BaseChatModel {
	f := forkOf(ctx)
	if f == nil {
		return m
	}
	return forkedModel{m: m, f: f}
}

type forkedModel struct {
	m model.BaseChatModel
	f *forking
}

// started fires the model's start callback of a call answered here, with the tools the agent
// offers (eino passes them as an option).
func started(ctx context.Context, in []*schema.Message, opts []model.Option) context.Context {
	tools := model.GetCommonOptions(&model.Options{}, opts...).Tools
	return callbacks.OnStart(ctx, &model.CallbackInput{Messages: in, Tools: tools})
}

// forkAnswer is how a call of a fork goes: answered here (with reply, or failing with err), or
// made by the model with input.
type forkAnswer struct {
	answered bool
	reply    *schema.Message
	err      error
	input    []*schema.Message
}

// answer says how the call with input in goes.
func (fm forkedModel) answer(ctx context.Context, in []*schema.Message) forkAnswer {
	if _, err := fm.f.recording(ctx); err != nil {
		return forkAnswer{answered: true, err: err}
	}
	turn, c, diverged := fm.f.turn(visitIn(ctx).agent, in)
	if diverged != "" {
		fm.f.noteDivergence(ctx, diverged)
	}
	switch {
	case turn == turnRecorded && c.Err != "":
		return forkAnswer{answered: true, err: errors.New(c.Err)} // the recorded failure, as the provider worded it
	case turn == turnRecorded:
		msg := &schema.Message{Role: schema.Assistant}
		if c.Output != nil {
			msg = schemaMessage(*c.Output, nil)
		}
		msg.ResponseMeta = &schema.ResponseMeta{FinishReason: "stop"}
		if len(msg.ToolCalls) > 0 {
			msg.ResponseMeta.FinishReason = "tool_calls"
		}
		return forkAnswer{answered: true, reply: msg}
	case turn == turnEdited && fm.f.spec.Input != nil:
		input := make([]*schema.Message, len(fm.f.spec.Input))
		for i := range fm.f.spec.Input {
			input[i] = schemaMessage(fm.f.spec.Input[i], nil)
		}
		return forkAnswer{input: input}
	case turn == turnEdited:
		return forkAnswer{answered: true, reply: fm.f.spec.reply()}
	}
	return forkAnswer{input: in}
}

// Generate implements model.BaseChatModel. A call answered here fires the model's callbacks, as
// eino does around a model that fires none.
func (fm forkedModel) Generate(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	a := fm.answer(ctx, in)
	if !a.answered {
		return fm.m.Generate(ctx, a.input, opts...)
	}
	ctx = started(ctx, in, opts)
	if a.err != nil {
		callbacks.OnError(ctx, a.err)
		return nil, a.err
	}
	callbacks.OnEnd(ctx, &model.CallbackOutput{Message: a.reply})
	return a.reply, nil
}

// Stream implements model.BaseChatModel: a reply answered here comes as one chunk.
func (fm forkedModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	a := fm.answer(ctx, in)
	if !a.answered {
		return fm.m.Stream(ctx, a.input, opts...)
	}
	ctx = started(ctx, in, opts)
	if a.err != nil {
		callbacks.OnError(ctx, a.err)
		return nil, a.err
	}
	_, out := callbacks.OnEndWithStreamOutput(ctx, schema.StreamReaderFromArray([]*schema.Message{a.reply}))
	return out, nil
}
