package command_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/command"
	"github.com/baton-dev/baton/flows"
	"github.com/baton-dev/baton/traces"
)

// A program's own baton: Baton's command line with the program's flows beside the built-in ones.
// Its main is one line, command.Main(greeter); here the example runs one command line with Run,
// `run greeter --out FILE`, and reads the trace it wrote.
func ExampleRun() {
	greeter := flows.Flow{
		Name:         "greeter",
		Description:  "Greets whoever writes.",
		DefaultInput: "Hi",
		Build: func(ctx context.Context, models flows.Models) (adk.Agent, error) {
			m, err := models("greeter")
			if err != nil {
				return nil, err
			}
			return adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
				Name: "greeter", Description: "Greets.", Instruction: "Greet the user.", Model: m,
			})
		},
		Script: map[string][]flows.Reply{"greeter": {{Text: "Hello!"}}},
	}

	dir, err := os.MkdirTemp("", "greeter")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "run.json")
	// As `mybaton run greeter --out run.json` would; its one line per event goes to io.Discard.
	code := command.Run(context.Background(), []string{"run", "greeter", "--out", file}, io.Discard, os.Stderr, greeter)
	data, err := os.ReadFile(file)
	if err != nil {
		panic(err)
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		panic(err)
	}
	fmt.Println(code, tr.Run.Flow, tr.Run.Status, len(tr.Events), "events")
	// Output:
	// 0 greeter completed 7 events
}
