package traces

import (
	"encoding/binary"
	"math"
	"time"
	"unsafe"
)

// logReader decodes a log's events for one reader, keeping what later events refer to: the
// inputs it decoded (by number) with the arrays they share, and the run paths. It is not safe
// for concurrent use.
type logReader struct {
	inputs *eventState
	actors map[int]actor // by the index of the event that wrote them
	// lastActor is the one read last, written by the event of index lastActorBy (-1: none).
	lastActor   actor
	lastActorBy int
	locs        []*time.Location // the writer's, as far as this reader has seen them
}

func newLogReader() *logReader {
	inputs := newEventState()
	inputs.unbounded = true // the log holds a run already checked on its way in
	return &logReader{inputs: inputs, actors: make(map[int]actor), lastActorBy: -1}
}

// all decodes every event of l, or returns nil when it has none. locs is the writer's time zones
// as they were when l was copied.
func (l *eventLog) all(locs []*time.Location) []Event {
	if l.n == 0 {
		return nil
	}
	events := make([]Event, l.n)
	newLogReader().read(l, locs, events, 0, l.n)
	return events
}

// read decodes into p the events of l after the first from and up to the to-th, as many as fit,
// and returns how many. locs is the writer's time zones as they were when l was copied.
func (r *logReader) read(l *eventLog, locs []*time.Location, p []Event, from, to int) int {
	r.locs = locs
	n := min(len(p), to-from)
	for i := range n {
		r.event(l, from+i, &p[i])
	}
	return n
}

// event decodes event number i+1 of l into e, its inputs whole.
func (r *logReader) event(l *eventLog, i int, e *Event) {
	refs := r.raw(l, i, e)
	for _, ref := range refs {
		if ref.hasFrom {
			r.need(l, ref.from)
		}
	}
	r.resolve(int64(i+1), e, refs)
}

// need makes sure the input of event number seq is known, decoding the events it extends that
// are not, oldest first.
func (r *logReader) need(l *eventLog, seq int64) {
	stack := []int64{seq}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		if _, ok := r.inputs.bySeq[s]; ok {
			stack = stack[:len(stack)-1]
			continue
		}
		var e Event
		refs := r.raw(l, int(s-1), &e)
		missing := false
		for _, ref := range refs {
			if _, ok := r.inputs.bySeq[ref.from]; ref.hasFrom && !ok {
				stack, missing = append(stack, ref.from), true
			}
		}
		if !missing {
			r.resolve(s, &e, refs)
			stack = stack[:len(stack)-1]
		}
	}
}

// resolve makes the inputs of e, numbered seq, whole, once those it refers to are known.
func (r *logReader) resolve(seq int64, e *Event, refs [2]inputRef) {
	if e.Model != nil {
		mustResolve(r.inputs.resolve(int(seq-1), seq, "model", &e.Model.Input, refs[refModel]))
	}
	if e.AgentRun != nil {
		mustResolve(r.inputs.resolve(int(seq-1), seq, "agent_run", &e.AgentRun.Input, refs[refAgentRun]))
	}
	r.inputs.remember(e)
}

// mustResolve panics on a reference the log's own writer could not have written: a bug.
func mustResolve(err error) {
	if err != nil {
		panic("traces: recording's event log: " + err.Error())
	}
}

// logDecoder reads one encoded event.
type logDecoder struct {
	r   *logReader
	l   *eventLog
	c   []byte // the event's chunk
	off int
	i   int // the event's index in the log (its number less one)
}

// decoder returns a decoder at the start of event number i+1 of l.
func (r *logReader) decoder(l *eventLog, i int) logDecoder {
	at := l.start(i)
	return logDecoder{r: r, l: l, c: l.chunks[at>>32], off: int(at & math.MaxUint32), i: i}
}

// raw decodes event number i+1 of l into e, with its inputs as written: the messages that
// follow the input each refers to (refs).
func (r *logReader) raw(l *eventLog, i int, e *Event) (refs [2]inputRef) {
	*e = Event{}
	d := r.decoder(l, i)
	e.Seq = int64(i+1) + d.varint()
	e.Time = d.time()
	if code := d.byte(); code == 0 {
		e.Kind = Kind(d.str())
	} else {
		e.Kind = Kinds[code-1]
	}
	a := d.actor()
	e.Agent, e.RunPath = a.agent, a.path
	mask := d.uvarint()
	if mask&hasRun != 0 {
		e.Run = &RunMark{Flow: d.str(), Input: d.str(), Status: Status(d.str()), Error: d.str()}
		if d.bool() {
			e.Run.ForkedFrom = &ForkOrigin{Run: d.str(), Seq: d.varint()}
		}
	}
	if mask&hasAgentRun != 0 {
		a := new(AgentRun)
		a.Input, refs[refAgentRun] = d.input()
		a.Resumed, a.Via, a.Error, a.Interrupted, a.Iteration = d.bool(), d.str(), d.str(), d.bool(), int(d.varint())
		e.AgentRun = a
	}
	if mask&hasModel != 0 {
		e.Model = d.model(&refs[refModel])
	}
	if mask&hasTool != 0 {
		e.Tool = &ToolCall{Name: d.str(), CallID: d.str(), Arguments: d.str(), Result: d.str(), Error: d.str(),
			DurationMS: d.float(), Interrupted: d.bool()}
	}
	if mask&hasMessage != 0 {
		e.Message = new(Message)
		d.message(e.Message)
	}
	d.payloads(e, mask)
	return refs
}

func (d *logDecoder) model(ref *inputRef) *ModelCall {
	m := &ModelCall{ID: d.str()}
	m.Name = d.str()
	m.Input, *ref = d.input()
	if n := d.uvarint(); n > 0 {
		m.Tools = make([]string, n-1)
		for i := range m.Tools {
			m.Tools[i] = d.str()
		}
	}
	if d.bool() {
		m.Output = new(Message)
		d.message(m.Output)
	}
	if d.bool() {
		m.Usage = &Usage{PromptTokens: int(d.varint()), CompletionTokens: int(d.varint()), TotalTokens: int(d.varint())}
	}
	m.DurationMS, m.Error = d.float(), d.str()
	return m
}

// payloads decodes the payloads appendLogPayloads writes.
func (d *logDecoder) payloads(e *Event, mask uint64) {
	if mask&hasTransfer != 0 {
		e.Transfer = &Transfer{From: d.str(), To: d.str(), Mode: d.str(), CallID: d.str(), Outcome: d.str(), Error: d.str(),
			ErrorBy: d.str()}
	}
	if mask&hasAgentTool != 0 {
		e.AgentTool = &AgentToolCall{Caller: d.str(), Callee: d.str(), CallID: d.str(), Request: d.str(),
			InputMode: d.str(), Result: d.str(), InnerEvents: d.str()}
	}
	if mask&hasSession != 0 {
		s := &SessionSet{Key: d.str()}
		if n := int(d.uvarint()); n > 0 {
			// Capped at its length: appending to it must not write into the log.
			s.Value = d.c[d.off : d.off+n-1 : d.off+n-1]
			d.off += n - 1
		}
		s.SetBy = d.str()
		e.Session = s
	}
	if mask&hasInterrupt != 0 {
		e.Interrupt = &Interrupt{ID: d.str(), Address: d.str(), Info: d.str()}
	}
	if mask&hasExit != 0 {
		e.Exit = &Exit{FinalResult: d.str()}
	}
	if mask&hasBreakLoop != 0 {
		e.BreakLoop = &BreakLoop{From: d.str(), Iterations: int(d.varint())}
	}
	if mask&hasError != 0 {
		e.Error = &ErrorDetail{Message: d.str()}
	}
	if mask&hasLost != 0 {
		e.Lost = &Lost{Count: d.varint()}
	}
	if mask&hasPause != 0 {
		d.pause(e)
	}
}

// pause decodes a paused or continued event's payload.
func (d *logDecoder) pause(e *Event) {
	p := &Pause{Break: d.str(), Target: d.str(), Action: d.str(), By: d.str(), At: d.varint()}
	p.Detail, p.Edited = d.str(), d.str()
	p.On, p.Feed, _, _ = d.str(), d.str(), d.str(), d.str()
	if d.bool() {
		p.Reply = new(Message)
		d.message(p.Reply)
	}
	if n := d.uvarint(); n > 0 {
		p.Input = make([]Message, n-1)
		for i := range p.Input {
			d.message(&p.Input[i])
		}
	}
	for _, s := range [...]**string{&p.Args, &p.Result} {
		if d.bool() {
			v := d.str()
			*s = &v
		}
	}
	if n := int(d.uvarint()); n > 0 {
		p.Value = d.c[d.off : d.off+n-1 : d.off+n-1]
		d.off += n - 1
	}
	e.Pause = p
}

// input decodes an input as appendInput writes it: the messages after those it keeps of the
// input it refers to.
func (d *logDecoder) input() ([]Message, inputRef) {
	n := d.uvarint()
	if n <= 1 {
		if n == 0 {
			return nil, inputRef{}
		}
		return []Message{}, inputRef{}
	}
	var ref inputRef
	if from := d.uvarint(); from > 0 {
		ref = inputRef{from: int64(from), keep: int64(d.uvarint()), hasFrom: true, hasKeep: true}
	}
	tail := make([]Message, int(n-1)-int(ref.keep))
	for i := range tail {
		d.message(&tail[i])
	}
	return tail, ref
}

func (d *logDecoder) message(m *Message) {
	switch d.c[d.off] {
	case toolResultRef:
		d.off++
		back := int(d.uvarint())
		d.toolResult(m, d.l.start(d.i-back)+d.uvarint())
		return
	case replyRef:
		d.off++
		back := int(d.uvarint())
		at := d.l.start(d.i-back) + d.uvarint()
		r := logDecoder{r: d.r, l: d.l, c: d.l.chunks[at>>32], off: int(at & math.MaxUint32), i: d.i - back}
		r.message(m)
		return
	}
	m.Role, m.Content = d.str(), d.str()
	if n := d.uvarint(); n > 0 {
		m.ToolCalls = make([]ToolCallSpec, n-1)
		for i := range m.ToolCalls {
			m.ToolCalls[i] = ToolCallSpec{ID: d.str(), Name: d.str(), Arguments: d.str()}
		}
	}
	m.ToolCallID, m.ToolName = d.str(), d.str()
}

// toolResult decodes, as the message m, the result of the tool call whose payload is at at.
func (d *logDecoder) toolResult(m *Message, at uint64) {
	t := logDecoder{r: d.r, l: d.l, c: d.l.chunks[at>>32], off: int(at & math.MaxUint32), i: d.i}
	name, callID := t.str(), t.str()
	t.str() // its arguments
	*m = Message{Role: "tool", Content: t.str(), ToolCallID: callID, ToolName: name}
}

// actor is an event's agent and run path, as read once for all the events that share them.
type actor struct {
	agent string
	path  []string
}

// actor decodes an event's agent and run path, sharing the path among the events on it.
func (d *logDecoder) actor() actor {
	if d.byte() == actorNew {
		return d.newActor()
	}
	by := d.i - int(d.uvarint())
	if by == d.r.lastActorBy && d.r.lastActorBy >= 0 {
		return d.r.lastActor
	}
	if a, ok := d.r.actors[by]; ok {
		d.r.lastActor, d.r.lastActorBy = a, by
		return a
	}
	// Written before this reader started: read it in the event that wrote it.
	w := d.r.decoder(d.l, by)
	w.varint()
	w.time()
	if w.byte() == 0 {
		w.str()
	}
	w.byte() // actorNew
	return w.newActor()
}

// newActor decodes the agent and path written where d is, by d's event.
func (d *logDecoder) newActor() actor {
	a := actor{agent: d.str()}
	if n := d.uvarint(); n > 0 {
		a.path = make([]string, n-1)
		for i := range a.path {
			a.path[i] = d.str()
		}
	}
	d.r.actors[d.i] = a
	d.r.lastActor, d.r.lastActorBy = a, d.i
	return a
}

func (d *logDecoder) time() time.Time {
	if d.byte() == timeUTC {
		ns := int64(binary.LittleEndian.Uint64(d.c[d.off:]))
		d.off += 8
		return time.Unix(0, ns).UTC()
	}
	sec, nsec := d.varint(), d.uvarint()
	t := time.Unix(sec, int64(nsec))
	if code := d.uvarint(); code > 0 {
		return t.In(d.r.locs[code-1])
	}
	return t.UTC()
}

// str decodes a string where it is in the log, without copying it.
func (d *logDecoder) str() string {
	h := d.uvarint()
	n := int(h >> 1)
	if n == 0 {
		return ""
	}
	if h&1 != 0 { // written before, at
		at := d.uvarint()
		b := d.l.chunks[at>>32][at&math.MaxUint32:][:n]
		return unsafe.String(unsafe.SliceData(b), n)
	}
	b := d.c[d.off : d.off+n]
	d.off += n
	return unsafe.String(unsafe.SliceData(b), n)
}

func (d *logDecoder) byte() byte {
	c := d.c[d.off]
	d.off++
	return c
}

func (d *logDecoder) bool() bool { return d.byte() != 0 }

func (d *logDecoder) uvarint() uint64 {
	if c := d.c[d.off]; c < 0x80 {
		d.off++
		return uint64(c)
	}
	v, n := binary.Uvarint(d.c[d.off:])
	d.off += n
	return v
}

func (d *logDecoder) varint() int64 {
	v, n := binary.Varint(d.c[d.off:])
	d.off += n
	return v
}

func (d *logDecoder) float() float64 {
	if d.byte() == 0 {
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.c[d.off:]))
	d.off += 8
	return v
}
