package attach_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/traces"
)

// cannedModel stands in for a real chat model: it answers every call with the same reply.
type cannedModel struct{ reply string }

func (m cannedModel) Generate(context.Context, []*schema.Message, ...model.Option) (*schema.Message, error) {
	return schema.AssistantMessage(m.reply, nil), nil
}

func (m cannedModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	return schema.StreamReaderFromArray([]*schema.Message{msg}), err
}

func (m cannedModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }

// An app records a run by passing Option to Query. This one writes its runs as trace files
// (Config.Dir) instead of streaming them to `baton serve`, and reads the one it recorded back.
func ExampleBaton_Option() {
	ctx := context.Background()
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "greeter", Description: "Greets.", Instruction: "Greet the user.",
		Model: cannedModel{reply: "Hello!"},
	})
	if err != nil {
		panic(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent})

	dir, _ := os.MkdirTemp("", "baton-example")
	defer os.RemoveAll(dir)
	b := attach.New(attach.Config{Dir: dir, Flow: "greeting"})
	events := runner.Query(ctx, "Hi", b.Option()) // the one line
	for {
		event, ok := events.Next()
		if !ok {
			break
		}
		if event.Output != nil && event.Output.MessageOutput != nil {
			msg, _ := event.Output.MessageOutput.GetMessage()
			fmt.Println(event.AgentName+":", msg.Content)
		}
	}
	if err := b.Close(ctx); err != nil { // optional: waits until the file is written
		panic(err)
	}

	files, _ := filepath.Glob(filepath.Join(dir, "*.trace.json"))
	data, _ := os.ReadFile(files[0])
	tr, err := traces.Unmarshal(data)
	if err != nil {
		panic(err)
	}
	fmt.Println(tr.Run.Flow, tr.Run.Status)
	for _, e := range tr.Events {
		fmt.Println(e.Seq, e.Kind, cmp.Or(e.Agent, "-"))
	}
	// Output:
	// greeter: Hello!
	// greeting completed
	// 1 run.started -
	// 2 agent.started greeter
	// 3 model.started greeter
	// 4 model.finished greeter
	// 5 message greeter
	// 6 agent.finished greeter
	// 7 run.finished -
}

// To record every run of the process, whichever Runner makes it, register the handler once at
// start instead of passing Option to each run.
func ExampleHandler() {
	callbacks.AppendGlobalHandlers(attach.Handler())
}

// An app that may be held at breakpoints adds Baton's middleware to its ChatModelAgents, first in
// Handlers. Its runs go as before until a breakpoint is set on one in Baton's page: then the run
// waits there, in this process, for Continue (here nothing is set, and the run is recorded to
// files, which are never held).
func ExampleMiddleware() {
	ctx := context.Background()
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "greeter", Description: "Greets.", Instruction: "Greet the user.",
		Model:    cannedModel{reply: "Hello!"},
		Handlers: []adk.ChatModelAgentMiddleware{attach.Middleware(attach.HoldTimeout(5 * time.Minute))},
	})
	if err != nil {
		panic(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent})
	dir, _ := os.MkdirTemp("", "baton-example")
	defer os.RemoveAll(dir)
	b := attach.New(attach.Config{Dir: dir})
	events := runner.Query(ctx, "Hi", b.Option())
	for {
		event, ok := events.Next()
		if !ok {
			break
		}
		if msg, _ := event.Output.MessageOutput.GetMessage(); msg != nil {
			fmt.Println(event.AgentName+":", msg.Content)
		}
	}
	if err := b.Close(ctx); err != nil { // the file is written before dir goes
		panic(err)
	}
	// Output:
	// greeter: Hello!
}
