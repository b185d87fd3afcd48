package agents

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
)

// ScriptedModelType is what a scripted model's GetType returns, so callbacks' RunInfo.Type tells
// it apart from a real provider.
const ScriptedModelType = "Scripted"

// scriptedModelName is the model name reported in callbacks' model.Config.
const scriptedModelName = "scripted"

// NewScriptedModel returns a chat model that stands in for an LLM: each Generate or Stream call
// answers the next step of script (see Step), after waiting pace (nil: no wait). It is meant for
// one agent in one run; build a new one per run.
//
// What it does, like a real provider:
//   - fires the model callbacks itself (IsCallbacksEnabled is true): OnStart with the messages,
//     tools and config; OnEnd, or OnEndWithStreamOutput for Stream, with the message and token
//     usage; OnError when ctx ends during the pace wait. Handlers get their own copies of messages.
//   - reports usage in ResponseMeta.Usage; see countUsage for the (deterministic) arithmetic.
//   - numbers tool calls "<agent>_call_<n>" from 1, per model, so ids are stable across runs
//     and unique across the agents of a run (no ':' or ';', which eino uses in addresses).
//   - Stream sends the text word by word (each word with the spaces after it); the tool calls ride
//     on the first chunk, finish reason and usage on the last. The chunks concatenate
//     (schema.ConcatMessages) to what Generate would have answered.
//
// It never panics on a short script: once the steps are used up it answers the script's Exhausted
// text. WithTools returns a copy that shares the script position and the call numbering.
func NewScriptedModel(agent string, script Script, pace *Pace) model.ToolCallingChatModel {
	return scriptedModelAt(agent, script, pace, &scriptPosition{})
}

// scriptedModelAt is NewScriptedModel from pos on: a fork's live model starts past the steps (and
// the tool call ids) its agent used before the fork.
func scriptedModelAt(agent string, script Script, pace *Pace, pos *scriptPosition) model.ToolCallingChatModel {
	return &cannedModel{typ: ScriptedModelType, name: scriptedModelName, pace: pace,
		next: func(input []*schema.Message, tools []*schema.ToolInfo) (*schema.Message, error) {
			r := pos.nextReply(agent, script, input)
			first := pos.reserveCallIDs(len(r.ToolCalls))
			msg := &schema.Message{Role: schema.Assistant, Content: r.Text}
			for i, tc := range r.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, schema.ToolCall{
					ID:       agent + "_call_" + strconv.Itoa(first+i),
					Type:     "function",
					Function: schema.FunctionCall{Name: tc.Name, Arguments: tc.Arguments},
				})
			}
			finish := "stop"
			if len(msg.ToolCalls) > 0 {
				finish = "tool_calls"
			}
			msg.ResponseMeta = &schema.ResponseMeta{FinishReason: finish, Usage: countUsage(input, tools, msg)}
			return msg, nil
		}}
}

// cannedModel is a model.ToolCallingChatModel whose replies come from next instead of an LLM: the
// scripted model's and the replay model's common part. It behaves like a real provider: it
// fires its own callbacks, waits pace before each reply, and streams a reply in chunks.
type cannedModel struct {
	typ, name string // GetType, and the model name in callbacks' config
	pace      *Pace
	tools     []*schema.ToolInfo // from WithTools; a model.WithTools option overrides them per call
	// next gives the reply to one call, given the tools offered; an error fails the call. It is
	// shared by the copies WithTools makes and must be safe for concurrent use.
	next func(input []*schema.Message, tools []*schema.ToolInfo) (*schema.Message, error)
}

// scriptPosition is how far a scripted model (and its WithTools copies) got in its script.
type scriptPosition struct {
	mu    sync.Mutex
	next  int // index of the next step
	calls int // tool calls issued so far, for ids
}

var _ components.Checker = (*cannedModel)(nil)

// GetType implements components.Typer.
func (m *cannedModel) GetType() string { return m.typ }

// IsCallbacksEnabled implements components.Checker: the model fires its own callbacks, so eino
// does not wrap it in its callback injector (which could not see tools or usage).
func (m *cannedModel) IsCallbacksEnabled() bool { return true }

// WithTools implements model.ToolCallingChatModel.
func (m *cannedModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	c := *m
	c.tools = append([]*schema.ToolInfo(nil), tools...)
	return &c, nil
}

// Generate implements model.BaseChatModel.
func (m *cannedModel) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	ctx, in := m.start(ctx, input, opts)
	msg, err := m.answer(ctx, input, in.Tools)
	if err != nil {
		callbacks.OnError(ctx, err)
		return nil, err
	}
	callbacks.OnEnd(ctx, &model.CallbackOutput{
		Message:    copyReplyMessage(msg),
		Config:     in.Config,
		TokenUsage: callbackUsage(msg.ResponseMeta.Usage),
	})
	return msg, nil
}

// Stream implements model.BaseChatModel. The stream is ready when Stream returns (the pace wait
// happens before), so reading it never blocks.
func (m *cannedModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	ctx, in := m.start(ctx, input, opts)
	msg, err := m.answer(ctx, input, in.Tools)
	if err != nil {
		callbacks.OnError(ctx, err)
		return nil, err
	}
	chunks := streamChunks(msg)
	outs := make([]callbacks.CallbackOutput, len(chunks))
	for i, c := range chunks {
		outs[i] = &model.CallbackOutput{Message: c, Config: in.Config, TokenUsage: callbackUsage(chunkUsage(c))}
	}
	// As real providers do, the stream goes through OnEndWithStreamOutput, which hands each
	// handler a copy. The caller gets fresh clones of the chunks: ADK writes its message id into
	// the first chunk it receives, and handlers must not see that write (it would be a data race).
	_, sr := callbacks.OnEndWithStreamOutput(ctx, schema.StreamReaderFromArray(outs))
	return schema.StreamReaderWithConvert(sr, func(o callbacks.CallbackOutput) (*schema.Message, error) {
		co, ok := o.(*model.CallbackOutput)
		if !ok || co.Message == nil {
			return nil, schema.ErrNoValue
		}
		return copyReplyMessage(co.Message), nil
	}), nil
}

// start fires OnStart, after making sure ctx has a RunInfo (a model used outside a graph has
// none), and returns the context to end the callbacks with.
func (m *cannedModel) start(ctx context.Context, input []*schema.Message, opts []model.Option) (context.Context, *model.CallbackInput) {
	o := model.GetCommonOptions(&model.Options{Tools: m.tools}, opts...)
	in := &model.CallbackInput{
		Messages:   input,
		Tools:      o.Tools,
		ToolChoice: o.ToolChoice,
		Config:     &model.Config{Model: m.name},
	}
	if o.Model != nil {
		in.Config.Model = *o.Model
	}
	ctx = callbacks.EnsureRunInfo(ctx, m.GetType(), components.ComponentOfChatModel)
	return callbacks.OnStart(ctx, in), in
}

// answer waits the pace, then asks next for the reply. A reply without response meta gets one
// (finish reason, no usage), so callers may rely on it.
func (m *cannedModel) answer(ctx context.Context, input []*schema.Message, tools []*schema.ToolInfo) (*schema.Message, error) {
	if err := awaitPace(ctx, m.pace.Get()); err != nil {
		return nil, err
	}
	msg, err := m.next(input, tools)
	if err != nil {
		return nil, err
	}
	if msg.ResponseMeta == nil {
		msg.ResponseMeta = &schema.ResponseMeta{FinishReason: "stop"}
	}
	return msg, nil
}

// nextReply takes the next step of script (or the exhausted text) and resolves it for input.
func (p *scriptPosition) nextReply(agent string, script Script, input []*schema.Message) Reply {
	p.mu.Lock()
	i := p.next
	p.next++
	p.mu.Unlock()
	if i < len(script.Steps) {
		// Resolved outside the lock: Step.Func is caller code.
		return script.Steps[i].reply(input)
	}
	if script.Exhausted != "" {
		return Reply{Text: script.Exhausted}
	}
	return Reply{Text: fmt.Sprintf("(%s has nothing more to say: its script ended after %d replies.)", agent, len(script.Steps))}
}

// reserveCallIDs returns the number of the first of n new tool calls.
func (p *scriptPosition) reserveCallIDs(n int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	first := p.calls + 1
	p.calls += n
	return first
}

// awaitPace waits d, or until ctx ends (then it returns ctx.Err()). An ended ctx fails even with
// no pace, as a real provider's request would.
func awaitPace(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// countUsage is the scripted model's token arithmetic, deterministic so golden files stay stable.
// A "token" is 4 runes, rounded up (tokenCount). Prompt: for each input message 4 tokens of
// overhead plus its content and its tool calls' names and arguments; plus each offered tool's name
// and description. Completion: the reply's text plus its tool calls' names and arguments.
func countUsage(input []*schema.Message, tools []*schema.ToolInfo, reply *schema.Message) *schema.TokenUsage {
	prompt := 0
	for _, msg := range input {
		if msg != nil {
			prompt += 4 + messageTokenCount(msg)
		}
	}
	for _, t := range tools {
		if t != nil {
			prompt += tokenCount(t.Name) + tokenCount(t.Desc)
		}
	}
	completion := messageTokenCount(reply)
	return &schema.TokenUsage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
}

// messageTokenCount counts a message's content and tool calls.
func messageTokenCount(msg *schema.Message) int {
	n := tokenCount(msg.Content)
	for _, tc := range msg.ToolCalls {
		n += tokenCount(tc.Function.Name) + tokenCount(tc.Function.Arguments)
	}
	return n
}

// tokenCount is the length of s in tokens of 4 runes, rounded up.
func tokenCount(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }

// callbackUsage converts usage to the callbacks' type; nil stays nil.
func callbackUsage(u *schema.TokenUsage) *model.TokenUsage {
	if u == nil {
		return nil
	}
	return &model.TokenUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
}

// chunkUsage returns msg's usage, or nil.
func chunkUsage(msg *schema.Message) *schema.TokenUsage {
	if msg.ResponseMeta == nil {
		return nil
	}
	return msg.ResponseMeta.Usage
}

// streamChunks cuts msg into stream chunks: one per word of its text (at least one chunk), tool
// calls on the first, response meta on the last.
func streamChunks(msg *schema.Message) []*schema.Message {
	words := wordChunks(msg.Content)
	if len(words) == 0 {
		words = []string{""}
	}
	chunks := make([]*schema.Message, len(words))
	for i, w := range words {
		chunks[i] = &schema.Message{Role: schema.Assistant, Content: w}
	}
	chunks[0].ToolCalls = msg.ToolCalls
	chunks[len(chunks)-1].ResponseMeta = msg.ResponseMeta
	return chunks
}

// wordChunks cuts s before each word but the first, so every piece is a word and the spaces that
// follow it (leading spaces stay with the first word) and the pieces join to s.
func wordChunks(s string) []string {
	var out []string
	start, seenWord, inSpace := 0, false, false
	for i, r := range s {
		space := unicode.IsSpace(r)
		if !space && inSpace && seenWord {
			out = append(out, s[start:i])
			start = i
		}
		seenWord = seenWord || !space
		inSpace = space
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// copyReplyMessage copies msg deeply enough that writing the copy's fields, its tool calls or its
// response meta leaves msg untouched.
func copyReplyMessage(msg *schema.Message) *schema.Message {
	c := *msg
	c.ToolCalls = append([]schema.ToolCall(nil), msg.ToolCalls...)
	if msg.ResponseMeta != nil {
		rm := *msg.ResponseMeta
		if rm.Usage != nil {
			u := *rm.Usage
			rm.Usage = &u
		}
		c.ResponseMeta = &rm
	}
	return &c
}
