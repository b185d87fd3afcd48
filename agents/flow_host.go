package agents

import (
	"context"
	"fmt"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/flow/agent"
	"github.com/cloudwego/eino/flow/agent/multiagent/host"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// The host flow's specialists, with what each is for (host.AgentMeta.IntendedUse, which the host
// model is offered as the description of the tool named after the specialist) and the words that
// make the scripted host pick it.
var hostDesks = []struct {
	name, use, answer string
	words             []string
}{
	{"refunds_desk", "Refunds for cancelled or delayed trains.",
		"Your ticket for the cancelled train is refunded in full: 84 EUR, back on your card within 5 days.",
		[]string{"refund", "money back"}},
	{"bookings_desk", "New bookings and changes to existing ones.",
		"You are rebooked on the 14:04 to Lyon, coach 7, seat 42, at no extra cost.",
		[]string{"rebook", "another train", "seat"}},
	{"lost_property_desk", "Items left on trains or in stations.",
		"A blue umbrella was handed in at Lyon Part-Dieu: collect it at the lost property office.",
		[]string{"lost", "forgot", "left my"}},
}

const stationDesc = "eino's host multi-agent: a host model hands each request off to the desks it fits."

func init() {
	f := Flow{
		Name:  "host",
		Title: "eino's host multi-agent: a host model hands requests off to specialists",
		Group: GroupTransfer,
		Plain: "A host reads the request and passes it to one or more specialist desks, which answer side by side.",
		Description: "host.NewMultiAgent (flow/agent/multiagent/host) is a compose graph, run here inside an agent of its own, " +
			"concierge. Its host model is offered one tool per specialist and calls the one (or ones) the request needs: " +
			"each call is a handoff (what host's OnHandOff reports), drawn as an edge, and the specialist, a chat model, " +
			"answers from the user's messages alone (not the host's). Ask for a refund and a rebooking at once and " +
			"both desks answer, side by side.",
		DefaultInput: "My train to Lyon was cancelled. Can I get a refund?",
		InputNote:    "Scripted answers: the host picks each desk whose words you use (" + hostWords() + "), refunds_desk if none. The desks' texts stay the same.",
		Agents:       []traces.Agent{{Name: "concierge", Description: stationDesc, Kind: traces.AgentCustom}},
		Scripts:      map[string]Script{"concierge": NewScript(Computed(pickDesks))},
		Build:        func(ctx context.Context, models ModelFor) (adk.Agent, error) { return buildHost(ctx, models) },
	}
	for _, d := range hostDesks {
		f.Agents[0].Tools = append(f.Agents[0].Tools, d.name)
		f.Agents = append(f.Agents, traces.Agent{Name: d.name, Description: d.use, Kind: traces.AgentChatModel,
			Parent: "concierge", Relation: traces.RelationSubAgent})
		f.Scripts[d.name] = NewScript(Say(d.answer))
	}
	register(f)
}

// hostWords lists the words the scripted host routes on, per desk.
func hostWords() string {
	var parts []string
	for _, d := range hostDesks {
		parts = append(parts, d.name+": "+strings.Join(d.words, ", "))
	}
	return strings.Join(parts, "; ")
}

// pickDesks is the scripted host's decision: a call of each desk whose words the user used, in
// the desks' order, else of refunds_desk.
func pickDesks(input []*schema.Message) Reply {
	text := strings.ToLower(userMessagesText(input))
	var calls []ToolCall
	for _, d := range hostDesks {
		for _, w := range d.words {
			if strings.Contains(text, w) {
				calls = append(calls, Call(d.name, map[string]string{"reason": "the user mentions " + w}))
				break
			}
		}
	}
	if len(calls) == 0 {
		calls = []ToolCall{Call(hostDesks[0].name, map[string]string{"reason": "no desk fits better"})}
	}
	return Reply{ToolCalls: calls}
}

// buildHost builds the host flow anew: host's multi-agent with a specialist per desk, inside the
// concierge agent. opts are host's per-run options, such as host.WithAgentCallbacks.
func buildHost(ctx context.Context, models ModelFor, opts ...agent.AgentOption) (adk.Agent, error) {
	hm, err := models("concierge")
	if err != nil {
		return nil, fmt.Errorf("model for agent concierge: %w", err)
	}
	conf := &host.MultiAgentConfig{Name: "concierge", Host: host.Host{ToolCallingModel: hm,
		SystemPrompt: "You are a station concierge: call the desk (or desks) each request needs."}}
	for _, d := range hostDesks {
		m, err := models(d.name)
		if err != nil {
			return nil, fmt.Errorf("model for agent %s: %w", d.name, err)
		}
		conf.Specialists = append(conf.Specialists, &host.Specialist{
			AgentMeta: host.AgentMeta{Name: d.name, IntendedUse: d.use}, ChatModel: m,
			SystemPrompt: "You are the " + strings.ReplaceAll(d.name, "_", " ") + ". " + d.use})
	}
	ma, err := host.NewMultiAgent(ctx, conf)
	if err != nil {
		return nil, fmt.Errorf("build host multi-agent: %w", err)
	}
	return &hostAgent{name: "concierge", description: stationDesc, ma: ma, opts: opts}, nil
}

// hostAgent runs eino's host multi-agent, a compose graph, as an ADK agent: its one event is the
// multi-agent's answer (streamed when the run streams). Its graph's models run in its context, so
// callbacks see them inside this agent.
type hostAgent struct {
	name, description string
	ma                *host.MultiAgent
	opts              []agent.AgentOption
}

func (a *hostAgent) Name(context.Context) string        { return a.name }
func (a *hostAgent) Description(context.Context) string { return a.description }

// Run answers in with the multi-agent's reply; a failure is the event's error.
func (a *hostAgent) Run(ctx context.Context, in *adk.AgentInput, _ ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	it, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
	go func() {
		defer gen.Close()
		var ev *adk.AgentEvent
		if in.EnableStreaming {
			s, err := a.ma.Stream(ctx, in.Messages, a.opts...)
			ev = adk.EventFromMessage(nil, s, schema.Assistant, "")
			if err != nil {
				ev = &adk.AgentEvent{Err: err}
			}
		} else {
			msg, err := a.ma.Generate(ctx, in.Messages, a.opts...)
			ev = adk.EventFromMessage(msg, nil, schema.Assistant, "")
			if err != nil {
				ev = &adk.AgentEvent{Err: err}
			}
		}
		gen.Send(ev)
	}()
	return it
}
