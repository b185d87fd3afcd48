package agents

import (
	"context"
	"strings"

	"github.com/cloudwego/eino/components"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
)

// Typing is told of a streamed reply while it arrives: agent's text so far after each chunk, and
// once more with done set when the stream has ended. It is called from a goroutine of its own per
// reply and must not block. The trace records each reply only once complete; Typing is how a page
// shows the tokens as they come.
type Typing func(agent, text string, done bool)

// withTyping wraps the models of models so that each streamed reply is also read, from a copy of
// its stream, by typing.
func withTyping(models ModelFor, typing Typing) ModelFor {
	return func(agent string) (model.ToolCallingChatModel, error) {
		m, err := models(agent)
		if err != nil {
			return nil, err
		}
		return &typingModel{ToolCallingChatModel: m, agent: agent, typing: typing}, nil
	}
}

// typingModel is a model whose streams typing reads too. It fires no callbacks of its own: the
// model it wraps does, or eino does for it, as before.
type typingModel struct {
	model.ToolCallingChatModel
	agent  string
	typing Typing
}

var _ components.Checker = (*typingModel)(nil)

// IsCallbacksEnabled reports what the wrapped model does, so eino treats the pair as it treats
// the model alone.
func (m *typingModel) IsCallbacksEnabled() bool {
	return components.IsCallbacksEnabled(m.ToolCallingChatModel)
}

// GetType is the wrapped model's type.
func (m *typingModel) GetType() string {
	t, _ := components.GetType(m.ToolCallingChatModel)
	return t
}

// WithTools implements model.ToolCallingChatModel.
func (m *typingModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	inner, err := m.ToolCallingChatModel.WithTools(tools)
	if err != nil {
		return nil, err
	}
	return &typingModel{ToolCallingChatModel: inner, agent: m.agent, typing: m.typing}, nil
}

// Stream implements model.BaseChatModel: the caller gets one copy of the stream, typing reads the
// other. Only each chunk's Content is read: eino writes other fields of the first chunk while it
// reads its copy.
func (m *typingModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	sr, err := m.ToolCallingChatModel.Stream(ctx, input, opts...)
	if err != nil {
		return nil, err
	}
	copies := sr.Copy(2)
	go func(r *schema.StreamReader[*schema.Message]) {
		defer r.Close()
		var text strings.Builder
		for {
			chunk, err := r.Recv()
			if err != nil {
				m.typing(m.agent, text.String(), true)
				return
			}
			if chunk != nil && chunk.Content != "" {
				text.WriteString(chunk.Content)
				m.typing(m.agent, text.String(), false)
			}
		}
	}(copies[1])
	return copies[0], nil
}
