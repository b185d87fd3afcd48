package agents

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// Agent descriptions of the agenttool-silent flow.
const (
	tripPlannerDesc = "Plans trips, calling the flight and hotel agents as tools."
	flightDesc      = "Finds flights."
	hotelDesc       = "Finds hotels."
)

func init() {
	register(Flow{
		Name:  "agenttool-silent",
		Title: "AgentTool with its inner events kept off the stream",
		Group: GroupAgentTool,
		Plain: "Agents called as tools whose inner steps the event stream leaves out; Baton still shows them.",
		Description: "trip_planner calls flight_agent and hotel_agent as tools (adk.NewAgentTool) with " +
			"ToolsConfig.EmitInternalEvents off, eino's default: the Runner's stream shows only the planner's calls " +
			"and their results, none of the callees' own events. Baton records from callbacks, which still fire, so " +
			"the page shows the same AgentTool frames as in the agenttool flow, with each callee's model and tool " +
			"calls inside.",
		DefaultInput: "Plan a weekend in Lisbon from Berlin, 14-16 March",
		InputNote:    fixedAnswers,
		Agents: []traces.Agent{
			{Name: "trip_planner", Description: tripPlannerDesc, Kind: traces.AgentChatModel,
				Tools: []string{"flight_agent", "hotel_agent"}},
			{Name: "flight_agent", Description: flightDesc, Kind: traces.AgentChatModel, Parent: "trip_planner",
				Relation: traces.RelationAgentTool, Tools: []string{"search_flights"}},
			{Name: "hotel_agent", Description: hotelDesc, Kind: traces.AgentChatModel, Parent: "trip_planner",
				Relation: traces.RelationAgentTool, Tools: []string{"search_hotels"}},
		},
		Scripts: map[string]Script{
			"trip_planner": NewScript(
				Do(Ask("flight_agent", "Return flights Berlin-Lisbon, out 14 March, back 16 March.")),
				Do(Ask("hotel_agent", "A central hotel in Lisbon for 14-16 March.")),
				Computed(func(input []*schema.Message) Reply {
					return Reply{Text: "Your weekend: " + toolResults(input)}
				}),
			),
			"flight_agent": NewScript(
				Do(Call("search_flights", tripArg{From: "Berlin", To: "Lisbon", Out: "14 March", Back: "16 March"})),
				QuoteToolResult("Best option: %s"),
			),
			"hotel_agent": NewScript(
				Do(Call("search_hotels", stayArg{City: "Lisbon", Nights: 2})),
				QuoteToolResult("Best option: %s"),
			),
		},
		Build: buildAgentToolSilent,
	})
}

// buildAgentToolSilent builds the agenttool-silent flow anew.
func buildAgentToolSilent(ctx context.Context, models ModelFor) (adk.Agent, error) {
	var ft, ht toolBox
	addTool(&ft, "search_flights", "Search return flights.", searchFlights)
	addTool(&ht, "search_hotels", "Search hotels.", searchHotels)
	if err := errors.Join(ft.err, ht.err); err != nil {
		return nil, err
	}
	built, err := newChatAgents(ctx, models, adk.ChatModelAgentConfig{
		Name: "flight_agent", Description: flightDesc, ToolsConfig: ft.toolsConfig(),
		Instruction: "You find the best return flight with search_flights.",
	}, adk.ChatModelAgentConfig{
		Name: "hotel_agent", Description: hotelDesc, ToolsConfig: ht.toolsConfig(),
		Instruction: "You find the best central hotel with search_hotels.",
	})
	if err != nil {
		return nil, err
	}
	flight, hotel := built[0], built[1]
	var conf adk.ToolsConfig
	conf.Tools = []tool.BaseTool{adk.NewAgentTool(ctx, flight), adk.NewAgentTool(ctx, hotel)}
	conf.ExecuteSequentially = true // EmitInternalEvents stays off: the callees' events stay off the stream
	return NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name: "trip_planner", Description: tripPlannerDesc, ToolsConfig: conf,
		Instruction: "You plan trips: ask flight_agent for flights and hotel_agent for a hotel, then sum up.",
	})
}

// tripArg is search_flights's argument.
type tripArg struct {
	From string `json:"from" jsonschema:"description=departure city"`
	To   string `json:"to" jsonschema:"description=destination city"`
	Out  string `json:"out" jsonschema:"description=outbound date"`
	Back string `json:"back" jsonschema:"description=return date"`
}

// searchFlights answers a canned flight.
func searchFlights(_ context.Context, in tripArg) (string, error) {
	return fmt.Sprintf("%s-%s %s 07:05, back %s 19:40, €186 return.", in.From, in.To, in.Out, in.Back), nil
}

// stayArg is search_hotels's argument.
type stayArg struct {
	City   string `json:"city" jsonschema:"description=the city"`
	Nights int    `json:"nights" jsonschema:"description=how many nights"`
}

// searchHotels answers a canned hotel.
func searchHotels(_ context.Context, in stayArg) (string, error) {
	return fmt.Sprintf("Casa do Largo, Alfama, %d nights, €142 a night.", in.Nights), nil
}

// toolResults joins the contents of the tool messages of input: a caller summing up what its
// tools said.
func toolResults(input []*schema.Message) string {
	var out []string
	for _, m := range input {
		if m != nil && m.Role == schema.Tool {
			out = append(out, m.Content)
		}
	}
	return strings.Join(out, " ")
}
