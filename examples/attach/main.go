// Command attach is an eino app that records its runs in Baton. It is a small travel desk: a
// concierge asks weather_agent (an agent used as a tool) for the forecast, then hands the trip
// to booking_agent, which books a hotel. Canned replies stand in for an LLM, so it runs with no
// key. The line that attaches it is marked below.
//
//	go run . serve                  # in one terminal: Baton
//	go run ./examples/attach        # in another: the app; its run appears live in Baton
//	go run ./examples/attach -inprocess   # or: serve the page from inside the app
//	go run ./examples/attach -dir traces  # or: write the trace to a file (baton open FILE)
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/attach/inprocess"
)

func main() {
	inProcess := flag.Bool("inprocess", false, "serve Baton's page from inside the app")
	dir := flag.String("dir", "", "write the run's trace into this folder instead of streaming it")
	flag.Parse()
	ctx := context.Background()

	b := attach.New(attach.Config{Dir: *dir}) // streams to $BATON_URL, by default http://127.0.0.1:7070
	if *inProcess {
		var err error
		if b, err = inprocess.Start(ctx); err != nil {
			log.Fatal(err)
		}
	}
	runner, err := travelDesk(ctx)
	if err != nil {
		log.Fatal(err)
	}
	events := runner.Query(ctx, "Book me two nights in Lisbon next weekend.", b.Option()) // <- the one line
	for {
		ev, ok := events.Next()
		if !ok {
			break
		}
		if ev.Err != nil {
			log.Fatal(ev.Err)
		}
		if msg, _, err := adk.GetMessage(ev); err == nil && msg.Content != "" {
			fmt.Printf("%s: %s\n", ev.AgentName, msg.Content)
		}
	}
	if *inProcess {
		fmt.Println("the page stays up for a minute; press Ctrl-C to stop")
		time.Sleep(time.Minute)
	}
}

// travelDesk builds the app's agents.
func travelDesk(ctx context.Context) (*adk.Runner, error) {
	forecast, err := utils.InferTool("forecast", "Tells the weather of a city.",
		func(_ context.Context, in struct {
			City string `json:"city"`
		}) (string, error) {
			return in.City + ": sunny, 24°C on Saturday and Sunday", nil
		})
	if err != nil {
		return nil, err
	}
	book, err := utils.InferTool("book_hotel", "Books a hotel.",
		func(ctx context.Context, in struct {
			City   string `json:"city"`
			Nights int    `json:"nights"`
		}) (string, error) {
			adk.AddSessionValue(ctx, "booking_ref", "LIS-2207")
			return fmt.Sprintf("booked %d nights in %s, reference LIS-2207", in.Nights, in.City), nil
		})
	if err != nil {
		return nil, err
	}
	weather, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "weather_agent", Description: "Knows the weather.", Instruction: "Give the forecast.",
		Model: canned(
			call("forecast", `{"city":"Lisbon"}`),
			say("Sunny and 24°C all weekend in Lisbon."),
		),
		ToolsConfig: toolsOf(forecast),
	})
	if err != nil {
		return nil, err
	}
	booking, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "booking_agent", Description: "Books hotels.", Instruction: "Book what the traveller asks.",
		Model: canned(
			call("book_hotel", `{"city":"Lisbon","nights":2}`),
			say("Booked: two nights in Lisbon, reference LIS-2207. Enjoy the sun!"),
		),
		ToolsConfig: toolsOf(book),
		OutputKey:   "booking",
	})
	if err != nil {
		return nil, err
	}
	concierge, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "concierge", Description: "Plans trips.", Instruction: "Plan the trip, then hand it to the right agent.",
		Model: canned(
			call("weather_agent", `{"request":"Weather in Lisbon next weekend?"}`),
			call("transfer_to_agent", `{"agent_name":"booking_agent"}`),
		),
		ToolsConfig: toolsOf(adk.NewAgentTool(ctx, weather)),
	})
	if err != nil {
		return nil, err
	}
	root, err := adk.SetSubAgents(ctx, concierge, []adk.Agent{booking})
	if err != nil {
		return nil, err
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root}), nil
}

func toolsOf(tools ...tool.BaseTool) adk.ToolsConfig {
	return adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: tools}}
}

// cannedModel answers with its replies in turn: the app's stand-in for an LLM.
type cannedModel struct {
	replies []*schema.Message
	next    int
}

func canned(replies ...*schema.Message) model.ToolCallingChatModel {
	return &cannedModel{replies: replies}
}

func say(text string) *schema.Message { return schema.AssistantMessage(text, nil) }

func call(name, args string) *schema.Message {
	return schema.AssistantMessage("", []schema.ToolCall{{ID: fmt.Sprintf("call_%s_%d", name, time.Now().UnixNano()), Type: "function",
		Function: schema.FunctionCall{Name: name, Arguments: args}}})
}

func (m *cannedModel) Generate(context.Context, []*schema.Message, ...model.Option) (*schema.Message, error) {
	if m.next >= len(m.replies) {
		return say("That is all."), nil
	}
	m.next++
	return m.replies[m.next-1], nil
}

func (m *cannedModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m *cannedModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return m, nil
}
