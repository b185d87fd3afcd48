package agents_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
)

// threeStepScript answers text, then two tool calls, then text quoting the last tool result.
var threeStepScript = agents.NewScript(
	agents.Say("Let me check that for you."),
	agents.Do(agents.Call("search", `{"query":"a"}`), agents.Transfer("math_agent")),
	agents.QuoteToolResult("The tool said: %s"),
)

func TestScriptedModelRepliesInOrder(t *testing.T) {
	ctx := context.Background()
	m := agents.NewScriptedModel("bob", threeStepScript, nil)
	in := []*schema.Message{schema.SystemMessage("be brief"), schema.UserMessage("hello there")}

	first, err := m.Generate(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if first.Role != schema.Assistant || first.Content != "Let me check that for you." || len(first.ToolCalls) != 0 {
		t.Fatalf("first reply = %+v", first)
	}
	if first.ResponseMeta == nil || first.ResponseMeta.FinishReason != "stop" {
		t.Fatalf("first reply meta = %+v", first.ResponseMeta)
	}

	second, err := m.Generate(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.ToolCall{
		{ID: "bob_call_1", Type: "function", Function: schema.FunctionCall{Name: "search", Arguments: `{"query":"a"}`}},
		{ID: "bob_call_2", Type: "function", Function: schema.FunctionCall{Name: "transfer_to_agent", Arguments: `{"agent_name":"math_agent"}`}},
	}
	if !toolCallsEqual(second.ToolCalls, want) || second.ResponseMeta.FinishReason != "tool_calls" {
		t.Fatalf("second reply calls = %+v, meta %+v", second.ToolCalls, second.ResponseMeta)
	}

	withResult := append(in, second, schema.ToolMessage("42", "bob_call_1"))
	third, err := m.Generate(ctx, withResult)
	if err != nil {
		t.Fatal(err)
	}
	if third.Content != "The tool said: 42" {
		t.Fatalf("third reply = %q", third.Content)
	}
}

func TestScriptedModelUsage(t *testing.T) {
	m := agents.NewScriptedModel("bob", agents.NewScript(agents.Say("abcdefgh")), nil)
	// 4 overhead + ceil(5/4)=2 for "hello"; tool "t1" + "desc" = 1 + 1.
	tools := []*schema.ToolInfo{{Name: "t1", Desc: "desc"}}
	msg, err := m.Generate(context.Background(), []*schema.Message{schema.UserMessage("hello")}, model.WithTools(tools))
	if err != nil {
		t.Fatal(err)
	}
	got := msg.ResponseMeta.Usage
	if got == nil || got.PromptTokens != 8 || got.CompletionTokens != 2 || got.TotalTokens != 10 {
		t.Fatalf("usage = %+v, want prompt 8, completion 2, total 10", got)
	}
}

func TestScriptedModelRoutesOnUserInput(t *testing.T) {
	step := agents.Route(agents.Reply{Text: "other"},
		agents.When(agents.Reply{Text: "weather"}, "RAIN", "forecast"))
	script := agents.NewScript(step, step, step)
	m := agents.NewScriptedModel("router", script, nil)
	for _, c := range []struct{ system, user, want string }{
		{"", "Will it rain in Paris?", "weather"},
		{"", "Tell me a joke", "other"},
		{"Mention the forecast", "Tell me a joke", "other"}, // the system prompt is not searched
	} {
		in := []*schema.Message{schema.SystemMessage(c.system), schema.UserMessage(c.user)}
		msg, err := m.Generate(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Content != c.want {
			t.Errorf("input %q: reply %q, want %q", c.user, msg.Content, c.want)
		}
	}
}

func TestScriptedModelExhausted(t *testing.T) {
	ctx := context.Background()
	in := []*schema.Message{schema.UserMessage("hi")}
	m := agents.NewScriptedModel("bob", agents.NewScript(agents.Say("only once")), nil)
	if _, err := m.Generate(ctx, in); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		msg, err := m.Generate(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(msg.Content, "bob") || !strings.Contains(msg.Content, "script ended") || len(msg.ToolCalls) != 0 {
			t.Fatalf("exhausted reply = %+v", msg)
		}
	}
	custom := agents.NewScriptedModel("bob", agents.Script{Exhausted: "I'm done."}, nil)
	sr, err := custom.Stream(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if msg := concatStream(t, sr); msg.Content != "I'm done." {
		t.Fatalf("custom exhausted reply = %q", msg.Content)
	}
}

func TestScriptedModelStreamMatchesGenerate(t *testing.T) {
	ctx := context.Background()
	in := []*schema.Message{schema.UserMessage("hello")}
	script := agents.NewScript(
		agents.Say("  Three little\nwords and more "),
		agents.SayAndDo("Calling now.", agents.Call("a", `{}`), agents.Call("b", `{"x":1}`)),
		agents.Do(agents.Exit("done")),
	)
	gen := agents.NewScriptedModel("s", script, nil)
	str := agents.NewScriptedModel("s", script, nil)
	for i := range script.Steps {
		want, err := gen.Generate(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		sr, err := str.Stream(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		chunks := readAll(t, sr)
		if len(want.ToolCalls) > 0 && len(chunks[0].ToolCalls) != len(want.ToolCalls) {
			t.Errorf("step %d: tool calls not on the first chunk", i)
		}
		last := chunks[len(chunks)-1]
		if last.ResponseMeta == nil || last.ResponseMeta.Usage == nil {
			t.Errorf("step %d: no usage on the last chunk", i)
		}
		got, err := schema.ConcatMessages(chunks)
		if err != nil {
			t.Fatal(err)
		}
		if got.Content != want.Content || !toolCallsEqual(got.ToolCalls, want.ToolCalls) ||
			*got.ResponseMeta.Usage != *want.ResponseMeta.Usage || got.ResponseMeta.FinishReason != want.ResponseMeta.FinishReason {
			t.Errorf("step %d: stream concatenates to %+v, generate gave %+v", i, got, want)
		}
	}
}

func TestScriptedModelStreamsWords(t *testing.T) {
	m := agents.NewScriptedModel("s", agents.NewScript(agents.Say("one two  three")), nil)
	sr, err := m.Stream(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range readAll(t, sr) {
		got = append(got, c.Content)
	}
	if strings.Join(got, "|") != "one |two  |three" {
		t.Fatalf("chunks = %q", got)
	}
}

func TestScriptedModelPaceHonoursCancel(t *testing.T) {
	m := agents.NewScriptedModel("slow", agents.NewScript(agents.Say("late")), agents.NewPace(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := m.Generate(ctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Generate error = %v, want deadline exceeded", err)
	}
	if _, err := m.Stream(ctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stream error = %v, want deadline exceeded", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("the pace was not interrupted")
	}
	// A cancelled call does not use up its step.
	fast := context.Background()
	pace := agents.NewPace(time.Millisecond)
	m = agents.NewScriptedModel("slow", agents.NewScript(agents.Say("late")), pace)
	cctx, ccancel := context.WithCancel(fast)
	ccancel()
	if _, err := m.Generate(cctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want canceled", err)
	}
	msg, err := m.Generate(fast, nil)
	if err != nil || msg.Content != "late" {
		t.Fatalf("after cancel: %v, %v", msg, err)
	}
}

func TestScriptedModelWithToolsSharesPosition(t *testing.T) {
	ctx := context.Background()
	m := agents.NewScriptedModel("bob", agents.NewScript(agents.Do(agents.Call("a", `{}`)), agents.Do(agents.Call("b", `{}`))), nil)
	withTools, err := m.WithTools([]*schema.ToolInfo{{Name: "a"}, {Name: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := withTools.Generate(ctx, nil)
	second, _ := m.Generate(ctx, nil)
	if first.ToolCalls[0].Function.Name != "a" || second.ToolCalls[0].Function.Name != "b" || second.ToolCalls[0].ID != "bob_call_2" {
		t.Fatalf("copies do not share the script: %+v then %+v", first.ToolCalls, second.ToolCalls)
	}
}

// callbackLog records what model callbacks a handler saw.
type callbackLog struct {
	mu     sync.Mutex
	types  []string
	starts []*model.CallbackInput
	ends   []*model.CallbackOutput
	errs   []error
}

func (l *callbackLog) handler() callbacks.Handler {
	return callbacks.NewHandlerBuilder().
		OnStartFn(func(ctx context.Context, info *callbacks.RunInfo, in callbacks.CallbackInput) context.Context {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.types = append(l.types, info.Type+"/"+string(info.Component))
			l.starts = append(l.starts, model.ConvCallbackInput(in))
			return ctx
		}).
		OnEndFn(func(ctx context.Context, _ *callbacks.RunInfo, out callbacks.CallbackOutput) context.Context {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.ends = append(l.ends, model.ConvCallbackOutput(out))
			return ctx
		}).
		OnEndWithStreamOutputFn(func(ctx context.Context, _ *callbacks.RunInfo, sr *schema.StreamReader[callbacks.CallbackOutput]) context.Context {
			defer sr.Close()
			for {
				out, err := sr.Recv()
				if err != nil {
					return ctx
				}
				l.mu.Lock()
				l.ends = append(l.ends, model.ConvCallbackOutput(out))
				l.mu.Unlock()
			}
		}).
		OnErrorFn(func(ctx context.Context, _ *callbacks.RunInfo, err error) context.Context {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.errs = append(l.errs, err)
			return ctx
		}).Build()
}

func TestScriptedModelFiresCallbacks(t *testing.T) {
	m := agents.NewScriptedModel("bob", threeStepScript, nil)
	if c, ok := m.(components.Checker); !ok || !c.IsCallbacksEnabled() {
		t.Fatal("the scripted model must fire its own callbacks")
	}
	var log callbackLog
	ctx := callbacks.InitCallbacks(context.Background(), &callbacks.RunInfo{Component: components.ComponentOfChatModel, Type: "Scripted"}, log.handler())
	tools := []*schema.ToolInfo{{Name: "search"}}
	in := []*schema.Message{schema.UserMessage("hi")}
	if _, err := m.Generate(ctx, in, model.WithTools(tools)); err != nil {
		t.Fatal(err)
	}
	sr, err := m.Stream(ctx, in, model.WithTools(tools))
	if err != nil {
		t.Fatal(err)
	}
	concatStream(t, sr)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := m.Generate(cctx, in); err == nil {
		t.Fatal("no error from a cancelled context")
	}

	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.starts) != 3 || len(log.errs) != 1 {
		t.Fatalf("%d starts, %d errors; want 3 and 1", len(log.starts), len(log.errs))
	}
	if s := log.starts[0]; s == nil || len(s.Messages) != 1 || len(s.Tools) != 1 || s.Tools[0].Name != "search" || s.Config == nil {
		t.Fatalf("start input = %+v", log.starts[0])
	}
	// One end for Generate, then one per streamed chunk (one chunk: only tool calls).
	if len(log.ends) != 2 {
		t.Fatalf("%d ends, want 2", len(log.ends))
	}
	for i, e := range log.ends {
		if e == nil || e.Message == nil || e.TokenUsage == nil || e.TokenUsage.TotalTokens == 0 {
			t.Fatalf("end %d = %+v, want a message with usage", i, e)
		}
	}
	if got := log.ends[1].Message.ToolCalls; len(got) != 2 || got[1].ID != "bob_call_2" {
		t.Fatalf("streamed end carries calls %+v", got)
	}
}

// readAll reads sr to its end and closes it.
func readAll(t *testing.T, sr *schema.StreamReader[*schema.Message]) []*schema.Message {
	t.Helper()
	defer sr.Close()
	var out []*schema.Message
	for {
		m, err := sr.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
}

// concatStream reads sr and joins its chunks.
func concatStream(t *testing.T, sr *schema.StreamReader[*schema.Message]) *schema.Message {
	t.Helper()
	msg, err := schema.ConcatMessages(readAll(t, sr))
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func toolCallsEqual(a, b []schema.ToolCall) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Type != b[i].Type || a[i].Function != b[i].Function {
			return false
		}
	}
	return true
}
