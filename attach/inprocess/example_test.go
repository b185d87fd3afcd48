package inprocess_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/attach/inprocess"
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

// An app with no `baton serve` to send to serves the page itself, records its runs into it, and
// prints where to watch them. Here the example asks the page's JSON API for the run it holds.
func ExampleStart() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()         // the page lives as long as ctx
	var out bytes.Buffer // standard error when not set
	b, err := inprocess.Start(ctx, inprocess.Options{Out: &out})
	if err != nil {
		panic(err)
	}
	url := strings.TrimSpace(out.String()[strings.Index(out.String(), "http://"):])

	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "greeter", Description: "Greets.", Instruction: "Greet the user.",
		Model: cannedModel{reply: "Hello!"},
	})
	if err != nil {
		panic(err)
	}
	events := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "Hi", b.Option())
	for _, ok := events.Next(); ok; _, ok = events.Next() {
	}
	if err := b.Close(ctx); err != nil { // optional: waits until the run is delivered
		panic(err)
	}

	var runs []traces.Run // the list, newest first
	if err := getJSON(url+"/api/runs", &runs); err != nil {
		panic(err)
	}
	resp, err := http.Get(url + "/api/runs/" + runs[0].ID + "/trace") // the run as Baton has it
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	tr, err := traces.Unmarshal(data)
	if err != nil {
		panic(err)
	}
	fmt.Println(tr.Run.Flow, tr.Run.Status, len(tr.Events), "events")
	// Output:
	// greeter completed 7 events
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
