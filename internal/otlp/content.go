package otlp

import (
	"encoding/json"
	"slices"

	"go.opentelemetry.io/otel/attribute"

	"github.com/baton-dev/baton/traces"
)

// The JSON shapes of the GenAI conventions' message attributes (gen_ai.input.messages,
// gen_ai.output.messages, gen_ai.system_instructions): a message is a role and parts.
type (
	chatMessage struct {
		Role         string `json:"role"`
		Parts        []part `json:"parts"`
		FinishReason string `json:"finish_reason,omitempty"`
	}
	part struct {
		Type      string          `json:"type"` // text, tool_call or tool_call_response
		Content   string          `json:"content,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		Response  string          `json:"response,omitempty"`
	}
)

// MaxInputContent bounds the bytes of messages (about their JSON's) an input's span carries: a conversation of n
// calls each fed the history before it would otherwise send, and hold in the export queue, its
// history n times over. Past it a span carries the latest messages that fit (the last one
// always), and baton.input.messages_omitted says how many earlier ones it left out.
const MaxInputContent = 32 << 10

// inputAttrs appends the messages sent to an agent or a model: system messages as
// gen_ai.system_instructions, the others as gen_ai.input.messages, the latest of them within
// MaxInputContent.
func (s *runSpans) inputAttrs(attrs []attribute.KeyValue, msgs []traces.Message) []attribute.KeyValue {
	var system []part
	var rest []traces.Message
	omitted, size := 0, 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		size += 64 + len(m.Content) + len(m.ToolCallID) // with the JSON around them
		for _, c := range m.ToolCalls {
			size += 48 + len(c.ID) + len(c.Name) + len(c.Arguments)
		}
		if size > MaxInputContent && (len(rest) > 0 || len(system) > 0) {
			omitted = i + 1
			break
		}
		if m.Role == "system" {
			system = append(system, part{Type: "text", Content: m.Content})
			continue
		}
		rest = append(rest, m)
	}
	slices.Reverse(system)
	slices.Reverse(rest)
	if len(system) > 0 {
		attrs = append(attrs, attribute.String("gen_ai.system_instructions", marshal(system)))
	}
	if len(rest) > 0 {
		attrs = append(attrs, attribute.String("gen_ai.input.messages", messagesJSON(rest)))
	}
	if omitted > 0 {
		attrs = append(attrs, attribute.Int("baton.input.messages_omitted", omitted))
	}
	return attrs
}

// messagesJSON is msgs in the conventions' input message shape.
func messagesJSON(msgs []traces.Message) string {
	out := make([]chatMessage, len(msgs))
	for i, m := range msgs {
		out[i] = convert(m)
	}
	return marshal(out)
}

// outputJSON is a model's reply in the conventions' output message shape, whose finish reason
// says whether it asks for tools.
func outputJSON(m traces.Message) string {
	c := convert(m)
	c.FinishReason = "stop"
	if len(m.ToolCalls) > 0 {
		c.FinishReason = "tool_call"
	}
	return marshal([]chatMessage{c})
}

func convert(m traces.Message) chatMessage {
	c := chatMessage{Role: m.Role, Parts: []part{}}
	if m.Role == "tool" {
		c.Parts = append(c.Parts, part{Type: "tool_call_response", ID: m.ToolCallID, Response: m.Content})
		return c
	}
	if m.Content != "" {
		c.Parts = append(c.Parts, part{Type: "text", Content: m.Content})
	}
	for _, tc := range m.ToolCalls {
		c.Parts = append(c.Parts, part{Type: "tool_call", ID: tc.ID, Name: tc.Name, Arguments: arguments(tc.Arguments)})
	}
	return c
}

// arguments is a tool call's arguments as the JSON object the conventions want, or as a JSON
// string when the model wrote something else (eino's deterministic transfers write a bare name).
func arguments(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	return json.RawMessage(marshal(s))
}

// marshal encodes values that always encode.
func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "" // unreachable: strings, slices and valid raw JSON
	}
	return string(b)
}
