package record

import (
	"context"
	"errors"
	"io"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
)

// HeldModel wraps m so that a debugger can hold each of its calls before it is made
// (HoldModel) and each reply that transfers before the transfer takes effect (HoldReply), and
// apply the edits the run was continued with: only the model's caller can change what it is
// given and what it answers. It fires no callbacks of its own: m does (or eino does around it),
// with what the debugger let through, so the trace records the call as made. Baton's own runs
// wrap their models with it, and apps through attach.Middleware.
func HeldModel(m model.BaseChatModel) model.BaseChatModel { return heldModel{m} }

type heldModel struct{ m model.BaseChatModel }

// Generate implements model.BaseChatModel.
func (h heldModel) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	return GenerateHeld(ctx, h.m, input, opts...)
}

// Stream implements model.BaseChatModel.
func (h heldModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return StreamHeld(ctx, h.m, input, opts...)
}

// heldModelKey marks a model call's context as held already: a second wrapper around the same
// model (attach.Middleware on an agent of a flow Baton runs, which wraps its models too) lets the
// call through instead of holding it twice.
type heldModelKey struct{}

// holdingCall reports whether ctx's call is held by a wrapper further out, and else marks it so.
func holdingCall(ctx context.Context) (context.Context, bool) {
	if ctx.Value(heldModelKey{}) != nil {
		return ctx, true
	}
	return context.WithValue(ctx, heldModelKey{}, true), false
}

// GenerateHeld is m.Generate, held before the call and at a reply that transfers.
func GenerateHeld(ctx context.Context, m model.BaseChatModel, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	ctx, outer := holdingCall(ctx)
	if outer {
		return m.Generate(ctx, input, opts...)
	}
	input, err := HoldModel(ctx, input)
	if err != nil {
		return nil, err
	}
	reply, err := m.Generate(ctx, input, opts...)
	if err != nil {
		return nil, err
	}
	return HoldReply(ctx, reply)
}

// StreamHeld is m.Stream, held before the call and at a reply that transfers. The reply is read
// whole before the caller sees it, so that a reply that transfers can be held and edited: the
// caller gets it as one chunk. A run no breakpoint may hold gets m's stream as it is.
func StreamHeld(ctx context.Context, m model.BaseChatModel, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	ctx, outer := holdingCall(ctx)
	if outer {
		return m.Stream(ctx, input, opts...)
	}
	input, err := HoldModel(ctx, input)
	if err != nil {
		return nil, err
	}
	sr, err := m.Stream(ctx, input, opts...)
	if err != nil || !Holding(ctx) {
		return sr, err
	}
	var chunks []*schema.Message
	for {
		chunk, err := sr.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			sr.Close()
			return nil, err
		}
		chunks = append(chunks, chunk)
	}
	sr.Close()
	if len(chunks) == 0 {
		return schema.StreamReaderFromArray(chunks), nil
	}
	reply, err := schema.ConcatMessages(chunks)
	if err != nil {
		return nil, err
	}
	if reply, err = HoldReply(ctx, reply); err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{reply}), nil
}
