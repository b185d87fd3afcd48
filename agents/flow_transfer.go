package agents

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// Agent descriptions of the transfer flow.
const (
	routerDesc  = "Reads each request and transfers it to the agent that can handle it."
	weatherDesc = "Answers questions about the weather: forecasts, temperature, rain, wind."
	chatDesc    = "Small talk: jokes and general-knowledge facts."
)

// weatherWords are what make the router pick weather_agent (case-insensitive).
var weatherWords = []string{"weather", "temperature", "forecast", "rain"}

func init() {
	register(Flow{
		Name:  "transfer",
		Title: "Transfer: a router picks a specialist",
		Group: GroupTransfer,
		Plain: "A router reads the request and hands it to the one specialist who should answer it.",
		Description: "A router ChatModelAgent with adk.SetSubAgents(router, weather_agent, chat_agent). eino gives " +
			"the router (and each child, to go back) a transfer_to_agent tool and lists the other agents in its " +
			"system prompt; the router's model chooses where the request goes, and the chosen agent answers " +
			"with its own tool. The child sees the router's messages as \"For context:\" user messages.",
		DefaultInput: "What's the weather in Paris tomorrow?",
		InputNote:    "Scripted answers: the router picks weather_agent when you mention the weather (" + strings.Join(weatherWords, ", ") + "), else chat_agent; weather_agent knows " + strings.Join(weatherCities, ", ") + ". The texts stay the same.",
		Agents: []traces.Agent{
			{Name: "router", Description: routerDesc, Kind: traces.AgentChatModel, Tools: []string{"transfer_to_agent"}},
			{Name: "weather_agent", Description: weatherDesc, Kind: traces.AgentChatModel, Parent: "router",
				Relation: traces.RelationSubAgent, Tools: []string{"get_weather", "transfer_to_agent"}},
			{Name: "chat_agent", Description: chatDesc, Kind: traces.AgentChatModel, Parent: "router",
				Relation: traces.RelationSubAgent, Tools: []string{"tell_joke", "lookup_fact", "transfer_to_agent"}},
		},
		Scripts: map[string]Script{
			"router": NewScript(
				Route(Reply{ToolCalls: []ToolCall{Transfer("chat_agent")}},
					When(Reply{ToolCalls: []ToolCall{Transfer("weather_agent")}}, weatherWords...)),
			),
			"weather_agent": NewScript(
				weatherLookupStep(),
				QuoteToolResult("Here's the forecast: %s"),
			),
			"chat_agent": NewScript(
				Computed(chatToolCall),
				QuoteToolResult("%s"),
			),
		},
		Build: buildTransfer,
	})
}

// buildTransfer builds the transfer flow anew.
func buildTransfer(ctx context.Context, models ModelFor) (adk.Agent, error) {
	router, err := NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name:        "router",
		Description: routerDesc,
		Instruction: "You are a router. Do not answer the user yourself: transfer every request to the agent best suited to it.",
	})
	if err != nil {
		return nil, err
	}
	var weatherTools toolBox
	addTool(&weatherTools, "get_weather", "Get the weather forecast for a city.", getWeather)
	var chatTools toolBox
	addTool(&chatTools, "tell_joke", "Tell a short joke about a topic.", tellJoke)
	addTool(&chatTools, "lookup_fact", "Look up a general-knowledge fact.", lookupFact)
	if err := errors.Join(weatherTools.err, chatTools.err); err != nil {
		return nil, err
	}
	weather, err := NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name:        "weather_agent",
		Description: weatherDesc,
		Instruction: "You answer weather questions. Always call get_weather for the city the user asks about.",
		ToolsConfig: weatherTools.toolsConfig(),
	})
	if err != nil {
		return nil, err
	}
	chat, err := NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name:        "chat_agent",
		Description: chatDesc,
		Instruction: "You make small talk. Use tell_joke for jokes and lookup_fact for questions of fact.",
		ToolsConfig: chatTools.toolsConfig(),
	})
	if err != nil {
		return nil, err
	}
	root, err := adk.SetSubAgents(ctx, router, []adk.Agent{weather, chat})
	if err != nil {
		return nil, fmt.Errorf("set sub-agents of router: %w", err)
	}
	return root, nil
}

// forecasts is get_weather's canned data, by lower-case city.
var forecasts = map[string]string{
	"paris":    "Paris, tomorrow: 17°C, cloudy with light rain after 14:00, wind 12 km/h from the west.",
	"london":   "London, tomorrow: 14°C, overcast, showers in the morning, wind 20 km/h from the south-west.",
	"tokyo":    "Tokyo, tomorrow: 24°C, sunny, humidity 60%, light breeze.",
	"new york": "New York, tomorrow: 21°C, clear skies, wind 8 km/h from the north.",
	"berlin":   "Berlin, tomorrow: 15°C, partly cloudy, 20% chance of rain.",
}

// weatherCities are forecasts' cities in the order the weather script looks for them.
var weatherCities = []string{"Paris", "London", "Tokyo", "New York", "Berlin"}

// weatherLookupStep calls get_weather for the first known city the user names; with none it
// says so and checks Paris.
func weatherLookupStep() Step {
	rules := make([]Rule, len(weatherCities))
	for i, city := range weatherCities {
		rules[i] = When(Reply{ToolCalls: []ToolCall{Call("get_weather", cityArg{City: city})}}, city)
	}
	otherwise := Reply{Text: "You didn't name a city I know, so I'll check Paris.",
		ToolCalls: []ToolCall{Call("get_weather", cityArg{City: "Paris"})}}
	return Route(otherwise, rules...)
}

// cityArg is get_weather's argument.
type cityArg struct {
	City string `json:"city" jsonschema:"description=the city, e.g. Paris"`
}

// getWeather answers from forecasts.
func getWeather(_ context.Context, in cityArg) (string, error) {
	if f, ok := forecasts[strings.ToLower(strings.TrimSpace(in.City))]; ok {
		return f, nil
	}
	return fmt.Sprintf("No forecast available for %q.", in.City), nil
}

// topicArg is the argument of chat_agent's tools.
type topicArg struct {
	Topic string `json:"topic" jsonschema:"description=what the joke or fact is about"`
}

// jokes is tell_joke's collection: the first whose key occurs in the topic; the last is the
// one told when none does.
var jokes = []struct{ key, joke string }{
	{"cat", "Why did the cat sit on the computer? To keep an eye on the mouse."},
	{"dog", "Why did the dog sit in the shade? It didn't want to be a hot dog."},
	{"coffee", "How does a coffee feel after a long day? Depresso."},
	{"math", "Why was six afraid of seven? Because seven eight nine."},
	{"weather", "What did one cloud say to the other? You're on cloud nine, I'm just overcast."},
	{"", "Why do programmers prefer dark mode? Because light attracts bugs."},
}

// tellJoke tells the joke about the topic, or its default one.
func tellJoke(_ context.Context, in topicArg) (string, error) {
	topic := strings.ToLower(in.Topic)
	for _, j := range jokes[:len(jokes)-1] {
		if strings.Contains(topic, j.key) {
			return j.joke, nil
		}
	}
	return jokes[len(jokes)-1].joke, nil
}

// facts is lookup_fact's canned encyclopedia: the first entry whose key occurs in the topic.
var facts = []struct{ key, fact string }{
	{"eiffel", "The Eiffel Tower is about 330 m tall and grows by up to 15 cm in summer heat."},
	{"moon", "The Moon moves about 3.8 cm farther from Earth every year."},
	{"octopus", "An octopus has three hearts and blue blood."},
	{"honey", "Honey never spoils: edible honey has been found in 3,000-year-old Egyptian tombs."},
}

// lookupFact answers from facts.
func lookupFact(_ context.Context, in topicArg) (string, error) {
	topic := strings.ToLower(in.Topic)
	for _, f := range facts {
		if strings.Contains(topic, f.key) {
			return f.fact, nil
		}
	}
	return "Here is one anyway: " + facts[len(facts)-1].fact, nil
}

// chatToolCall is chat_agent's first move: a joke when asked for one, else a fact lookup with the
// user's question as the topic, as a model would pass it on.
func chatToolCall(input []*schema.Message) Reply {
	question := firstUserText(input)
	lower := strings.ToLower(question)
	if strings.Contains(lower, "joke") || strings.Contains(lower, "funny") {
		return Reply{ToolCalls: []ToolCall{Call("tell_joke", topicArg{Topic: question})}}
	}
	return Reply{ToolCalls: []ToolCall{Call("lookup_fact", topicArg{Topic: question})}}
}

// firstUserText is the content of the first user message: the user's own request (later user
// messages are eino's "For context:" rewrites of other agents' turns).
func firstUserText(input []*schema.Message) string {
	for _, m := range input {
		if m != nil && m.Role == schema.User {
			return m.Content
		}
	}
	return ""
}
