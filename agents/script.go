package agents

import (
	"fmt"
	"strings"

	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/flows"
)

// Script is one agent's part in a scripted run: the replies its scripted model gives, one Step per
// model call, in order. When the steps run out the model answers Exhausted (or a default text), so
// a run that asks more than the script foresaw still ends instead of hanging.
//
// A Script is plain data and is never modified by the model, so one value may back many models
// (one per run) at once.
type Script struct {
	Steps []Step
	// Exhausted is the text replied once every step is used; empty means a default that names the
	// agent.
	Exhausted string
}

// NewScript returns a script of steps, in order.
func NewScript(steps ...Step) Script { return Script{Steps: steps} }

// Step is what the model answers to one call. The first of these that is set decides the reply:
// Func, then the first Rule whose words occur in the input, then Reply.
type Step struct {
	// Reply is the answer when no rule matches (or there are none).
	Reply Reply
	// Rules route on the user's input: the first rule with a matching word wins.
	Rules []Rule
	// Func computes the reply from the model's input messages; use it only when rules cannot say
	// it (for example to quote a tool's result). It must not modify the messages.
	Func func(input []*schema.Message) Reply
}

// Rule picks Reply when any of Words occurs, case-insensitively, in a user message of the model's
// input. The system prompt is not searched, so an agent's own instruction never matches; note that
// eino hands a transferred-to agent the other agents' messages as user messages ("For context:
// ..."), so those are searched too.
type Rule struct {
	Words []string
	Reply Reply
}

// Reply is one assistant message: text, tool calls, or both (the type a registered flow's
// script is written in).
type Reply = flows.Reply

// ToolCall is one call the model asks for: the tool's name and its arguments as JSON text.
type ToolCall = flows.ToolCall

// Say is a step that answers text.
func Say(text string) Step { return Step{Reply: Reply{Text: text}} }

// Do is a step that calls tools, in order, in one assistant message.
func Do(calls ...ToolCall) Step { return Step{Reply: Reply{ToolCalls: calls}} }

// SayAndDo is a step whose message has both text (a thought shown to the user) and tool calls.
func SayAndDo(text string, calls ...ToolCall) Step {
	return Step{Reply: Reply{Text: text, ToolCalls: calls}}
}

// Route is a step that answers the first matching rule's reply, else otherwise.
func Route(otherwise Reply, rules ...Rule) Step { return Step{Reply: otherwise, Rules: rules} }

// When is a Rule: reply when any of words occurs in the user's input.
func When(reply Reply, words ...string) Rule { return Rule{Words: words, Reply: reply} }

// Computed is a step whose reply f computes from the model's input.
func Computed(f func(input []*schema.Message) Reply) Step { return Step{Func: f} }

// QuoteToolResult is a step that answers format with its %s replaced by the content of the
// newest tool message in the input (empty if there is none): an agent "reading" its tool's answer.
func QuoteToolResult(format string) Step {
	return Computed(func(input []*schema.Message) Reply {
		return Reply{Text: fmt.Sprintf(format, LastToolResult(input))}
	})
}

// LastToolResult returns the content of the newest tool message in input, or "".
func LastToolResult(input []*schema.Message) string {
	for i := len(input) - 1; i >= 0; i-- {
		if input[i] != nil && input[i].Role == schema.Tool {
			return input[i].Content
		}
	}
	return ""
}

// Call is a tool call of name; see flows.Call.
func Call(name string, args any) ToolCall { return flows.Call(name, args) }

// Transfer is the call of eino's transfer_to_agent tool, which SetSubAgents gives a parent and its
// children.
func Transfer(agent string) ToolCall { return flows.Transfer(agent) }

// Ask is the call of an agent wrapped with adk.NewAgentTool: the tool is named after the agent
// and takes {"request": ...}.
func Ask(agent, request string) ToolCall {
	return Call(agent, map[string]string{"request": request})
}

// Exit is the call of eino's exit tool (adk.ExitTool), which ends the agent with final_result.
func Exit(finalResult string) ToolCall {
	return Call("exit", map[string]string{"final_result": finalResult})
}

// reply resolves step s for input.
func (s Step) reply(input []*schema.Message) Reply {
	if s.Func != nil {
		return s.Func(input)
	}
	if len(s.Rules) > 0 {
		text := strings.ToLower(userMessagesText(input))
		for _, r := range s.Rules {
			for _, w := range r.Words {
				if w != "" && strings.Contains(text, strings.ToLower(w)) {
					return r.Reply
				}
			}
		}
	}
	return s.Reply
}

// userMessagesText joins the content of the user messages of input.
func userMessagesText(input []*schema.Message) string {
	var b strings.Builder
	for _, m := range input {
		if m != nil && m.Role == schema.User {
			b.WriteString(m.Content)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
