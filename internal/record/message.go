package record

import (
	"slices"
	"unsafe"

	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/internal/grow"
	"github.com/baton-dev/baton/traces"
)

// traceMessage converts an eino message to the trace's form. It reads the message and never keeps it.
func traceMessage(m *schema.Message) traces.Message {
	var out traces.Message
	if m != nil {
		var calls []traces.ToolCallSpec
		if len(m.ToolCalls) > 0 {
			calls = make([]traces.ToolCallSpec, len(m.ToolCalls))
		}
		fillTraceMessage(&out, m, calls)
	}
	return out
}

// fillTraceMessage writes the trace form of m, not nil, into out, its tool calls into calls (as
// many), field by field: a message or call built aside and then assigned is copied twice.
func fillTraceMessage(out *traces.Message, m *schema.Message, calls []traces.ToolCallSpec) {
	out.Role, out.Content, out.ToolCallID, out.ToolName, out.ToolCalls = string(m.Role), m.Content, m.ToolCallID, m.ToolName, calls
	for i := range calls {
		fillTraceCall(&calls[i], &m.ToolCalls[i])
	}
}

// fillTraceCall writes the trace form of an eino tool call into c.
func fillTraceCall(c *traces.ToolCallSpec, tc *schema.ToolCall) {
	c.ID, c.Name, c.Arguments = tc.ID, tc.Function.Name, tc.Function.Arguments
}

func traceMessages(ms []*schema.Message) []traces.Message {
	if len(ms) == 0 {
		return nil
	}
	out := make([]traces.Message, len(ms))
	for i, m := range ms {
		out[i] = traceMessage(m)
	}
	return out
}

func traceUsage(m *schema.Message) *traces.Usage {
	if m == nil || m.ResponseMeta == nil || m.ResponseMeta.Usage == nil {
		return nil
	}
	u := m.ResponseMeta.Usage
	return &traces.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
}

// streamedMessage accumulates a model's streamed reply from copies of its chunks. It copies
// Content, ToolCalls and usage rather than concatenating chunks, because eino writes into the
// first chunk after handing it to callbacks. A reply to be recorded (traceCalls) joins its tool
// calls in their trace form, in specs, where any other joins them as eino's, in toolCalls: the
// recorder would only convert them, and eino's form is twice the size.
type streamedMessage struct {
	role       schema.RoleType
	content    []byte
	toolCallID string // a tool message's: the last a chunk carried
	toolName   string
	traceCalls bool
	toolCalls  []schema.ToolCall
	specs      []traces.ToolCallSpec
	usage      schema.TokenUsage // the last a chunk carried, when hasUsage
	hasUsage   bool
}

func (s *streamedMessage) add(m *schema.Message) {
	if m == nil {
		return
	}
	if m.Role != "" {
		s.role = m.Role
	}
	if m.ToolCallID != "" {
		s.toolCallID, s.toolName = m.ToolCallID, m.ToolName
	}
	s.content = append(s.content, m.Content...)
	if s.traceCalls {
		s.addSpecs(m.ToolCalls)
	} else {
		s.addCalls(m.ToolCalls)
	}
	if m.ResponseMeta != nil && m.ResponseMeta.Usage != nil {
		s.usage, s.hasUsage = *m.ResponseMeta.Usage, true
	}
}

// addCalls joins a chunk's tool calls into toolCalls.
func (s *streamedMessage) addCalls(tcs []schema.ToolCall) {
	s.toolCalls = joinChunkCalls(s.toolCalls, tcs, func(dst, tc *schema.ToolCall) {
		if tc.ID != "" {
			dst.ID = tc.ID
		}
		if tc.Type != "" {
			dst.Type = tc.Type
		}
		dst.Function.Name = joined(dst.Function.Name, tc.Function.Name)
		dst.Function.Arguments = joined(dst.Function.Arguments, tc.Function.Arguments)
	})
}

// addSpecs joins a chunk's tool calls into specs, as addCalls joins them (a call's type, which
// the trace has no place for, aside). The first chunk that brings calls nearly always brings them
// all, whole (each with an id, in its place if indexed): they are converted as they are, which
// joining them would give too.
func (s *streamedMessage) addSpecs(tcs []schema.ToolCall) {
	if s.specs == nil && len(tcs) > 0 {
		// Converted as they are checked, in one pass; joined from scratch, in the same room,
		// at the first that is not whole.
		s.specs = make([]traces.ToolCallSpec, len(tcs))
		for i := range tcs {
			tc := &tcs[i]
			if tc.ID == "" || tc.Index != nil && *tc.Index != i {
				s.specs = s.specs[:0]
				break
			}
			fillTraceCall(&s.specs[i], tc)
		}
		if len(s.specs) > 0 {
			return
		}
	}
	s.specs = joinChunkCalls(s.specs, tcs, func(dst *traces.ToolCallSpec, tc *schema.ToolCall) {
		if tc.ID != "" {
			dst.ID = tc.ID
		}
		dst.Name = joined(dst.Name, tc.Function.Name)
		dst.Arguments = joined(dst.Arguments, tc.Function.Arguments)
	})
}

// joinChunkCalls joins a chunk's tool calls tcs into the calls joined so far, each part into its
// call by join, and returns them.
func joinChunkCalls[T any](calls []T, tcs []schema.ToolCall, join func(dst *T, tc *schema.ToolCall)) []T {
	if calls == nil && len(tcs) > 0 {
		calls = make([]T, 0, len(tcs)) // most replies bring all their calls in one chunk
	}
	for j := range tcs {
		tc := &tcs[j] // a ToolCall is large: not copied per chunk
		i := chunkCallAt(tc, len(calls))
		for len(calls) <= i {
			var none T
			calls = append(calls, none)
		}
		join(&calls[i], tc)
	}
	return calls
}

// chunkCallAt returns the index, among the n calls joined so far, of the call a chunk's tool call
// tc is (a part of): its Index when it has one, else the last call's for a continuation (no id),
// else a new call's.
func chunkCallAt(tc *schema.ToolCall, n int) int {
	switch {
	case tc.Index != nil:
		return *tc.Index
	case tc.ID == "" && n > 0:
		return n - 1
	}
	return n
}

// joined returns a+b, without a call into the runtime when either is empty (a call's name and
// arguments nearly always come whole, in one chunk).
func joined(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + b
}

func (s *streamedMessage) message() *schema.Message {
	m := s.joined()
	return &m
}

// joined returns the message, by value: a caller that keeps no pointer to it keeps it on its
// stack (a model's streamed reply, once a reply). Tool calls joined in trace form are not in it
// (see specs).
func (s *streamedMessage) joined() schema.Message {
	role := s.role
	if role == "" {
		role = schema.Assistant
	}
	m := schema.Message{Role: role, Content: string(s.content), ToolCalls: s.toolCalls, ToolCallID: s.toolCallID, ToolName: s.toolName}
	if s.hasUsage {
		meta := &struct { // one allocation
			schema.ResponseMeta
			usage schema.TokenUsage
		}{usage: s.usage}
		meta.Usage = &meta.usage
		m.ResponseMeta = &meta.ResponseMeta
	}
	return m
}

// inputCache converts an agent's model inputs to their trace form. In a ReAct loop each call's
// input is the previous one plus the latest reply and tool results: the converted prefix is then
// shared, not copied again, which keeps recording a long conversation linear rather than
// quadratic. Recorded events never change, so sharing their messages is safe.
//
// Into a traces.Recording, an input that extends the last one is handed as only what it adds
// (see added and traces.Recording.RecordExtending), converted into arrays reused from call to
// call: the recording keeps none of it, and no array of the whole conversation is built.
type inputCache struct {
	last []*schema.Message // the latest input
	// converted is its trace form, with room to grow; nil when it was recorded as an extension.
	converted []traces.Message
	seq       int64 // the event that recorded it in a traces.Recording, or 0
	// addedMsgs and addedCalls hold what added converted last, reused by the next call.
	addedMsgs  []traces.Message
	addedCalls []traces.ToolCallSpec
	// results are where the ends of the agent's tool calls since its latest input were written,
	// in the order they ended (see nextResult): the next input, which holds their results, is
	// handed them, and the recording writes each result as where it was written (see
	// traces.ToolResult). Reused from input to input.
	results []traces.ToolResult
}

// maxResults bounds the results an input is handed: an agent that runs tools without a model
// call between notes no more.
const maxResults = 1024

// nextResult returns where the end of a tool call of the agent that ends now is to be noted (see
// delivery.emitTool), or nil when maxResults are noted already. Until noted, it may hold an
// earlier input's result: the recording takes a result for a message only when the message is
// that result, byte for byte, so a stale one is at worst of no use.
func (c *inputCache) nextResult() *traces.ToolResult {
	n := len(c.results)
	if n == cap(c.results) {
		if n == maxResults {
			return nil
		}
		c.results = slices.Grow(c.results, 1)
	}
	c.results = c.results[:n+1]
	return &c.results[n]
}

// inputTaken forgets the results noted for the input just recorded. The strings they hold are
// the conversation's, which last holds too: they are not cleared, but overwritten by the next.
func (c *inputCache) inputTaken() { c.results = c.results[:0] }

// extends returns how many messages of the latest input in begins with (they are the same,
// pointers or messages alike), or 0 when it does not extend it.
func (c *inputCache) extends(in []*schema.Message) int {
	from := len(c.last)
	if from > len(in) {
		return 0
	}
	for i := 0; i < from; i++ {
		if samePointers(in[i:from], c.last[i:from]) {
			break
		}
		for in[i] == c.last[i] {
			i++
		}
		// A message eino rebuilt for this call (the system prompt) may still be the same.
		if !sameMessage(in[i], c.last[i]) {
			return 0
		}
	}
	return from
}

// convert returns in's trace form, sharing what it has of an input in extends (from, as
// extends returns it).
func (c *inputCache) convert(in []*schema.Message, from int) []traces.Message {
	if from == 0 || len(c.converted) != from {
		c.converted, from = nil, 0 // earlier inputs keep the old slice: recorded events share it
	}
	c.converted = grow.Doubling(c.converted, len(in)-from)
	for _, m := range in[from:] {
		c.converted = append(c.converted, traceMessage(m))
	}
	c.last, c.seq = in, 0
	c.inputTaken()
	return c.converted[:len(c.converted):len(c.converted)]
}

// added returns the trace form of ms, the messages an input adds to the latest, in arrays the
// next call reuses. Each is written in its place, field by field: a message built aside and
// appended is copied twice (every model call of a ReAct loop adds the reply and its results).
func (c *inputCache) added(ms []*schema.Message) []traces.Message {
	calls := 0
	for _, m := range ms {
		if m != nil {
			calls += len(m.ToolCalls)
		}
	}
	c.addedMsgs = slices.Grow(c.addedMsgs[:0], len(ms))[:len(ms)]
	c.addedCalls = slices.Grow(c.addedCalls[:0], calls)[:calls]
	specs := c.addedCalls
	for i, m := range ms {
		if m == nil {
			c.addedMsgs[i] = traces.Message{}
			continue
		}
		var calls []traces.ToolCallSpec // none for a message of none, as traceMessage
		if n := len(m.ToolCalls); n > 0 {
			calls, specs = specs[:n:n], specs[n:]
		}
		fillTraceMessage(&c.addedMsgs[i], m, calls)
	}
	return c.addedMsgs
}

// recorded notes in, recorded by the event numbered seq as an extension of the latest input.
func (c *inputCache) recorded(in []*schema.Message, seq int64) {
	c.last, c.converted, c.seq = in, nil, seq
	clear(c.addedMsgs) // lets go of the app's strings
	clear(c.addedCalls)
	c.inputTaken()
}

// samePointers reports whether a and b, of the same length, hold the same pointers, comparing
// their memory in one go: at once when they are the same array, else several pointers an
// instruction. Every model call asks it of the whole conversation so far.
func samePointers(a, b []*schema.Message) bool {
	if len(a) == 0 {
		return true
	}
	size := len(a) * int(unsafe.Sizeof(a[0]))
	return unsafe.String((*byte)(unsafe.Pointer(unsafe.SliceData(a))), size) ==
		unsafe.String((*byte)(unsafe.Pointer(unsafe.SliceData(b))), size)
}

// sameMessage reports whether a and b are the same message; eino rebuilds the system prompt for
// every call, so equal text counts too.
func sameMessage(a, b *schema.Message) bool {
	if a == b {
		return true
	}
	return a != nil && b != nil && a.Role == b.Role && a.Content == b.Content &&
		len(a.ToolCalls) == 0 && len(b.ToolCalls) == 0 && a.ToolCallID == b.ToolCallID
}
