package traces

import (
	"unicode"
	"unicode/utf8"
)

// Limits of what a trace may hold, the same for a file read, a trace imported and a run an app
// streams, so that no input of a few megabytes costs a reader more than a bounded amount of
// memory and work (docs/trace-format.md, "Limits").
const (
	// MaxIDLen bounds run.id and run.conversation: ids go into URLs and response headers.
	MaxIDLen = 128
	// MaxNameLen bounds run.flow, run.model and agent names: they go into headers, the tree and
	// every row that names an agent.
	MaxNameLen = 256
	// MaxAgents bounds a run's agent tree: the page lays out and the report renders every agent.
	MaxAgents = 2000
	// MaxExpandedInput bounds what resolving a run's input references allocates, summed over its
	// events: the messages of each input that no earlier input shares, at InputSize, and the
	// arrays of messages copied, at messageShare a message. An input that extends the newest
	// input it refers to shares that input's messages, as a recording's inputs do, so a growing
	// conversation costs its new messages alone; one that branches off an earlier input copies
	// what it keeps. Readers share inputs rather than write them out whole (the events socket
	// and a trace file send references, the report and the page show one input at a time), so
	// this bounds the memory every reader spends on inputs. A trace may also allocate no more
	// than ExpandPerByte times its own size, past the first MinExpandBudget bytes.
	MaxExpandedInput = 128 << 20
	ExpandPerByte    = 512
	MinExpandBudget  = 16 << 20
)

// expandBudget is how much resolving the inputs of n bytes of trace may allocate:
// MinExpandBudget, plus ExpandPerByte for each byte, at most MaxExpandedInput.
func expandBudget(n int64) int64 {
	return min(MaxExpandedInput, MinExpandBudget+ExpandPerByte*n)
}

// InputSize is what new messages count against MaxExpandedInput: their strings, messageShare for
// each message and 48 bytes for each tool call.
func InputSize(in []Message) int64 {
	var n int64
	for i := range in {
		n += messageSize(&in[i])
	}
	return n
}

func messageSize(m *Message) int64 {
	n := int64(messageShare + len(m.Role) + len(m.Content) + len(m.ToolCallID) + len(m.ToolName))
	for _, c := range m.ToolCalls {
		n += int64(48 + len(c.ID) + len(c.Name) + len(c.Arguments))
	}
	return n
}

// validateRunID checks a run id: 1 to MaxIDLen letters, digits, '.', '_', '-' or ':', which
// travel in a URL path and a header as they are. Problems are *Errors with CodeInvalid naming
// field (such as "run.id").
func validateRunID(field, id string) error {
	switch {
	case id == "":
		return Errorf(CodeInvalid, "%s is empty", field)
	case len(id) > MaxIDLen:
		return Errorf(CodeInvalid, "%s is %d bytes long: keep it to %d", field, len(id), MaxIDLen)
	}
	for _, r := range id {
		if !idChar(r) {
			return Errorf(CodeInvalid, "%s %q holds %q: use only letters, digits and . _ - :", field, id, r)
		}
	}
	return nil
}

func idChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		r == '.' || r == '_' || r == '-' || r == ':'
}

// validateName checks a name (a flow, a model, an agent): at most max bytes of UTF-8 text with no
// control characters, so that it shows on one line as written. Problems name field.
func validateName(field, name string, max int) error {
	if len(name) > max {
		return Errorf(CodeInvalid, "%s is %d bytes long: keep it to %d", field, len(name), max)
	}
	if !utf8.ValidString(name) {
		return Errorf(CodeInvalid, "%s is not valid UTF-8", field)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return Errorf(CodeInvalid, "%s %q holds the control character %U: a name is one line of text", field, name, r)
		}
	}
	return nil
}

// ValidateRunInfo checks what an app says of its run when it starts streaming it, as a trace's
// run is checked: its flow and model are names, its conversation an id when it has one.
func ValidateRunInfo(flow, model, conversation string) error {
	if err := validateName("run.flow", flow, MaxNameLen); err != nil {
		return err
	}
	if err := validateName("run.model", model, 2*MaxNameLen); err != nil {
		return err
	}
	if conversation != "" {
		return validateRunID("run.conversation", conversation)
	}
	return nil
}
