package record_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/traces"
)

// TestToolsNodeHoldsItsVisit: a tools node's start leaves its agent's visit in the node's
// context, where each tool call's start finds it a few of eino's contexts up instead of walking
// up to the agent's call, in streaming runs and not, tools run one by one or at once; and the
// tool calls are recorded as the agent's, each by the id its model gave it (read from the node's
// context, not from eino's address).
func TestToolsNodeHoldsItsVisit(t *testing.T) {
	for _, c := range []struct {
		name                string
		streaming, parallel bool
	}{{"invoke", false, false}, {"streaming", true, false}, {"streaming-parallel", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var mu sync.Mutex
			var held []string
			tick, err := utils.InferTool("tick", "Counts.", func(ctx context.Context, _ struct{}) (string, error) {
				mu.Lock()
				held = append(held, record.ToolsNodeVisit(ctx))
				mu.Unlock()
				return "ok", nil
			})
			if err != nil {
				t.Fatal(err)
			}
			models := attachtest.Scripted("counter", nil,
				agents.Do(agents.Call("tick", struct{}{}), agents.Call("tick", struct{}{})),
				agents.Do(agents.Call("tick", struct{}{})), agents.Say("Done."))
			rec := recordCounter(t, ctx, models, tick, c.streaming, c.parallel)
			if len(held) != 3 {
				t.Fatalf("tick ran %d times, want 3", len(held))
			}
			for i, agent := range held {
				if agent != "counter" {
					t.Errorf("tool call %d: the tools node holds the visit of %q, want counter's", i+1, agent)
				}
			}
			// Each call by the id the model gave it (found from the tools node's context), its
			// start, end and result alike.
			var asked []string
			ids := map[traces.Kind][]string{}
			for _, e := range rec.Snapshot().Events {
				switch {
				case e.Kind == traces.KindModelFinished && e.Model.Output != nil:
					for _, tc := range e.Model.Output.ToolCalls {
						asked = append(asked, tc.ID)
					}
				case e.Kind == traces.KindToolStarted || e.Kind == traces.KindToolFinished:
					ids[e.Kind] = append(ids[e.Kind], e.Tool.CallID)
					if e.Agent != "counter" {
						t.Errorf("%s recorded as %q's, want counter's", e.Kind, e.Agent)
					}
				case e.Kind == traces.KindMessage && e.Message.Role == string(schema.Tool):
					ids[e.Kind] = append(ids[e.Kind], e.Message.ToolCallID)
				}
			}
			slices.Sort(asked)
			for _, kind := range []traces.Kind{traces.KindToolStarted, traces.KindToolFinished, traces.KindMessage} {
				got := ids[kind]
				slices.Sort(got)
				if len(asked) != 3 || !slices.Equal(got, asked) {
					t.Errorf("%s call ids %v, want those the model asked for, %v", kind, got, asked)
				}
			}
		})
	}
}

// recordCounter records a run of agent counter, its model from models, its one tool tick (run one
// by one, or at once when parallel), with handlers, through a streaming Runner or not, and
// returns the recording, ended.
func recordCounter(t *testing.T, ctx context.Context, models agents.ModelFor, tick tool.BaseTool, streaming, parallel bool,
	handlers ...adk.ChatModelAgentMiddleware) *traces.Recording {
	t.Helper()
	agent, err := agents.NewChatAgent(ctx, models, adk.ChatModelAgentConfig{Name: "counter", Description: "Counts.", Instruction: "Count.",
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{tick}, ExecuteSequentially: !parallel}},
		Handlers:    handlers})
	if err != nil {
		t.Fatal(err)
	}
	rec := traces.NewRecording(traces.Run{ID: "r1", Flow: "count"}, nil)
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, EnableStreaming: streaming})
	attachtest.Drain(t, record.NewRecorder(rec, "count", nil).Run(ctx, runner, []adk.Message{schema.UserMessage("Count.")}))
	<-rec.Done()
	return rec
}

// TestToolResultsAsTheAgentSentThem: a tool call that fails, its error turned into a result by a
// tool middleware so the run goes on, records its error, and the message the model read for it
// (which only the agent's events carry) once; the call after it, which succeeds, records no error
// (a Recording's tool payloads are reused from call to call) and its own result, and once the
// message the model read, which a handler around the tool rewrote. Each message sits after its
// call's end and before the model call that reads it.
func TestToolResultsAsTheAgentSentThem(t *testing.T) {
	for _, c := range []struct {
		name                  string
		streaming, streamable bool // a streaming Runner; a streamable tool, its results streamed
	}{{"invoke", false, false}, {"streaming", true, false}, {"streaming-streamable", true, true}} {
		streaming := c.streaming
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var calls int
			fail := func() error {
				calls++ // tools run one by one
				if calls == 1 {
					return errors.New("boom")
				}
				return nil
			}
			var tick tool.BaseTool
			var err error
			if c.streamable {
				tick, err = utils.InferStreamTool("tick", "Counts.", func(context.Context, struct{}) (*schema.StreamReader[string], error) {
					if err := fail(); err != nil {
						return nil, err
					}
					return schema.StreamReaderFromArray([]string{"o", "k"}), nil
				})
			} else {
				tick, err = utils.InferTool("tick", "Counts.", func(context.Context, struct{}) (string, error) {
					if err := fail(); err != nil {
						return "", err
					}
					return "ok", nil
				})
			}
			if err != nil {
				t.Fatal(err)
			}
			// What a tool's error says, as a result the model reads.
			errorsAsResults := compose.ToolMiddleware{Invokable: func(next compose.InvokableToolEndpoint) compose.InvokableToolEndpoint {
				return func(ctx context.Context, in *compose.ToolInput) (*compose.ToolOutput, error) {
					out, err := next(ctx, in)
					if err != nil {
						return &compose.ToolOutput{Result: "failed: " + err.Error()}, nil
					}
					return out, nil
				}
			}, Streamable: func(next compose.StreamableToolEndpoint) compose.StreamableToolEndpoint {
				return func(ctx context.Context, in *compose.ToolInput) (*compose.StreamToolOutput, error) {
					out, err := next(ctx, in)
					if err != nil {
						return &compose.StreamToolOutput{Result: schema.StreamReaderFromArray([]string{"failed: " + err.Error()})}, nil
					}
					return out, nil
				}
			}}
			models := attachtest.Scripted("counter", nil,
				agents.Do(agents.Call("tick", struct{}{}), agents.Call("tick", struct{}{})), agents.Say("Done."))
			agent, err := agents.NewChatAgent(ctx, models, adk.ChatModelAgentConfig{Name: "counter", Description: "Counts.", Instruction: "Count.",
				ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{tick}, ExecuteSequentially: true,
					ToolCallMiddlewares: []compose.ToolMiddleware{errorsAsResults}}},
				Handlers: []adk.ChatModelAgentMiddleware{shortened{}}})
			if err != nil {
				t.Fatal(err)
			}
			rec := traces.NewRecording(traces.Run{ID: "r1", Flow: "count"}, nil)
			runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, EnableStreaming: streaming})
			events := record.NewRecorder(rec, "count", nil).Run(ctx, runner, []adk.Message{schema.UserMessage("Count.")})
			streamed := map[string]string{} // the Runner's tool messages, by call id
			for {
				ev, ok := events.Next()
				if !ok {
					break
				}
				if mo := ev.Output; mo != nil && mo.MessageOutput != nil && mo.MessageOutput.Role == schema.Tool {
					m := mo.MessageOutput.Message
					if mo.MessageOutput.IsStreaming {
						if m, err = schema.ConcatMessageStream(mo.MessageOutput.MessageStream); err != nil {
							t.Fatal(err)
						}
					}
					streamed[m.ToolCallID] = m.Content
				}
			}
			<-rec.Done()
			var errs, results, story []string
			recorded := map[string][]string{}
			for _, e := range rec.Snapshot().Events {
				switch {
				case e.Kind == traces.KindToolFinished:
					errs, results = append(errs, e.Tool.Error), append(results, e.Tool.Result)
					story = append(story, "end "+e.Tool.CallID)
				case e.Kind == traces.KindMessage && e.Message.Role == string(schema.Tool):
					recorded[e.Message.ToolCallID] = append(recorded[e.Message.ToolCallID], e.Message.Content)
					story = append(story, "message "+e.Message.ToolCallID)
				case e.Kind == traces.KindModelStarted:
					story = append(story, "model")
				}
			}
			if len(errs) != 2 || !strings.Contains(errs[0], "boom") || errs[1] != "" || results[1] != "ok" {
				t.Errorf("tool.finished errors %q, results %q: want the first call's boom, then the tool's own ok", errs, results)
			}
			if len(streamed) != 2 || !strings.HasPrefix(streamed["counter_call_1"], "failed: ") || streamed["counter_call_2"] != "short(ok)" {
				t.Fatalf("the Runner's tool messages %q, want the failed call's and the other's, rewritten", streamed)
			}
			want := []string{"model", "end counter_call_1", "end counter_call_2", "message counter_call_1", "message counter_call_2", "model"}
			if !slices.Equal(story, want) {
				t.Errorf("model calls, tool ends and tool messages in order %q, want %q", story, want)
			}
			for id, text := range streamed {
				if got := recorded[id]; len(got) != 1 || got[0] != text {
					t.Errorf("call %s: tool messages recorded %q, want the Runner's %q once", id, got, text)
				}
			}
		})
	}
}

// shortened is a handler around an agent's tools that rewrites each result the model will read,
// as eino's reduction cuts a long one short.
type shortened struct {
	*adk.BaseChatModelAgentMiddleware
}

func (shortened) WrapInvokableToolCall(_ context.Context, next adk.InvokableToolCallEndpoint, _ *adk.ToolContext) (adk.InvokableToolCallEndpoint, error) {
	return func(ctx context.Context, args string, opts ...tool.Option) (string, error) {
		out, err := next(ctx, args, opts...)
		return "short(" + out + ")", err
	}, nil
}

func (shortened) WrapStreamableToolCall(_ context.Context, next adk.StreamableToolCallEndpoint, _ *adk.ToolContext) (adk.StreamableToolCallEndpoint, error) {
	return func(ctx context.Context, args string, opts ...tool.Option) (*schema.StreamReader[string], error) {
		out, err := next(ctx, args, opts...)
		if err != nil {
			return nil, err
		}
		whole, err := concatStrings(out)
		return schema.StreamReaderFromArray([]string{"short(" + whole + ")"}), err
	}, nil
}

// concatStrings joins a stream of strings and closes it.
func concatStrings(s *schema.StreamReader[string]) (string, error) {
	defer s.Close()
	var b strings.Builder
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return b.String(), nil
		}
		if err != nil {
			return "", err
		}
		b.WriteString(chunk)
	}
}
