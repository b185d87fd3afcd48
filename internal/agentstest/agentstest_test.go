package agentstest_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
)

// observed is what a run showed: its events, its root agent's context (to read the session after
// the run) and the tool callbacks, as "start name", "end name" and "error name".
type observed struct {
	events []*adk.AgentEvent
	texts  []string // the message text of each event, "" for none

	mu      sync.Mutex
	rootCtx context.Context
	tools   []string
}

func (o *observed) handler() callbacks.Handler {
	note := func(what string, info *callbacks.RunInfo) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.tools = append(o.tools, what+" "+info.Name)
	}
	return callbacks.NewHandlerBuilder().
		OnStartFn(func(ctx context.Context, info *callbacks.RunInfo, _ callbacks.CallbackInput) context.Context {
			switch info.Component {
			case adk.ComponentOfAgent:
				o.mu.Lock()
				if o.rootCtx == nil {
					o.rootCtx = ctx
				}
				o.mu.Unlock()
			case components.ComponentOfTool:
				note("start", info)
			}
			return ctx
		}).
		OnEndFn(func(ctx context.Context, info *callbacks.RunInfo, _ callbacks.CallbackOutput) context.Context {
			if info.Component == components.ComponentOfTool {
				note("end", info)
			}
			return ctx
		}).
		OnErrorFn(func(ctx context.Context, info *callbacks.RunInfo, _ error) context.Context {
			if info.Component == components.ComponentOfTool {
				note("error", info)
			}
			return ctx
		}).Build()
}

// run runs flow's default input on a real Runner and reads every event to its end.
func run(t *testing.T, flow agents.Flow, streaming bool) *observed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root, err := flow.Build(ctx, flow.ScriptedModels(nil))
	if err != nil {
		t.Fatal(err)
	}
	o := &observed{}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: streaming})
	iter := runner.Query(ctx, flow.DefaultInput, adk.WithCallbacks(o.handler()))
	for {
		ev, ok := iter.Next()
		if !ok {
			break
		}
		text := ""
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			msg, err := ev.Output.MessageOutput.GetMessage()
			if err != nil {
				t.Fatal(err)
			}
			text = msg.Content
			for _, c := range msg.ToolCalls {
				text += " " + c.Function.Arguments
			}
		}
		o.events = append(o.events, ev)
		o.texts = append(o.texts, text)
	}
	if ctx.Err() != nil {
		t.Fatal("the run did not end")
	}
	return o
}

func modes(t *testing.T, f func(t *testing.T, streaming bool)) {
	t.Run("generate", func(t *testing.T) { f(t, false) })
	t.Run("stream", func(t *testing.T) { f(t, true) })
}

func TestHostileRunsToCompletion(t *testing.T) {
	modes(t, func(t *testing.T, streaming bool) {
		flow := agentstest.Hostile()
		o := run(t, flow, streaming)
		for _, ev := range o.events {
			if ev.Err != nil {
				t.Fatalf("error event: %v", ev.Err)
			}
		}
		// assistant (text + 2 calls), echo result, remember result, final answer
		if len(o.texts) != 4 {
			t.Fatalf("%d events, want 4: %q", len(o.texts), o.texts)
		}
		all := strings.Join(o.texts, "\n")
		for _, want := range []string{agentstest.ScriptTag, `<img src=x onerror=\"window.__xss=1\">`, agentstest.BoldTag} {
			if !strings.Contains(all, want) {
				t.Errorf("no %s in the events:\n%s", want, all)
			}
		}
		if !strings.Contains(o.texts[1], agentstest.ImgTag) || !strings.Contains(o.texts[3], agentstest.ImgTag) {
			t.Errorf("tool result %q or final answer %q lacks %s", o.texts[1], o.texts[3], agentstest.ImgTag)
		}
		if v, _ := adk.GetSessionValue(o.rootCtx, agentstest.HostileSessionKey); v != agentstest.ImgTag {
			t.Errorf("session value %q = %v", agentstest.HostileSessionKey, v)
		}
		if !strings.Contains(flow.Agents[0].Description, agentstest.BoldTag) {
			t.Error("the agent description lacks markup")
		}
	})
}

func TestFailingToolFailsTheRunNotTheProcess(t *testing.T) {
	modes(t, func(t *testing.T, streaming bool) {
		o := run(t, agentstest.FailingTool(), streaming)
		// ping call, ping result, the failing calls, the error
		if len(o.events) != 4 {
			t.Fatalf("%d events, want 4: %q", len(o.events), o.texts)
		}
		last := o.events[3]
		if last.Err == nil || !strings.Contains(last.Err.Error(), agentstest.ErrFlaky.Error()) || !strings.Contains(last.Err.Error(), "flaky_api") {
			t.Fatalf("last event error = %v", last.Err)
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		got := strings.Join(o.tools, ", ")
		// crash's panic ends it without an end or error callback; calls run in parallel, so
		// compare as sets.
		for _, want := range []string{"start ping", "end ping", "start flaky_api", "error flaky_api", "start crash"} {
			if !strings.Contains(got, want) {
				t.Errorf("tool callbacks %q lack %q", got, want)
			}
		}
		if strings.Contains(got, "end crash") || strings.Contains(got, "error crash") {
			t.Errorf("tool callbacks %q: eino now ends the panicking tool's callbacks", got)
		}
	})
}

func TestLongProducesTheAnnouncedEvents(t *testing.T) {
	for _, n := range []int{1, 25, 300} {
		o := run(t, agentstest.Long(n), n%2 == 1)
		if len(o.events) != agentstest.LongEvents(n) {
			t.Fatalf("Long(%d): %d events, want %d", n, len(o.events), agentstest.LongEvents(n))
		}
		if last := o.events[len(o.events)-1]; last.Err != nil || !strings.Contains(o.texts[len(o.texts)-1], "Done after") {
			t.Fatalf("Long(%d) ended with %v / %q", n, last.Err, o.texts[len(o.texts)-1])
		}
	}
}

func BenchmarkLong1000(b *testing.B) {
	flow := agentstest.Long(1000)
	for b.Loop() {
		ctx := context.Background()
		root, err := flow.Build(ctx, flow.ScriptedModels(nil))
		if err != nil {
			b.Fatal(err)
		}
		iter := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root}).Query(ctx, flow.DefaultInput)
		n := 0
		for _, ok := iter.Next(); ok; _, ok = iter.Next() {
			n++
		}
		if n != agentstest.LongEvents(1000) {
			b.Fatalf("%d events", n)
		}
	}
}
