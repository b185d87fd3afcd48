package traces

import (
	"bytes"
	"encoding/json"
	"slices"
	"unsafe"

	"github.com/baton-dev/baton/internal/grow"
)

// Format version 2 stores each model (and agent) input once: an event whose input begins with
// an earlier event's input refers to it (input_from: that event's seq, input_keep: how many of its
// messages to keep) and holds only the messages that follow. A growing conversation then takes
// space linear in its messages, not quadratic. In memory every event keeps its full input; the
// inputs of one conversation share a backing array, as the recorder builds them live.

// EventEncoder writes a run's events in the compact form of the current format version, one at
// a time and in seq order, remembering what the references of later events need: the latest
// input of each agent and of the run. To encode an event of a run already partly written, first
// pass it the run's earlier events (discarding what it writes). It is not safe for concurrent
// use; the zero value is ready.
type EventEncoder struct {
	byAgent map[string]seqInput
	last    seqInput
}

// seqInput is the full input of the event numbered seq, of n messages. A recording's log keeps
// only n of an input it was handed as an extension of an earlier one (see
// Recording.RecordExtending): input is then nil, and no later input is compared with it.
type seqInput struct {
	seq   int64
	input []Message
	n     int
}

// InputRef is where an event's input begins: with the first Keep messages of the input of
// event From (input_from and input_keep), the messages after them written out; none when Keep
// is 0.
type InputRef struct {
	From int64
	Keep int
}

// InputRefs are the input references of an event's model and agent_run.
type InputRefs struct{ Model, AgentRun InputRef }

// AppendEvent appends e to dst as one line of compact JSON (no newline) and returns the result.
// It fails only for values JSON cannot hold (a time past year 9999, a session value that is not
// JSON, a duration that is not a number).
func (enc *EventEncoder) AppendEvent(dst []byte, e Event) ([]byte, error) {
	return AppendEventRefs(dst, &e, enc.Refs(&e))
}

// Refs returns the input references AppendEvent writes for e, and notes e for the events after
// it as AppendEvent does: for a reader that writes the events later, or more than once, each
// with the references it was given (AppendEventRefs).
func (enc *EventEncoder) Refs(e *Event) InputRefs {
	var refs InputRefs
	if e.Model != nil {
		refs.Model.From, refs.Model.Keep = enc.base(e.Seq, e.Agent, e.Model.Input)
	}
	if e.AgentRun != nil {
		refs.AgentRun.From, refs.AgentRun.Keep = enc.base(e.Seq, e.Agent, e.AgentRun.Input)
	}
	enc.remember(e.Seq, e.Agent, eventInput(e))
	return refs
}

// AppendEventRefs appends e to dst as AppendEvent does, with the input references refs (from
// Refs, or zero for inputs written out whole, as format version 1 writes them).
func AppendEventRefs(dst []byte, e *Event, refs InputRefs) ([]byte, error) {
	w := eventWriter{b: dst}
	w.event(e, refs.Model, refs.AgentRun)
	if w.err != nil {
		return dst, Errorf(CodeInternal, "encode event %d: %v", e.Seq, w.err)
	}
	return w.b, nil
}

// base returns the earlier event whose input shares the longest beginning with in, the input of
// event seq of agent (the latest of that agent, or the run's latest), and how many messages they
// share; keep is 0 when none does.
func (enc *EventEncoder) base(seq int64, agent string, in []Message) (from int64, keep int) {
	for _, c := range [2]seqInput{enc.byAgent[agent], enc.last} {
		if c.seq < 1 || c.seq >= seq {
			continue // no reference a reader could follow
		}
		if k := commonPrefix(c.input, in); k > keep {
			from, keep = c.seq, k
		}
	}
	return from, keep
}

// remember notes in, the input of event seq of agent (see eventInput), if it has one, for the
// events after it.
func (enc *EventEncoder) remember(seq int64, agent string, in []Message) {
	if len(in) > 0 {
		if enc.byAgent == nil {
			enc.byAgent = make(map[string]seqInput)
		}
		enc.last = seqInput{seq, in, len(in)}
		enc.byAgent[agent] = enc.last
	}
}

// rememberExtension notes that event seq of agent has an input of n messages (n > 0), which the
// encoder was not handed whole.
func (enc *EventEncoder) rememberExtension(seq int64, agent string, n int) {
	if enc.byAgent == nil {
		enc.byAgent = make(map[string]seqInput)
	}
	enc.last = seqInput{seq: seq, n: n}
	enc.byAgent[agent] = enc.last
}

// extendable reports whether event from's input is agent's latest, and has keep messages or more.
func (enc *EventEncoder) extendable(agent string, from int64, keep int) bool {
	c := enc.byAgent[agent]
	return from > 0 && keep > 0 && c.seq == from && c.n >= keep
}

// eventInput is the input later events may refer to: its model's, else its agent_run's.
func eventInput(e *Event) []Message {
	switch {
	case e.Model != nil && len(e.Model.Input) > 0:
		return e.Model.Input
	case e.AgentRun != nil:
		return e.AgentRun.Input
	}
	return nil
}

// commonPrefix returns how many messages a and b begin with alike. Inputs recorded or read
// from one conversation share their backing array, and then need no comparing.
func commonPrefix(a, b []Message) int {
	n := min(len(a), len(b))
	if n == 0 || &a[0] == &b[0] || sameBits(a[:n], b[:n]) {
		return n
	}
	for i := range n {
		if !sameMessage(&a[i], &b[i]) {
			return i
		}
	}
	return n
}

// sameBits reports whether a and b, as long as each other, hold the same bits: the same strings
// and lists, as when an input that outgrew its array was copied into a new one. Bits that differ
// can still be equal messages.
func sameBits(a, b []Message) bool {
	size := len(a) * int(unsafe.Sizeof(Message{}))
	return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), size), unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), size))
}

func sameMessage(a, b *Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.ToolCallID == b.ToolCallID &&
		a.ToolName == b.ToolName && slices.Equal(a.ToolCalls, b.ToolCalls)
}

// inputRef is an input reference as read: input_from and input_keep of one payload.
type inputRef struct {
	from, keep       int64
	hasFrom, hasKeep bool
}

// eventState checks a run's events one after another as they are read, and resolves their
// input references.
type eventState struct {
	n    int   // events accepted so far
	prev Event // the last of them
	// bySeq holds the full input of each event that has one, for references to it.
	bySeq map[int64][]Message
	// allocated is what resolving the inputs accepted so far allocated (see spend); read is how
	// many bytes of trace were read: allocated stays within expandBudget(read).
	allocated, read int64
	// unbounded skips the budget, for a run already checked.
	unbounded bool
	// arrays maps the first element of each backing array of inputs to the array up to the
	// last message any input uses, so that extending the newest input appends in place.
	arrays map[*Message][]Message
	// said is the newest message of a message event or a model's output.
	said *Message
	// validated says the events passed ValidateEvent as they were read (in parts, on several
	// cores): accept checks only what their order decides.
	validated bool
}

func newEventState() *eventState {
	return &eventState{bySeq: make(map[int64][]Message), arrays: make(map[*Message][]Message)}
}

// remember keeps e's input, if it has one (see eventInput), for the references of later events.
func (st *eventState) remember(e *Event) {
	if in := eventInput(e); len(in) > 0 {
		st.bySeq[e.Seq] = in
	}
}

// accept checks e, the i-th event, as Validate would after the events before it, first
// resolving its input references refs (indexed by refModel and refAgentRun).
func (st *eventState) accept(i int, e *Event, refs *[2]inputRef) error {
	if want := int64(st.n + 1); e.Seq != want {
		return seqError(i, e.Seq, want)
	}
	allocated := st.allocated
	if e.Model != nil {
		if err := st.resolve(i, e.Seq, "model", &e.Model.Input, refs[refModel]); err != nil {
			st.allocated = allocated
			return err
		}
	}
	if e.AgentRun != nil {
		if err := st.resolve(i, e.Seq, "agent_run", &e.AgentRun.Input, refs[refAgentRun]); err != nil {
			st.allocated = allocated
			return err
		}
	}
	if st.n > 0 && slices.Equal(e.RunPath, st.prev.RunPath) {
		e.RunPath = st.prev.RunPath // share it, as a recording does
	}
	if e.Session != nil && e.Session.Value == nil {
		e.Session.Value = json.RawMessage("null") // as Marshal writes an absent value
	}
	var prev *Event
	if st.n > 0 {
		prev = &st.prev
	}
	var err error
	if st.validated {
		err = checkPlace(i, prev, e)
	} else {
		err = checkEvent(i, prev, *e)
	}
	if err != nil {
		st.allocated = allocated
		return err
	}
	st.remember(e)
	st.shareMessage(e)
	st.n++
	st.prev = *e
	return nil
}

// shareMessage makes e's message, or its model's output, the newest one of either when they are
// the same, as a recording does: a model's reply and the message event that carries it are one
// message.
func (st *eventState) shareMessage(e *Event) {
	m := &e.Message
	if e.Model != nil {
		m = &e.Model.Output
	}
	switch {
	case *m == nil:
	case st.said != nil && sameMessage(st.said, *m):
		*m = st.said
	default:
		st.said = *m
	}
}

// mark is what rollback needs to take the state back to where it was.
type mark struct {
	n         int
	prev      Event
	allocated int64
}

func (st *eventState) mark() mark { return mark{st.n, st.prev, st.allocated} }

// rollback forgets the events accepted since m. Arrays their inputs extended stay registered
// longer than the inputs left: extending those makes a copy, never changes what is kept.
func (st *eventState) rollback(m mark) {
	for seq := int64(m.n) + 1; seq <= int64(st.n); seq++ {
		delete(st.bySeq, seq)
	}
	st.n, st.prev, st.allocated = m.n, m.prev, m.allocated
}

// resolve turns the input *in of the i-th event, numbered seq, read with the reference ref into
// the full input, counting what that allocates against the run's budget first (see spend): a
// reference is refused before it is followed when the copy it makes is past the budget.
func (st *eventState) resolve(i int, seq int64, payload string, in *[]Message, ref inputRef) error {
	switch {
	case !ref.hasFrom && !ref.hasKeep:
		if err := st.spend(i, payload, InputSize(*in)); err != nil {
			return err
		}
		if len(*in) > 0 {
			st.arrays[&(*in)[0]] = *in
			*in = (*in)[:len(*in):len(*in)]
		}
		return nil
	case !ref.hasFrom:
		return Errorf(CodeInvalid, "events[%d].%s has input_keep but no input_from: name the event whose input it keeps", i, payload)
	case !ref.hasKeep:
		return Errorf(CodeInvalid, "events[%d].%s has input_from but no input_keep: say how many of that event's messages it keeps", i, payload)
	case ref.from < 1 || ref.from >= seq:
		return Errorf(CodeInvalid, "events[%d].%s.input_from is %d: it must be the seq of an earlier event", i, payload, ref.from)
	}
	base, ok := st.bySeq[ref.from]
	if !ok {
		return Errorf(CodeInvalid, "events[%d].%s.input_from is %d, but event %d has no input", i, payload, ref.from, ref.from)
	}
	if ref.keep < 1 || ref.keep > int64(len(base)) {
		return Errorf(CodeInvalid, "events[%d].%s.input_keep is %d, but event %d's input has %d messages: keep 1 to %d", i, payload, ref.keep, ref.from, len(base), len(base))
	}
	keep := int(ref.keep)
	if err := st.spend(i, payload, InputSize(*in)+st.copies(base, keep, len(*in))); err != nil {
		return err
	}
	*in = st.extend(base, keep, *in)
	return nil
}

// messageShare is what a copy of a message takes in memory (a Message is 88 bytes), the
// strings it shares with the message copied aside.
const messageShare = 96

// copies is what extend(base, keep, tail) allocates, for a tail of n messages, besides the tail
// itself: nothing when it keeps a beginning of base and adds nothing, or appends in place; a
// new array when base's outgrows its room (twice the room) or when it branches off base (the
// kept messages and the tail).
func (st *eventState) copies(base []Message, keep, n int) int64 {
	switch {
	case n == 0:
		return 0
	case keep == len(base):
		if array := st.arrays[&base[0]]; len(array) == keep {
			if need := keep + n; need > cap(array) {
				return messageShare * int64(max(need, 2*cap(array)))
			}
			return 0
		}
	}
	return messageShare * int64(keep+n)
}

// spend counts size bytes that resolving an input allocates against the run's budget: the
// messages it holds that no earlier input shares, at InputSize, and the arrays it copies, at
// messageShare a message (see MaxExpandedInput).
func (st *eventState) spend(i int, payload string, size int64) error {
	st.allocated += size
	if st.unbounded {
		return nil
	}
	if budget := expandBudget(st.read); st.allocated > budget {
		return Errorf(CodeInvalid, "events[%d].%s: the run's input references would copy more than %d MiB (%d bytes) of messages for %d bytes of trace: "+
			"Baton takes a run whose inputs, each sharing what it keeps of the input it refers to when it extends the newest one, take at most %d MiB, "+
			"and %d times its own size past the first %d MiB; refer to the newest input, refer to fewer messages or split the run",
			i, payload, budget>>20, budget, st.read, MaxExpandedInput>>20, ExpandPerByte, MinExpandBudget>>20)
	}
	return nil
}

// extend returns the first keep messages of base followed by tail, sharing base's messages
// rather than copying them whenever it can.
func (st *eventState) extend(base []Message, keep int, tail []Message) []Message {
	n := keep + len(tail)
	if len(tail) == 0 {
		return base[:keep:keep]
	}
	if keep == len(base) {
		if array := st.arrays[&base[0]]; len(array) == keep {
			// base is the newest input on its array: append after it, in place when there is room.
			array = append(grow.Doubling(array, len(tail)), tail...)
			st.arrays[&array[0]] = array
			return array[:n:n]
		}
	}
	// A branch: a new array, no larger than it must be. Doubling here would let a trace whose
	// every input branches off the one before take twice its inputs' size; an input that then
	// grows in place doubles from here.
	array := append(append(make([]Message, 0, n), base[:keep]...), tail...)
	st.arrays[&array[0]] = array
	return array
}

// EventDecoder reads a run's events one at a time, in seq order, as EventEncoder writes them:
// each is read and checked as Unmarshal reads and checks the events of a trace file, and its
// input references are resolved against the events it read before. It is not safe for
// concurrent use.
type EventDecoder struct {
	st *eventState
	// Decode's: the strings of the events read lately, to share as Unmarshal shares them.
	strs *stringTable
	pack stringPack
	// What DecodeEvents reads into, kept for its next call.
	events []Event
	refs   [][2]inputRef
}

// NewEventDecoder returns a decoder expecting the run's first event.
func NewEventDecoder() *EventDecoder { return &EventDecoder{st: newEventState()} }

// Decode reads the next event from data, one JSON object. Every problem is an *Error with
// CodeInvalid naming the event as events[seq-1]; after one the decoder expects the same event
// again. Equal strings of the events it reads are one string, and short ones are packed in
// blocks, as Unmarshal reads a trace file, so that a run read back row by row takes no more
// memory than recorded live: the decoder keeps a table of the strings read lately (some 8,000)
// until it is dropped.
func (dec *EventDecoder) Decode(data []byte) (Event, error) {
	if dec.strs == nil {
		dec.strs = newStringTable(recentBuckets, &dec.pack)
	}
	d := &decoder{data: data, what: "event", version: FormatVersion, recent: dec.strs, pack: &dec.pack}
	i := dec.st.n
	d.path = append(d.path, pathStep{name: "events"}, pathStep{index: i})
	var e Event
	err := d.document(func() error { return d.object(eventPlan.fields, unsafe.Pointer(&e)) })
	if err != nil {
		return Event{}, err
	}
	dec.st.read += int64(len(data))
	if err := dec.st.accept(i, &e, &d.refs); err != nil {
		dec.st.read -= int64(len(data))
		return Event{}, err
	}
	return e, nil
}

// RawJSON is a JSON value that DecodeJSON checks and keeps as written, sharing the data rather
// than copying it: for a value another decoder reads on, such as the events of a request that
// EventDecoder.DecodeEvents reads.
type RawJSON []byte

// DecodeEvents reads data, a JSON array of the run's next events (null for none), each as Decode
// reads it, for a reader that gets a run's events in batches, such as an app's posts. check, when
// not nil, sees the events first, their inputs as written (a reference not yet followed), and its
// error refuses them. It reads all of them or none: after an error the decoder expects the
// array's first event again. Problems are *Errors with CodeInvalid naming events[i] of the array.
// The slice it returns is the decoder's, valid until its next call: copy the events to keep them.
// It shares strings only within data: a table of every string a live session ever sent, refused
// posts' included, would grow at the sender's will.
func (dec *EventDecoder) DecodeEvents(data []byte, check func([]Event) error) ([]Event, error) {
	d := &decoder{data: data, what: "events", version: FormatVersion}
	clear(dec.events) // not to hold on to the payloads of the last call
	events, refs := dec.events[:0], dec.refs[:0]
	defer func() { dec.events, dec.refs = events, refs }()
	c, err := d.peek()
	switch {
	case err != nil:
		return nil, err
	case c == 'n':
		err = d.literal("null")
	case c != '[':
		return nil, d.typeError(c, "an array")
	default:
		err = d.elements(func(i int) error {
			d.path = append(d.path[:0], pathStep{name: "events"}, pathStep{index: i})
			d.refs = [2]inputRef{}
			var e Event
			if err := d.event(&e); err != nil {
				return err
			}
			events, refs = append(events, e), append(refs, d.refs)
			return nil
		})
	}
	if err != nil {
		return nil, err
	}
	if !d.atEnd() {
		return nil, Errorf(CodeInvalid, "events have data after their closing bracket")
	}
	if check != nil {
		if err := check(events); err != nil {
			return nil, err
		}
	}
	m := dec.st.mark()
	read := dec.st.read
	dec.st.read += int64(len(data))
	for i := range events {
		if err := dec.st.accept(i, &events[i], &refs[i]); err != nil {
			dec.st.rollback(m)
			dec.st.read = read
			return nil, err
		}
	}
	return events, nil
}
