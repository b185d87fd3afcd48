package traces

import "encoding/binary"

// ToolResult is where a recording wrote a tool call: the event and the place in it of the call's
// name, id and result. A model input handed as an extension (see Recording.RecordExtending) holds
// the results of the tool calls its agent ran since its last input, each as a tool message: one
// that is such a result, byte for byte, is written as a reference to the call's tool.finished
// rather than again in full, as the result's own message event is. Only Recording.RecordTool
// makes one; the zero ToolResult is none.
type ToolResult struct {
	log                  *logWriter // the log that wrote it: another recording's is none here
	name, callID, result string
	seq                  int // the event's
	off                  int // where its tool call starts in that event
}

// heldBy reports whether m, a message of the event numbered seq of log w, is the result t refers
// to in the very strings of the call (their addresses compared), as a recorder hands them.
func (t *ToolResult) heldBy(w *logWriter, seq int64, m *Message) bool {
	return t.log == w && t.seq < int(seq) && sameString(m.Content, t.result) && sameString(m.ToolCallID, t.callID) &&
		sameString(m.ToolName, t.name) && m.ToolCalls == nil && m.Role == "tool"
}

// is is heldBy for strings of the same bytes anywhere.
func (t *ToolResult) is(w *logWriter, seq int64, m *Message) bool {
	return t.log == w && t.seq < int(seq) && m.Content == t.result && m.ToolCallID == t.callID &&
		m.ToolName == t.name && m.ToolCalls == nil && m.Role == "tool"
}

// appendToolResultRef appends a message that is the result of the tool call the event back events
// before the one written wrote off bytes into it.
func appendToolResultRef(b []byte, back, off int) []byte {
	if back < 0x80 && off < 0x80 { // nearly always: a call of the latest reply, in its event's head
		return append(b, toolResultRef, byte(back), byte(off))
	}
	return appendFarToolResultRef(b, back, off)
}

//go:noinline
func appendFarToolResultRef(b []byte, back, off int) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(append(b, toolResultRef), uint64(back)), uint64(off))
}

// resultsWindow is how many of the results handed with an extension are looked at for a tool
// message that is not the one expected next in the very strings of its call: beyond, it is
// written in full.
const resultsWindow = 16

// appendAdded appends the messages an extension of an input adds, of the event numbered seq: a
// tool message that is one of w.results as where that result is, any other as appendMessageRef
// does. The results are expected in the order the messages hold them (the order of the calls,
// in which eino's tools node answers them, and in which they end when run one after another).
func (w *logWriter) appendAdded(b []byte, seq int64, added []Message) []byte {
	results, next := w.results, 0
	for i := range added {
		m := &added[i]
		if next < len(results) && results[next].heldBy(w, seq, m) {
			b = appendToolResultRef(b, int(seq)-results[next].seq, results[next].off)
			next++
			continue
		}
		b, next = w.appendAddedMessage(b, seq, m, next)
	}
	return b
}

// appendAddedMessage is appendAdded's way for a message that is not the result expected next
// (next) in its very strings: a result of the same bytes (a middleware's copy), or one of those
// around next (calls run at once end in any order), else any message. It returns the result
// expected after it.
func (w *logWriter) appendAddedMessage(b []byte, seq int64, m *Message, next int) ([]byte, int) {
	if n := len(w.results); n > 0 && m.Role == "tool" {
		for k := range min(n, resultsWindow) {
			j := (next + k) % n
			if r := &w.results[j]; r.is(w, seq, m) {
				return appendToolResultRef(b, int(seq)-r.seq, r.off), j + 1
			}
		}
	}
	return w.appendMessageRef(b, seq, m), next
}
