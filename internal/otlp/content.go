package otlp

import (
	"encoding/json"

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

// inputAttrs appends the messages sent to an agent or a model: system messages as
// gen_ai.system_instructions, the others as gen_ai.input.messages.
func (s *runSpans) inputAttrs(attrs []attribute.KeyValue, msgs []traces.Message) []attribute.KeyValue {
	var system []part
	var rest []traces.Message
	for _, m := range msgs {
		if m.Role == "system" {
			system = append(system, part{Type: "text", Content: m.Content})
			continue
		}
		rest = append(rest, m)
	}
	if len(system) > 0 {
		attrs = append(attrs, attribute.String("gen_ai.system_instructions", marshal(system)))
	}
	if len(rest) > 0 {
		attrs = append(attrs, attribute.String("gen_ai.input.messages", messagesJSON(rest)))
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
