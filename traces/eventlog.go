package traces

import (
	"encoding/binary"
	"math"
	"time"
	"unsafe"
)

// A recording keeps its run's events encoded in chunks of bytes, which hold no pointers: the
// collector never looks inside them, so a long run costs the app's collections nothing however
// many events it has recorded, where Events and the payloads they point to would be marked at
// every collection. Readers decode what they read and see the events exactly as emitted (the
// monotonic clock reading of their times aside, which the trace format has no place for either):
// their strings and session values are read in place, never copied; payloads, run paths and
// inputs are made for each reader, inputs sharing their arrays as the recorder's did.
//
// An event is written as its seq (less its number in the log), time (see appendTime), kind (see
// kindCode), agent and run path (see appendActor), then a mask of the payloads it has and each of
// them, field by field in the order of its struct. Integers are varints, floats a byte (0 for
// zero) and their 8 bytes; a string is its length (doubled) and its bytes, or, odd, its length
// and where the same string was written before (see text). A slice is its length plus one (0 for
// nil) and its elements. A model's or an agent's input refers to the earlier input it extends,
// as format version 2 does (see EventEncoder), and holds only the messages that follow. An
// event's message that is the result of the tool call written last (a tool's result message,
// following its tool.finished) is written as a byte 1 where its role would start, which no
// string's length starts with, then how many events back that tool call was written and where
// its payload starts in that event: its name, call id and result are read there (see
// toolResult). Only the very strings the tool call had are taken for its (as the recorder hands
// them): a comparison of their addresses, not of their bytes. A message an input's extension
// adds is written so too when it is the result of a tool call whose place its caller hands with
// it (see ToolResult), its strings compared by address, then by bytes: the same bytes, read by
// the same reader. Likewise a message (an event's, or one of an input's) that repeats the output
// of the model call written last, as a model's reply is repeated by its message event and the
// next call's input, is a byte 3 (the length of no role either) and where that output is.

// eventLog is a run's events, encoded: what a reader needs of the log, copied under the
// recording's lock and read after it is released. A chunk is never moved, and a written byte
// never written again, so such a copy stays valid up to the n it had while the log grows.
type eventLog struct {
	chunks [][]byte // each at its full length from the start
	// at[i/atBlock][i%atBlock] is where event i+1 starts: its chunk << 32 | its offset there. In
	// blocks, so that the index grows without being copied.
	at [][]uint64
	n  int
}

// start returns where event i+1 starts.
func (l *eventLog) start(i int) uint64 { return l.at[i/atBlock][i%atBlock] }

// Chunk sizes: the first holds a short run's events in little memory, then each is twice the
// last up to the largest. An event larger than a chunk gets one of its own size.
const (
	firstChunk = 4 << 10
	lastChunk  = 64 << 10
	atBlock    = 1024 // events indexed by one block of eventLog.at
)

// logWriter appends events to an eventLog. It is not safe for concurrent use: the recording's
// lock guards it.
type logWriter struct {
	eventLog
	off int // bytes used in the last chunk
	// cur and curAt are the last chunk and the last block of the index, as they are most used.
	cur    []byte
	curAt  []uint64
	inputs EventEncoder
	// agent and path are the actor written last (an event's agent and run path), by the event
	// numbered actorBy (0 for none), for the next events of the same.
	agent   string
	path    []string
	actorBy int
	// locs are the time zones of the events' times other than UTC, by their code minus one.
	locs []*time.Location
	// recent are long strings written lately, where they were written (see text); pending
	// those the event being written writes, where in it, until it is placed.
	recent     [recentStrings]recentString
	nextRecent int
	pending    []recentString
	// tool is where the tool call written last is (none before the first); resultOf, while a
	// message is written that may be the result of an earlier one, where that one is.
	tool     ToolResult
	resultOf *ToolResult
	// reply is the output of the model call written last, with its tool calls copied into
	// replyCalls (its own array, reused: a caller may reuse its payloads once Emit returns), by
	// the event numbered replyBy (0 for none), replyOff bytes into it.
	reply             Message
	replyCalls        []ToolCallSpec
	replyBy, replyOff int
	// extend, when its Keep is set, says the event being added has a model input that extends
	// an earlier one, handed as only the messages it adds (see Recording.RecordExtending), and
	// results where the tool calls whose results these may hold were written (see appendAdded).
	extend  InputRef
	results []ToolResult
}

// toolResultRef starts a message that is the result of the tool call written last (see
// logWriter.tool): a byte no role's length starts with.
const toolResultRef = 1

// replyRef starts a message that repeats the output of the model call written last (see
// logWriter.reply).
const replyRef = 3

// Long strings: one that is recent (one of the last recentStrings written) is written again as
// where it was written, when it is the same string, the very bytes. The recorder hands the
// same string to several events: a tool's result to its tool.finished, the result's message and
// the next model call's input.
const (
	longString    = 64
	recentStrings = 32
)

type recentString struct {
	s  string
	at uint64 // where its bytes are; in pending, their offset in the event
}

// Payload bits of an event's mask, in the order of the Event's fields.
const (
	hasRun = 1 << iota
	hasAgentRun
	hasModel
	hasTool
	hasMessage
	hasTransfer
	hasAgentTool
	hasSession
	hasInterrupt
	hasExit
	hasBreakLoop
	hasError
	hasLost
	hasPause
)

// Actor codes: how an event's agent and run path are written.
const (
	actorSame = iota // those of the event that many events back (the number that follows)
	actorNew         // written here: the agent, the path's length plus one (0 for none), its steps
)

// add appends e, numbering the references of its inputs by position (n+1), not by its Seq. It
// encodes e straight into the room left in the last chunk, and only when e does not fit there
// copies it to a new chunk. A field added to an event's types must be added here and in raw:
// TestRecordingReadsBackEveryEventExactly reads back richTrace, which sets every field.
//
// Each payload is written by a function of its own, not inlined here: a goroutine's stack then
// needs room for the deepest one's frame only, where one function writing them all needed ~3 KB
// for its inlined appends, and the app's short-lived goroutines (eino runs each tool call of a
// reply but the first on one) grew their stacks, a copy each, to record one event.
func (w *logWriter) add(e *Event) {
	seq := int64(w.n + 1)
	var b []byte
	if last := len(w.chunks) - 1; last >= 0 {
		b = w.chunks[last][w.off:w.off]
	}
	// Most events (a tool call's three: tool.started, tool.finished, its result's message) have
	// none of the payloads after Message: tested at once, they are neither masked nor walked.
	plain := noLaterPayloads(e)
	b = w.appendHead(b, e, seq, plain)
	if e.Run != nil {
		b = w.appendRun(b, e.Run)
	}
	if e.AgentRun != nil {
		b = w.appendAgentRun(b, seq, e)
	}
	if e.Model != nil {
		b = w.appendModel(b, seq, e)
	}
	if e.Tool != nil {
		b = w.appendTool(b, seq, e.Tool)
	}
	if e.Message != nil {
		b = w.appendEventMessage(b, seq, e.Message)
	}
	if !plain {
		b = w.appendPayloads(b, e)
	}
	if w.extend.Keep > 0 {
		w.inputs.rememberExtension(seq, e.Agent, w.extend.Keep+len(e.Model.Input))
	} else if e.Model != nil || e.AgentRun != nil {
		w.inputs.remember(seq, e.Agent, eventInput(e))
	}
	at := w.place(b)
	if len(w.pending) > 0 {
		w.placePending(at)
	}
}

// addUsual is add for an event of the usual shape, with the numbering and stamping of
// Recording.emitLocked, in one pass: an event with no payload but a tool call and a message (a
// tool call's three events), of a kind other than run.started (which the recording notes), whose
// head appendFixedHead would write, and which fits the room left in the last chunk. Its head is
// written in place, as appendFixedHead writes it, and the event indexed where it was written:
// neither the generic walk of add nor place's checks. It reports false, having changed nothing,
// for any other event (a zero time among them: it is out of appendFixedHead's range), which add
// then writes; the bytes are add's either way (see TestUsualEventsAreWrittenAsAddWritesThem).
func (w *logWriter) addUsual(e *Event) bool {
	if e.Run != nil || e.AgentRun != nil || e.Model != nil || !noLaterPayloads(e) {
		return false
	}
	var code byte
	switch k := e.Kind; { // the kinds of most events first, as in kindCode
	case k == KindToolStarted:
		code = 7
	case k == KindToolFinished:
		code = 8
	case k == KindMessage:
		code = 9
	default:
		if code = kindCode(k); code == 0 || code == kindRunStarted {
			return false
		}
	}
	at, ok := utcNanos(e.Time)
	if !ok {
		return false
	}
	seq := w.writeUsual(at, code, e.Agent, e.RunPath, e.Tool, e.Message)
	if seq == 0 {
		return false
	}
	e.Seq, e.Time = seq, e.Time.UTC()
	return true
}

// writeUsual is addUsual for the event of time at (Unix nanoseconds, in timeUTC's range), kind
// code (a usual one's), by agent at path, with no payload but tc and m (either may be nil), when
// it is written without an Event (a tool call's, see Recording.RecordTool): it returns the
// event's seq, or 0, having changed nothing, when addUsual would report false.
func (w *logWriter) writeUsual(at int64, code byte, agent string, path []string, tc *ToolCall, m *Message) int64 {
	back := uint(w.n + 1 - w.actorBy)
	c, off := w.cur, w.off
	if back >= 1<<14 || len(c)-off < 15 || !w.sameActor(agent, path) { // with no chunk yet among them
		return 0
	}
	seq := int64(w.n + 1)
	h := c[off : off+15] // its capacity the chunk's room
	h[0], h[1] = 0, timeUTC
	binary.LittleEndian.PutUint64(h[2:10], uint64(at))
	h[10], h[11] = code, actorSame
	var mask byte
	if tc != nil {
		mask = hasTool
	}
	if m != nil {
		mask |= hasMessage
	}
	b := h[:14] // the event so far: appended to, it grows out of the chunk only when it outgrows its room
	if back < 0x80 {
		h[12], h[13] = byte(back), mask
	} else {
		h[12], h[13], h[14] = byte(back)|0x80, byte(back>>7), mask
		b = h[:15]
	}
	if tc != nil {
		b = w.appendTool(b, seq, tc)
	}
	if m != nil {
		b = w.appendEventMessage(b, seq, m)
	}
	if i := uint(w.n); off+len(b) <= len(c) && len(w.pending) == 0 && i%atBlock != 0 { // placeUsual
		w.curAt[i%atBlock] = uint64(len(w.chunks)-1)<<32 | uint64(off)
		w.off += len(b)
		w.n++
	} else {
		w.placeRare(b, c, off)
	}
	return seq
}

// addMessageAfter is addUsual for the message event that follows at once the event of time at
// (Unix nanoseconds) just written by addUsual or writeUsual, of its actor, carrying m (a tool
// call's end, then its result's message): what they checked holds for it, and is not checked
// again. A nil m is the result of the tool call just written by writeUsual, as add writes a
// message of its very strings (see appendEventMessage), though none was built. It reports false,
// having written nothing, when the chunk has no room left for its head: add writes it then.
func (w *logWriter) addMessageAfter(at int64, m *Message) bool {
	back := uint(w.n + 1 - w.actorBy)
	c, off := w.cur, w.off
	if back >= 1<<14 || len(c)-off < 15 {
		return false
	}
	seq := int64(w.n + 1)
	h := c[off : off+15] // as addUsual writes it
	h[0], h[1] = 0, timeUTC
	binary.LittleEndian.PutUint64(h[2:10], uint64(at))
	h[10], h[11] = 9, actorSame // 9: KindMessage's code
	b := h[:14]
	if back < 0x80 {
		h[12], h[13] = byte(back), hasMessage
	} else {
		h[12], h[13], h[14] = byte(back)|0x80, byte(back>>7), hasMessage
		b = h[:15]
	}
	if m == nil {
		b = appendToolResultRef(b, 1, w.tool.off)
	} else {
		b = w.appendEventMessage(b, seq, m)
	}
	if i := uint(w.n); off+len(b) <= len(c) && len(w.pending) == 0 && i%atBlock != 0 { // placeUsual
		w.curAt[i%atBlock] = uint64(len(w.chunks)-1)<<32 | uint64(off)
		w.off += len(b)
		w.n++
	} else {
		w.placeRare(b, c, off)
	}
	return true
}

// placeUsual adds the event b, which addUsual or addMessageAfter wrote into the room at off in
// the last chunk c, to the log: in place, indexed in the index's last block, the usual way (a
// macro, written out where it is used: as a function, it is too large to be inlined and costs
// a call an event), else placeRare's.
//
//	if i := uint(w.n); off+len(b) <= len(c) && len(w.pending) == 0 && i%atBlock != 0 {
//		w.curAt[i%atBlock] = uint64(len(w.chunks)-1)<<32 | uint64(off)
//		w.off += len(b)
//		w.n++
//	} else {
//		w.placeRare(b, c, off)
//	}

// placeRare is placeUsual for any event: b outgrew the room, wrote long strings, or the index needs a new block.
//
//go:noinline
func (w *logWriter) placeRare(b, c []byte, off int) {
	var at uint64
	if off+len(b) <= len(c) { // written in place
		at = uint64(len(w.chunks)-1)<<32 | uint64(off)
		w.off += len(b)
		w.index(at)
	} else {
		at = w.place(b)
	}
	if len(w.pending) > 0 {
		w.placePending(at)
	}
}

// placePending notes where the long strings the event just placed at wrote are.
//
//go:noinline
func (w *logWriter) placePending(at uint64) {
	for _, p := range w.pending {
		w.recent[w.nextRecent%recentStrings] = recentString{p.s, at + p.at}
		w.nextRecent++
	}
	w.pending = w.pending[:0]
}

// appendHead appends the event numbered seq's seq, time, kind, actor and payload mask: most
// events' as one block of fixed shape (see appendFixedHead).
//
//go:noinline
func (w *logWriter) appendHead(b []byte, e *Event, seq int64, plain bool) []byte {
	if b, ok := w.appendFixedHead(b, e, seq, plain); ok {
		return b
	}
	return w.appendHeadFields(b, e, seq, plain)
}

// appendHeadFields is appendHead field by field, for any event.
func (w *logWriter) appendHeadFields(b []byte, e *Event, seq int64, plain bool) []byte {
	b = binary.AppendVarint(b, e.Seq-seq) // 0 but in a loaded trace whose seqs have gaps
	b = w.appendTime(b, e.Time)
	code := kindCode(e.Kind)
	b = append(b, code)
	if code == 0 {
		b = appendLogString(b, string(e.Kind))
	}
	b = w.appendActor(b, e.Agent, e.RunPath)
	if plain {
		return append(b, byte(headPayloadMask(e))) // the mask's varint: a byte below 0x80
	}
	return binary.AppendUvarint(b, payloadMask(e))
}

// appendFixedHead appends the head appendHead writes for an event of the usual shape, built in
// place as one block, and reports whether e is of that shape and b had the room (15 bytes, as
// it nearly always has: b is the room left in the log's last chunk): numbered in order, in UTC,
// of a kind the format knows, by the actor of one of the last 16,383 events written, with none
// of the payloads after Message. It is the same bytes appendHead writes field by field (see
// TestFixedHeadIsTheHead): a 0 (seq), timeUTC and the time's 8 bytes, the kind's code,
// actorSame and how many events back (a varint of one or two bytes), the mask.
func (w *logWriter) appendFixedHead(b []byte, e *Event, seq int64, plain bool) ([]byte, bool) {
	t, utc := utcNanos(e.Time)
	code := kindCode(e.Kind)
	back := w.n + 1 - w.actorBy
	at := len(b)
	if e.Seq != seq || !plain || code == 0 || !utc || back >= 1<<14 || cap(b)-at < 15 || !w.sameActor(e.Agent, e.RunPath) {
		return b, false
	}
	h := b[at : at+15]
	h[0], h[1] = 0, timeUTC
	binary.LittleEndian.PutUint64(h[2:10], uint64(t))
	h[10], h[11] = code, actorSame
	if back < 0x80 {
		h[12], h[13] = byte(back), byte(headPayloadMask(e))
		return b[:at+14], true
	}
	h[12], h[13], h[14] = byte(back)|0x80, byte(back>>7), byte(headPayloadMask(e))
	return b[:at+15], true
}

//go:noinline
func (w *logWriter) appendRun(b []byte, r *RunMark) []byte {
	b = appendLogString(b, r.Flow)
	b = w.text(b, r.Input)
	b = appendLogString(b, string(r.Status))
	b = w.text(b, r.Error)
	b = appendBool(b, r.ForkedFrom != nil)
	if f := r.ForkedFrom; f != nil {
		b = appendLogString(b, f.Run)
		b = binary.AppendVarint(b, f.Seq)
	}
	return b
}

//go:noinline
func (w *logWriter) appendAgentRun(b []byte, seq int64, e *Event) []byte {
	a := e.AgentRun
	b = w.appendInput(b, seq, e.Agent, a.Input)
	b = appendBool(b, a.Resumed)
	b = appendLogString(b, a.Via)
	b = w.text(b, a.Error)
	b = appendBool(b, a.Interrupted)
	return binary.AppendVarint(b, int64(a.Iteration))
}

//go:noinline
func (w *logWriter) appendModel(b []byte, seq int64, e *Event) []byte {
	m := e.Model
	b = appendLogString(appendLogString(b, m.ID), m.Name)
	if w.extend.Keep > 0 {
		b = w.appendExtension(b, seq, m.Input)
	} else {
		b = w.appendInput(b, seq, e.Agent, m.Input)
	}
	b = binary.AppendUvarint(b, sliceLen(m.Tools))
	for _, t := range m.Tools {
		b = appendLogString(b, t)
	}
	b = appendBool(b, m.Output != nil)
	if m.Output != nil {
		w.noteReply(m.Output, seq, len(b))
		b = w.appendMessage(b, m.Output)
	}
	b = appendBool(b, m.Usage != nil)
	if u := m.Usage; u != nil {
		b = binary.AppendVarint(b, int64(u.PromptTokens))
		b = binary.AppendVarint(b, int64(u.CompletionTokens))
		b = binary.AppendVarint(b, int64(u.TotalTokens))
	}
	b = appendFloat(b, m.DurationMS)
	return w.text(b, m.Error)
}

//go:noinline
func (w *logWriter) appendTool(b []byte, seq int64, t *ToolCall) []byte {
	// Field by field: a struct assigned whole is built aside and copied, twice the instructions.
	w.tool.log, w.tool.name, w.tool.callID, w.tool.result, w.tool.seq, w.tool.off = w, t.Name, t.CallID, t.Result, int(seq), len(b)
	b = appendLogString(appendLogString(b, t.Name), t.CallID)
	// An empty string is its length alone, written with no call to memmove (which append makes
	// for no bytes too, about which the caller's registers are stored and loaded again): of
	// these, most calls' events have two empty.
	if t.Arguments != "" {
		b = w.text(b, t.Arguments)
	} else {
		b = append(b, 0)
	}
	if t.Result != "" {
		b = w.text(b, t.Result)
	} else {
		b = append(b, 0)
	}
	if t.Error != "" {
		b = w.text(b, t.Error)
	} else {
		b = append(b, 0)
	}
	b = appendFloat(b, t.DurationMS)
	return appendBool(b, t.Interrupted)
}

// appendEventMessage appends m, the message of the event numbered seq: as where the tool call
// written last (or resultOf) is, when m is its result, else as appendMessageRef does.
//
//go:noinline
func (w *logWriter) appendEventMessage(b []byte, seq int64, m *Message) []byte {
	t := &w.tool
	if w.resultOf != nil {
		t = w.resultOf
	}
	if t.heldBy(w, seq, m) {
		return appendToolResultRef(b, int(seq)-t.seq, t.off)
	}
	return w.appendMessageRef(b, seq, m)
}

// text appends s, referring to where it was written when it is a recent long string.
func (w *logWriter) text(b []byte, s string) []byte {
	if len(s) < longString { // its length, doubled, fits a byte
		return append(append(b, byte(len(s)<<1)), s...)
	}
	return w.longText(b, s)
}

func (w *logWriter) longText(b []byte, s string) []byte {
	for i := range w.recent { // by index: a range over values would copy the whole array first
		if r := &w.recent[i]; len(r.s) == len(s) && unsafe.StringData(r.s) == unsafe.StringData(s) {
			return binary.AppendUvarint(binary.AppendUvarint(b, uint64(len(s))<<1|1), r.at)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(s))<<1)
	w.pending = append(w.pending, recentString{s, uint64(len(b))})
	return append(b, s...)
}

// ended lets go of what the writer keeps for the events that follow: the inputs they may extend
// (the arrays of the app's recorder) and the run path written last. Events recorded after it
// (a resumed run's) are written whole, then refer to one another again.
func (w *logWriter) ended() {
	w.inputs = EventEncoder{}
	w.agent, w.path, w.actorBy = "", nil, 0
	w.recent, w.pending = [recentStrings]recentString{}, nil
	w.tool = ToolResult{}
	w.reply, w.replyBy = Message{}, 0
	clear(w.replyCalls)
	w.replyCalls = w.replyCalls[:0]
}

// noteReply notes m, a model call's output that the event numbered seq writes off bytes into it,
// as the reply later messages may repeat.
func (w *logWriter) noteReply(m *Message, seq int64, off int) {
	w.reply, w.replyBy, w.replyOff = *m, int(seq), off
	clear(w.replyCalls)
	w.replyCalls = append(w.replyCalls[:0], m.ToolCalls...)
}

// appendMessageRef appends m, a message of the event numbered seq: as where the reply it repeats
// is, if it does, else whole.
func (w *logWriter) appendMessageRef(b []byte, seq int64, m *Message) []byte {
	if w.replyBy > 0 && int(seq) > w.replyBy && w.repeatsReply(m) {
		return binary.AppendUvarint(binary.AppendUvarint(append(b, replyRef), uint64(int(seq)-w.replyBy)), uint64(w.replyOff))
	}
	return w.appendMessage(b, m)
}

// repeatsReply reports whether m holds the very strings of the reply, and tool calls as many and
// alike.
func (w *logWriter) repeatsReply(m *Message) bool {
	r := &w.reply
	if !sameString(m.Content, r.Content) || !sameString(m.Role, r.Role) || !sameString(m.ToolCallID, r.ToolCallID) ||
		!sameString(m.ToolName, r.ToolName) || (m.ToolCalls == nil) != (r.ToolCalls == nil) || len(m.ToolCalls) != len(w.replyCalls) {
		return false
	}
	for i := range m.ToolCalls {
		a, c := &m.ToolCalls[i], &w.replyCalls[i]
		if !sameString(a.ID, c.ID) || !sameString(a.Name, c.Name) || !sameString(a.Arguments, c.Arguments) {
			return false
		}
	}
	return true
}

// sameString reports whether a and b are the very same string: the same bytes at the same place.
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// appendPayloads appends the payloads add leaves out: those without messages or inputs.
func (w *logWriter) appendPayloads(b []byte, e *Event) []byte {
	if t := e.Transfer; t != nil {
		b = appendLogStrings4(b, t.From, t.To, t.Mode, t.CallID)
		b = appendLogString(b, t.Outcome)
		b = w.text(b, t.Error)
		b = appendLogString(b, t.ErrorBy)
	}
	if a := e.AgentTool; a != nil {
		b = appendLogString(appendLogString(appendLogString(b, a.Caller), a.Callee), a.CallID)
		b = w.text(b, a.Request)
		b = appendLogString(b, a.InputMode)
		b = w.text(b, a.Result)
		b = appendLogString(b, a.InnerEvents)
	}
	if s := e.Session; s != nil {
		b = appendLogString(b, s.Key)
		b = binary.AppendUvarint(b, sliceLen(s.Value))
		b = append(b, s.Value...)
		b = appendLogString(b, s.SetBy)
	}
	if i := e.Interrupt; i != nil {
		b = appendLogString(b, i.ID)
		b = appendLogString(b, i.Address)
		b = w.text(b, i.Info)
	}
	if x := e.Exit; x != nil {
		b = w.text(b, x.FinalResult)
	}
	if l := e.BreakLoop; l != nil {
		b = appendLogString(b, l.From)
		b = binary.AppendVarint(b, int64(l.Iterations))
	}
	if x := e.Error; x != nil {
		b = w.text(b, x.Message)
	}
	if l := e.Lost; l != nil {
		b = binary.AppendVarint(b, l.Count)
	}
	if p := e.Pause; p != nil {
		b = appendLogStrings4(b, p.Break, p.Target, p.Action, p.By)
		b = binary.AppendVarint(b, p.At)
		b = w.text(b, p.Detail)
		b = w.text(b, p.Edited)
		b = appendLogStrings4(b, p.On, p.Feed, "", "")
		b = appendBool(b, p.Reply != nil)
		if p.Reply != nil {
			b = w.appendMessage(b, p.Reply)
		}
		b = binary.AppendUvarint(b, sliceLen(p.Input))
		for i := range p.Input {
			b = w.appendMessage(b, &p.Input[i])
		}
		for _, s := range [...]*string{p.Args, p.Result} {
			b = appendBool(b, s != nil)
			if s != nil {
				b = w.text(b, *s)
			}
		}
		b = binary.AppendUvarint(b, sliceLen(p.Value))
		b = append(b, p.Value...)
	}
	return b
}

// place adds the event b, encoded, to the log and returns where it starts. b is where add wrote
// it: the room left in the last chunk, unless it outgrew that room (what it wrote there is never
// read).
func (w *logWriter) place(b []byte) uint64 {
	last := len(w.chunks) - 1
	if last < 0 || w.off+len(b) > len(w.chunks[last]) {
		size := lastChunk
		if last < 4 {
			size = firstChunk << max(last+1, 0)
		}
		w.cur = make([]byte, max(size, len(b)))
		w.chunks = append(w.chunks, w.cur)
		last, w.off = last+1, 0
		copy(w.chunks[last], b)
	}
	at := uint64(last)<<32 | uint64(w.off)
	w.off += len(b)
	w.index(at)
	return at
}

// index notes that the next event starts at at.
func (w *logWriter) index(at uint64) {
	i := uint(w.n) // unsigned: a shift and a mask, where a signed n took a sign's fix-ups
	if i%atBlock == 0 {
		w.curAt = make([]uint64, atBlock)
		w.at = append(w.at, w.curAt)
	}
	w.curAt[i%atBlock] = at
	w.n++
}

// payloadMask has a bit set for each payload e has (see hasRun).
func payloadMask(e *Event) uint64 {
	m := headPayloadMask(e)
	if e.Transfer != nil {
		m |= hasTransfer
	}
	if e.AgentTool != nil {
		m |= hasAgentTool
	}
	if e.Session != nil {
		m |= hasSession
	}
	if e.Interrupt != nil {
		m |= hasInterrupt
	}
	if e.Exit != nil {
		m |= hasExit
	}
	if e.BreakLoop != nil {
		m |= hasBreakLoop
	}
	if e.Error != nil {
		m |= hasError
	}
	if e.Lost != nil {
		m |= hasLost
	}
	if e.Pause != nil {
		m |= hasPause
	}
	return m
}

// laterPayloads are an Event's payload pointers from Transfer to Pause, the fields' memory.
type laterPayloads [(unsafe.Offsetof(Event{}.Pause) + unsafe.Sizeof(Event{}.Pause) - unsafe.Offsetof(Event{}.Transfer)) / unsafe.Sizeof(uintptr(0))]uintptr

// noLaterPayloads reports whether e has none of the payloads after Message (Transfer to Pause,
// declared in a row), comparing their pointers' memory with zeros in one go.
func noLaterPayloads(e *Event) bool {
	p := (*laterPayloads)(unsafe.Pointer(&e.Transfer))
	var any uintptr
	for i := range p { // unrolled: where comparing the array with zeros calls memequal
		any |= p[i]
	}
	return any == 0
}

// headPayloadMask is payloadMask of the payloads up to Message.
func headPayloadMask(e *Event) uint64 {
	var m uint64
	if e.Run != nil {
		m |= hasRun
	}
	if e.AgentRun != nil {
		m |= hasAgentRun
	}
	if e.Model != nil {
		m |= hasModel
	}
	if e.Tool != nil {
		m |= hasTool
	}
	if e.Message != nil {
		m |= hasMessage
	}
	return m
}

// Time codes: how an event's time is written.
const (
	timeUTC  = iota // in UTC, from 1678 to 2262 (see utcNanos): its Unix time in nanoseconds, 8 bytes
	timeZone        // any other: Unix seconds, nanoseconds, and its zone (0 UTC, i w.locs[i-1])
)

// The range of Unix seconds timeUTC writes, bounds excluded: their nanoseconds fit in 8 bytes.
// As Unix nanoseconds, from minUTCNanos up to (not including) maxUTCNanos.
const (
	minUTCSec   = math.MinInt64/1_000_000_000 + 1
	maxUTCSec   = math.MaxInt64/1_000_000_000 - 1
	minUTCNanos = (minUTCSec + 1) * 1_000_000_000
	maxUTCNanos = maxUTCSec * 1_000_000_000
)

// utcNanos returns t as timeUTC writes it, its Unix time in nanoseconds, and whether it is
// written so: in UTC and in range.
func utcNanos(t time.Time) (int64, bool) {
	sec := t.Unix()
	if t.Location() != time.UTC || sec <= minUTCSec || sec >= maxUTCSec {
		return 0, false
	}
	return sec*1e9 + int64(t.Nanosecond()), true
}

// appendTime appends t.
func (w *logWriter) appendTime(b []byte, t time.Time) []byte {
	if at, ok := utcNanos(t); ok {
		return binary.LittleEndian.AppendUint64(append(b, timeUTC), uint64(at))
	}
	sec, loc := t.Unix(), t.Location()
	b = binary.AppendVarint(append(b, timeZone), sec)
	b = binary.AppendUvarint(b, uint64(t.Nanosecond()))
	code := 0
	if loc != time.UTC {
		for i, l := range w.locs {
			if l == loc {
				code = i + 1
			}
		}
		if code == 0 {
			w.locs = append(w.locs, loc)
			code = len(w.locs)
		}
	}
	return binary.AppendUvarint(b, uint64(code))
}

// appendActor appends an event's agent and run path, referring to the ones written last when
// they are the same: as how many events back they were written.
func (w *logWriter) appendActor(b []byte, agent string, path []string) []byte {
	if w.sameActor(agent, path) {
		return binary.AppendUvarint(append(b, actorSame), uint64(w.n+1-w.actorBy))
	}
	b = appendLogString(append(b, actorNew), agent)
	b = binary.AppendUvarint(b, sliceLen(path))
	for _, s := range path {
		b = appendLogString(b, s)
	}
	w.agent, w.path, w.actorBy = agent, path, w.n+1
	return b
}

// sameActor reports whether agent and path are the actor written last.
func (w *logWriter) sameActor(agent string, path []string) bool {
	return w.actorBy > 0 && (sameString(agent, w.agent) || agent == w.agent) && samePath(path, w.path)
}

// samePath reports whether a and b hold the same steps, both absent or both not; run paths
// recorded on one visit share their array.
func samePath(a, b []string) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	if unsafe.SliceData(a) == unsafe.SliceData(b) {
		return true
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// appendInput appends in, the input of the event numbered seq of agent, as its length, the
// earlier input it extends (its number and how many of its messages it keeps; 0 for none) and
// the messages that follow.
func (w *logWriter) appendInput(b []byte, seq int64, agent string, in []Message) []byte {
	b = binary.AppendUvarint(b, sliceLen(in))
	if len(in) == 0 {
		return b
	}
	from, keep := w.inputs.base(seq, agent, in)
	b = binary.AppendUvarint(b, uint64(from))
	if from > 0 {
		b = binary.AppendUvarint(b, uint64(keep))
	}
	for i := keep; i < len(in); i++ {
		b = w.appendMessageRef(b, seq, &in[i])
	}
	return b
}

// appendExtension appends, as appendInput would, the input of the event numbered seq that is
// the first w.extend.Keep messages of event w.extend.From's input followed by added.
func (w *logWriter) appendExtension(b []byte, seq int64, added []Message) []byte {
	b = binary.AppendUvarint(b, uint64(w.extend.Keep+len(added))+1)
	b = binary.AppendUvarint(binary.AppendUvarint(b, uint64(w.extend.From)), uint64(w.extend.Keep))
	return w.appendAdded(b, seq, added)
}

func (w *logWriter) appendMessage(b []byte, m *Message) []byte {
	b = appendLogString(b, m.Role)
	b = w.text(b, m.Content)
	b = binary.AppendUvarint(b, sliceLen(m.ToolCalls))
	for _, tc := range m.ToolCalls {
		b = appendLogString(b, tc.ID)
		b = appendLogString(b, tc.Name)
		b = w.text(b, tc.Arguments)
	}
	b = appendLogString(b, m.ToolCallID)
	return appendLogString(b, m.ToolName)
}

func appendLogString(b []byte, s string) []byte {
	if len(s) < longString { // its length, doubled, fits a byte
		return append(append(b, byte(len(s)<<1)), s...)
	}
	return append(binary.AppendUvarint(b, uint64(len(s))<<1), s...)
}

func appendLogStrings4(b []byte, s1, s2, s3, s4 string) []byte {
	return appendLogString(appendLogString(appendLogString(appendLogString(b, s1), s2), s3), s4)
}

// appendFloat appends v: a 0 byte for zero (most durations a start event holds), else a 1 and
// its 8 bytes.
func appendFloat(b []byte, v float64) []byte {
	if bits := math.Float64bits(v); bits != 0 {
		return binary.LittleEndian.AppendUint64(append(b, 1), bits)
	}
	return append(b, 0)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// sliceLen is how a slice's length is written: 0 for nil, else its length plus one.
func sliceLen[S ~[]E, E any](s S) uint64 {
	if s == nil {
		return 0
	}
	return uint64(len(s)) + 1
}

// kindRunStarted is run.started's code.
const kindRunStarted = 1

// kindCode is k's index in Kinds plus one, or 0 for a kind the format does not know, written
// as a string after it.
func kindCode(k Kind) byte {
	switch { // the kinds of most events first, each a comparison of a few bytes
	case k == KindToolStarted:
		return 7
	case k == KindToolFinished:
		return 8
	case k == KindMessage:
		return 9
	}
	switch k {
	case KindRunStarted:
		return kindRunStarted
	case KindRunFinished:
		return 2
	case KindAgentStarted:
		return 3
	case KindAgentFinished:
		return 4
	case KindModelStarted:
		return 5
	case KindModelFinished:
		return 6
	case KindToolStarted:
		return 7
	case KindToolFinished:
		return 8
	case KindMessage:
		return 9
	case KindTransfer:
		return 10
	case KindAgentToolEnter:
		return 11
	case KindAgentToolExit:
		return 12
	case KindSessionSet:
		return 13
	case KindInterrupted:
		return 14
	case KindResumed:
		return 15
	case KindExit:
		return 16
	case KindBreakLoop:
		return 17
	case KindError:
		return 18
	case KindLost:
		return 19
	case KindPaused:
		return 20
	case KindContinued:
		return 21
	}
	return 0
}
