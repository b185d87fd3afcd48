package agents

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// Agents of the transfer-skip and transfer-rewriter flows: reception looks the guest's booking up
// and transfers to housekeeping, which has to find the room number in what it is fed.
const (
	receptionDesc    = "Greets guests, finds their booking and transfers them to the right service."
	housekeepingDesc = "Schedules room cleaning."
	hotelInput       = "Hi, I'm Ana Lima. Could my room be cleaned at 2 pm?"
)

// hotelAgents is the tree of the transfer-skip and transfer-rewriter flows.
var hotelAgents = []traces.Agent{
	{Name: "reception", Description: receptionDesc, Kind: traces.AgentChatModel, Tools: []string{"find_booking", "transfer_to_agent"}},
	{Name: "housekeeping", Description: housekeepingDesc, Kind: traces.AgentChatModel, Parent: "reception",
		Relation: traces.RelationSubAgent, Tools: []string{"schedule_cleaning", "transfer_to_agent"}},
}

// hotelScripts are the scripts of the transfer-skip and transfer-rewriter flows.
var hotelScripts = map[string]Script{
	"reception": NewScript(
		SayAndDo("Welcome! Let me find your booking.", Call("find_booking", guestArg{Guest: "Ana Lima"})),
		SayAndDo("You are in room 412; housekeeping will take it from here.", Transfer("housekeeping")),
	),
	"housekeeping": NewScript(
		Computed(scheduleForRoom),
		QuoteToolResult("Done: %s"),
	),
}

func init() {
	register(Flow{
		Name:  "transfer-skip",
		Title: "Transfer run with WithSkipTransferMessages: the hand-off leaves no trace in the history",
		Group: GroupTransfer,
		Plain: "A handoff that leaves no trace in the conversation: the next agent never sees the handoff, nor what was said with it.",
		Description: "reception transfers to housekeeping (adk.SetSubAgents), in a run started with the run option " +
			"adk.WithSkipTransferMessages(). housekeeping is still fed reception's other messages as \"For " +
			"context:\", but not the transfer: neither the transfer_to_agent call and its result, nor the text " +
			"reception wrote in the same message (\"You are in room 412...\"). housekeeping finds the room in the " +
			"booking lookup instead. Compare housekeeping's input with the transfer flow's.",
		DefaultInput: hotelInput,
		InputNote:    fixedAnswers,
		Agents:       hotelAgents,
		Scripts:      hotelScripts,
		Build:        func(ctx context.Context, models ModelFor) (adk.Agent, error) { return buildHotel(ctx, models) },
		RunOptions:   []adk.AgentRunOption{adk.WithSkipTransferMessages()},
		OwnHistory:   "the run drops the transfer messages from the history (adk.WithSkipTransferMessages)",
	})
}

// buildHotel builds reception with housekeeping as its sub-agent, housekeeping with opts.
func buildHotel(ctx context.Context, models ModelFor, opts ...adk.AgentOption) (adk.Agent, error) {
	var rt, ht toolBox
	addTool(&rt, "find_booking", "Find a guest's booking.", findBooking)
	addTool(&ht, "schedule_cleaning", "Schedule the cleaning of a room.", scheduleCleaning)
	if err := errors.Join(rt.err, ht.err); err != nil {
		return nil, err
	}
	built, err := newChatAgents(ctx, models, adk.ChatModelAgentConfig{
		Name: "reception", Description: receptionDesc, ToolsConfig: rt.toolsConfig(),
		Instruction: "You greet guests, find their booking with find_booking and transfer them to the right service.",
	}, adk.ChatModelAgentConfig{
		Name: "housekeeping", Description: housekeepingDesc, ToolsConfig: ht.toolsConfig(),
		Instruction: "You schedule room cleaning with schedule_cleaning, for the guest's room.",
	})
	if err != nil {
		return nil, err
	}
	reception, housekeeping := built[0], built[1]
	root, err := adk.SetSubAgents(ctx, reception, []adk.Agent{adk.AgentWithOptions(ctx, housekeeping, opts...)})
	if err != nil {
		return nil, fmt.Errorf("set sub-agents of reception: %w", err)
	}
	return root, nil
}

// guestArg is find_booking's argument.
type guestArg struct {
	Guest string `json:"guest" jsonschema:"description=the guest's name"`
}

// findBooking answers a canned booking.
func findBooking(_ context.Context, in guestArg) (string, error) {
	return fmt.Sprintf("Booking B-2291: %s, room 412, 3 nights from 14 March.", in.Guest), nil
}

// roomArg is schedule_cleaning's argument.
type roomArg struct {
	Room string `json:"room" jsonschema:"description=the room number"`
	At   string `json:"at" jsonschema:"description=the time, e.g. 14:00"`
}

// scheduleCleaning "schedules" the cleaning.
func scheduleCleaning(_ context.Context, in roomArg) (string, error) {
	if in.Room == "" {
		return "", errors.New("schedule_cleaning: no room given")
	}
	return fmt.Sprintf("room %s will be cleaned at %s.", in.Room, in.At), nil
}

// roomNumber finds "room NNN" in a text.
var roomNumber = regexp.MustCompile(`(?i)\broom (\d+)`)

// scheduleForRoom is housekeeping's first move: schedule the room named in the messages it was
// fed (the first mention wins), or ask for it.
func scheduleForRoom(input []*schema.Message) Reply {
	for _, m := range input {
		if m.Role == schema.System {
			continue
		}
		if room := roomNumber.FindStringSubmatch(m.Content); room != nil {
			return Reply{ToolCalls: []ToolCall{Call("schedule_cleaning", roomArg{Room: room[1], At: "14:00"})}}
		}
	}
	return Reply{Text: "Which room are you in? I was only told: " + strings.TrimSpace(firstUserText(input))}
}
