package record_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// TestModelInputsReferToToolResults: the tool results a model input adds to the agent's last are
// handed to the recording with where their calls' ends were written, which writes each as a
// reference there: read back, such a message's strings are the ones its tool.finished holds, in
// place. A result a middleware rewrote, and a tool message of no call the recorder saw, are
// written whole; one a middleware copied, byte for byte, is still a reference. Each model input
// reads back exactly as the model was given it: invoked or streamed, tools run one by one or at
// once (ending in any order).
func TestModelInputsReferToToolResults(t *testing.T) {
	for _, c := range []struct {
		name                string
		streaming, parallel bool
	}{{"invoke", false, false}, {"invoke-parallel", false, true}, {"streaming", true, false}, {"streaming-parallel", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			tick, err := utils.InferTool("tick", "Counts.", func(_ context.Context, in struct {
				N int `json:"n"`
			}) (string, error) {
				return fmt.Sprintf("tick %d", in.N), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			call := func(n int) agents.ToolCall { return agents.Call("tick", map[string]int{"n": n}) }
			given := &givenInputs{}
			script := agents.NewScript(agents.Do(call(1), call(2), call(3), call(4)), agents.Do(call(5), call(6)), agents.Say("Done."))
			models := func(string) (model.ToolCallingChatModel, error) {
				return &inputWitness{ToolCallingChatModel: agents.NewScriptedModel("counter", script, nil), given: given}, nil
			}
			rec := recordCounter(t, ctx, models, tick, c.streaming, c.parallel,
				&resultRewriter{BaseChatModelAgentMiddleware: &adk.BaseChatModelAgentMiddleware{}})

			events := rec.Snapshot().Events
			ends := map[string]*traces.ToolCall{}
			var inputs [][]traces.Message
			for _, e := range events {
				switch e.Kind {
				case traces.KindToolFinished:
					ends[e.Tool.CallID] = e.Tool
				case traces.KindModelStarted:
					inputs = append(inputs, e.Model.Input)
				}
			}
			if want := given.all(); !reflect.DeepEqual(inputs, want) {
				t.Fatalf("model inputs read back as\n%+v\nwant what the model was given\n%+v", inputs, want)
			}
			shared := map[string]bool{}
			for _, m := range inputs[len(inputs)-1] {
				if m.Role != string(schema.Tool) {
					continue
				}
				end := ends[m.ToolCallID]
				shared[m.Content] = end != nil && unsafe.StringData(m.Content) == unsafe.StringData(end.Result) &&
					unsafe.StringData(m.ToolCallID) == unsafe.StringData(end.CallID)
			}
			want := map[string]bool{"tick 1": true, "tick 2 (rewritten)": false, "tick 3": true, "tick 4": true, "unasked": false,
				"tick 5": true, "tick 6": true}
			if !reflect.DeepEqual(shared, want) {
				t.Errorf("tool messages of the last input written as where their calls' ends are: %v, want %v", shared, want)
			}
		})
	}
}

// resultRewriter rewrites, before each model call, the result of tick 2 and copies that of tick
// 3 (the same bytes, in strings of its own), and adds once a tool message of a call nobody made.
type resultRewriter struct {
	*adk.BaseChatModelAgentMiddleware
	added bool
}

func (r *resultRewriter) BeforeModelRewriteState(ctx context.Context, state *adk.ChatModelAgentState, mc *adk.ModelContext) (context.Context, *adk.ChatModelAgentState, error) {
	out := *state
	out.Messages = append([]*schema.Message(nil), state.Messages...)
	for i, m := range out.Messages {
		if m.Role != schema.Tool {
			continue
		}
		switch m.Content {
		case "tick 2":
			out.Messages[i] = schema.ToolMessage("tick 2 (rewritten)", m.ToolCallID, schema.WithToolName(m.ToolName))
		case "tick 3":
			out.Messages[i] = schema.ToolMessage(strings.Clone(m.Content), strings.Clone(m.ToolCallID), schema.WithToolName(strings.Clone(m.ToolName)))
		}
	}
	if n := len(out.Messages); !r.added && n > 0 && out.Messages[n-1].Role == schema.Tool {
		r.added = true
		out.Messages = append(out.Messages, schema.ToolMessage("unasked", "nobody_call_1", schema.WithToolName("tick")))
	}
	return ctx, &out, nil
}

// inputWitness is a model that notes each input it is given, in the trace's form.
type inputWitness struct {
	model.ToolCallingChatModel
	given *givenInputs
}

// IsCallbacksEnabled says the model fires its callbacks itself: the scripted model it wraps does.
func (m *inputWitness) IsCallbacksEnabled() bool { return true }

func (m *inputWitness) Generate(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	m.given.note(in)
	return m.ToolCallingChatModel.Generate(ctx, in, opts...)
}

func (m *inputWitness) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	m.given.note(in)
	return m.ToolCallingChatModel.Stream(ctx, in, opts...)
}

func (m *inputWitness) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	inner, err := m.ToolCallingChatModel.WithTools(tools)
	if err != nil {
		return nil, err
	}
	return &inputWitness{ToolCallingChatModel: inner, given: m.given}, nil
}

// givenInputs are the inputs a model was given, in order.
type givenInputs struct {
	mu     sync.Mutex
	inputs [][]traces.Message
}

func (g *givenInputs) note(in []*schema.Message) {
	msgs := make([]traces.Message, len(in))
	for i, m := range in {
		msgs[i] = traces.Message{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, ToolName: m.ToolName}
		for _, tc := range m.ToolCalls {
			msgs[i].ToolCalls = append(msgs[i].ToolCalls, traces.ToolCallSpec{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inputs = append(g.inputs, msgs)
}

func (g *givenInputs) all() [][]traces.Message {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inputs
}
