package realapps

import (
	"context"
	"errors"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/adk/filesystem"
	"github.com/cloudwego/eino/adk/middlewares/reduction"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
)

// toolMiddleware is a streaming ChatModelAgent whose tools' results are rewritten on their way
// to the model, as apps that read large outputs do: eino's reduction middleware cuts a long
// result short (keeping the whole in a file), and a tool call middleware of the app's turns a
// tool's error into a result the model can read. What the Runner's stream and the model carry
// is the rewritten result, not the tool's own; both rewritten results come from tools called
// in one reply.
var toolMiddleware = App{
	Name:    "tool-middleware",
	Queries: []string{"Why did last night's deploy fail?", "Is ticket OPS-7 still open?"},
	Build: func(ctx context.Context, t *tally) (*adk.Runner, error) {
		logs := mustTool(t, "fetch_logs", "The deploy logs of a night.", func(_ context.Context, in args) (string, error) {
			return strings.Repeat("12:00 step ok\n", 40) + "12:07 migrate: lock timeout on table orders", nil
		})
		tickets := mustTool(t, "lookup_ticket", "A ticket of the ops tracker.", func(_ context.Context, in args) (string, error) {
			if in.Query == "OPS-7" {
				return "", errors.New("tracker unreachable")
			}
			return in.Query + ": open", nil
		})
		reduce, err := reduction.New(ctx, &reduction.Config{
			Backend: filesystem.NewInMemoryBackend(), MaxLengthForTrunc: 200, RootDir: "/offload",
		})
		if err != nil {
			return nil, err
		}
		errorsAsResults := compose.ToolMiddleware{
			Invokable: func(next compose.InvokableToolEndpoint) compose.InvokableToolEndpoint {
				return func(ctx context.Context, in *compose.ToolInput) (*compose.ToolOutput, error) {
					out, err := next(ctx, in)
					if err != nil {
						return &compose.ToolOutput{Result: "the tool failed: " + err.Error()}, nil
					}
					return out, nil
				}
			},
			Streamable: func(next compose.StreamableToolEndpoint) compose.StreamableToolEndpoint {
				return func(ctx context.Context, in *compose.ToolInput) (*compose.StreamToolOutput, error) {
					out, err := next(ctx, in)
					if err != nil {
						return &compose.StreamToolOutput{Result: schema.StreamReaderFromArray([]string{"the tool failed: " + err.Error()})}, nil
					}
					return out, nil
				}
			},
		}
		tools := toolsOf(logs, tickets)
		tools.ToolCallMiddlewares = []compose.ToolMiddleware{errorsAsResults}
		tools.ExecuteSequentially = true // the app's own stream, the same each run
		oncall := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "oncall", Description: "Investigates failed deploys.", Instruction: "Read the logs, then answer.",
			Model: scripted(t, "oncall",
				agents.Do(agents.Call("fetch_logs", args{Query: "last night"}), agents.Call("lookup_ticket", args{Query: "OPS-3"})),
				agents.QuoteToolResult("The migration timed out on a lock: %s"),
				agents.Do(agents.Call("lookup_ticket", args{Query: "OPS-7"})),
				agents.QuoteToolResult("I could not tell: %s."),
			),
			ToolsConfig: tools,
			Handlers:    []adk.ChatModelAgentMiddleware{reduce},
		})
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: oncall, EnableStreaming: true}), nil
	},
}
