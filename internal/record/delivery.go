package record

import (
	"reflect"
	"slices"
	"time"

	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// Sink receives what a Recorder records, in order, from one goroutine at a time.
// *traces.Recording is the usual sink: it numbers the events and fans them out.
type Sink interface {
	// Emit records an event and returns it as recorded.
	Emit(traces.Event) traces.Event
	// PutAgent adds an agent to the run's tree or replaces the one of the same name.
	PutAgent(traces.Agent)
	// FinishAt records run.finished, at at (by the recorder's clock, as its events), with the
	// run's final status; nothing is emitted after it. *traces.Recording's FinishAt is it.
	FinishAt(at time.Time, status traces.Status, errMsg string)
}

// ender is a Sink that can deliver what it holds before the run's end is certain (see
// Recorder.ending).
type ender interface {
	// Ending delivers what was emitted so far, with how the run ends should nothing follow, and
	// returns how to wait until that is delivered: as long as the sink finds worth it, which is
	// never long. The next Emit makes the ending void.
	Ending(e ending) (await func())
	// EmitForeseen records the first event of the ending's tail, as recorded after all, and
	// keeps rest (the ending with the rest of its tail) in one step: nobody sees the event twice
	// or the ending void.
	EmitForeseen(e traces.Event, rest ending) traces.Event
}

// ending is how a run ends should nothing more happen in it: its status and time, and the events
// its end would record then (the agent.finished of every visit still open, innermost first).
type ending struct {
	Status traces.Status
	Error  string
	Time   time.Time
	Tail   []traces.Event
}

// delivery is the way from the recorder to its sink. It stamps the events a callback records
// with the callback's time, holds back what follows the end of an AgentTool call not decided yet
// (see inner.go), and keeps the ending the sink was promised (see Recorder.ending) until an event
// makes it void. Its callers hold the recorder's lock.
type delivery struct {
	sink  Sink
	ender ender // the sink, when it can deliver an ending; else nil
	// rec is the sink when it is a traces.Recording, which takes events by pointer: an event
	// then goes from the callback's stack into the log without a copy. Through Sink, whose
	// implementations may keep what they are given, each event would be copied on its way in and
	// out (192 bytes each time); and handed by pointer through the interface, it would escape to
	// the heap, an allocation an event.
	rec *traces.Recording
	// clock stamps every event the recorder emits (see runClock); stamp is the time of the
	// callback being recorded, 0 for none, which the events it records carry: one clock read per
	// callback rather than one per event.
	clock runClock
	stamp clock
	// lastAgent and lastPath are who acted last, and where: what a fact of no known agent is
	// blamed on.
	lastAgent string
	lastPath  []string
	parked    []*parkedCall // AgentTool calls not decided yet, and what waits behind them
	unparked  chan struct{} // closed when nothing is parked any more (see drained); nil until asked
	lastSeq   int64         // the seq of the event delivered last, 0 when it waits parked
	promised  *ending       // the ending the sink holds, if any
	// reuses is set when the sink keeps nothing an event points to once Emit returns (a
	// traces.Recording keeps a copy, encoded): the payloads of tool calls' events are then tools,
	// the same for every call, not allocated with each (see toolEvents). An event that waits
	// here instead of reaching the sink at once gets payloads of its own (see emit).
	reuses bool
	tools  toolPayloads
	// answers are the tool results' messages to record next, and where each call's end was
	// written (see addAnswer).
	answers   []traces.Message
	answersOf []*traces.ToolResult
}

// toolPayloads are the payloads of the events a tool call records: tool.started, tool.finished and
// the result's message.
type toolPayloads struct {
	started traces.ToolCall
	ended   traces.ToolCall
	result  traces.Message
}

func newDelivery(sink Sink) delivery {
	e, _ := sink.(ender)
	rec, encodes := sink.(*traces.Recording)
	return delivery{sink: sink, ender: e, rec: rec, reuses: encodes, clock: newRunClock()}
}

// payloads returns where tool call c's events keep their payloads: with the call, or, when the
// sink keeps none, the delivery's.
func (d *delivery) payloads(c *call) *toolPayloads {
	if c.tool != nil {
		return &c.tool.toolPayloads
	}
	if d.reuses {
		return &d.tools
	}
	return new(toolPayloads)
}

// own gives e payloads of its own for those that are the delivery's, reused by the next tool call.
func (d *delivery) own(e *traces.Event) {
	if e.Tool == &d.tools.started || e.Tool == &d.tools.ended {
		e.Tool = ptr(*e.Tool)
	}
	if e.Message == &d.tools.result {
		e.Message = ptr(*e.Message)
	}
}

// stampNow reads the clock for the callback being recorded: the events emitted until unstamp
// carry that time.
func (d *delivery) stampNow() clock {
	d.stamp = d.clock.now()
	return d.stamp
}

// unstamp ends the recording of a callback: later events are stamped when they are emitted.
func (d *delivery) unstamp() { d.stamp = 0 }

// finish hands the sink the run's end, stamped now as an event is (see at).
func (d *delivery) finish(status traces.Status, errMsg string) {
	d.sink.FinishAt(d.at().time(), status, errMsg)
}

// at returns the time of an event emitted now: the callback's being recorded, if any, else the
// clock's. It is read under the recorder's lock, so that times keep the order of the events.
func (d *delivery) at() clock {
	if d.stamp != 0 {
		return d.stamp
	}
	return d.clock.now()
}

// emit hands e to the sink, behind the parked calls if any, and remembers who acted last. An
// event without a time is stamped now (see delivery.at). e may be changed, and is not kept:
// callers pass an event of their own stack.
func (d *delivery) emit(e *traces.Event) {
	if e.Agent != "" {
		d.lastAgent, d.lastPath = e.Agent, e.RunPath
	}
	if e.Time.IsZero() {
		e.Time = d.at().time()
	}
	switch { // deliver's cases, at once: most events go straight to a traces.Recording
	case len(d.parked) > 0:
		d.parkBehind(e)
	case d.promised != nil:
		d.deliverPromised(e)
	case d.rec != nil:
		d.rec.Record(e)
		d.lastSeq = e.Seq
	default:
		d.lastSeq = d.emitCopy(e)
	}
}

// emitWithMessage is emit for e followed by the message event of its time and actor that
// carries m (a tool call's end, then its result's message): handed to a traces.Recording in one
// call when they go straight to it, else emitted one after the other, e changed into the second.
func (d *delivery) emitWithMessage(e *traces.Event, m *traces.Message) {
	if e.Time.IsZero() {
		e.Time = d.at().time()
	}
	if len(d.parked) > 0 || d.promised != nil || d.rec == nil {
		d.emit(e)
		e.Seq, e.Kind, e.Tool, e.Message = 0, traces.KindMessage, nil, m
		d.emit(e)
		return
	}
	if e.Agent != "" {
		d.lastAgent, d.lastPath = e.Agent, e.RunPath
	}
	d.lastSeq = d.rec.RecordWithMessage(e, m)
}

// emitTool is emit for a tool call's event by agent at path, carrying tc: its tool.started, or,
// when ended, its tool.finished; with result, emitWithMessage's for it and its result's message,
// which result is room for: filled (role tool, tc's result, call id and name) only when that
// message is built, not straight into a traces.Recording, where no Event is built either (see
// traces.Recording.RecordTool): a tool call's events are most of a run's. res, when not nil, is
// set to where an end was written there, for the next model input (see emitExtending); it is
// left as it is otherwise.
func (d *delivery) emitTool(ended bool, agent string, path []string, tc *traces.ToolCall, result *traces.Message, res *traces.ToolResult) {
	if d.rec == nil || len(d.parked) > 0 || d.promised != nil {
		d.emitToolEvent(ended, agent, path, tc, result)
		return
	}
	if agent != "" {
		d.lastAgent, d.lastPath = agent, path
	}
	d.lastSeq = d.rec.RecordTool(int64(d.at()), ended, agent, path, tc, result != nil, res)
}

// addAnswer adds the message by which an agent hands its model the result of tool call callID
// of tool name, saying content, to those recordAnswers records; of is where that call's end was
// written, if known (see traces.Recording.RecordMessages).
func (d *delivery) addAnswer(name, callID, content string, of *traces.ToolResult) {
	d.answers = append(d.answers, traces.Message{Role: string(schema.Tool), Content: content, ToolCallID: callID, ToolName: name})
	d.answersOf = append(d.answersOf, of)
}

// recordAnswers records the messages addAnswer added, as agent's at path: into a Recording in one
// call, else one by one through emit, each with a payload of its own.
func (d *delivery) recordAnswers(agent string, path []string) {
	if len(d.answers) == 0 {
		return
	}
	if d.rec == nil || len(d.parked) > 0 || d.promised != nil {
		d.emitAnswers(agent, path)
	} else {
		if agent != "" {
			d.lastAgent, d.lastPath = agent, path
		}
		d.lastSeq = d.rec.RecordMessages(int64(d.at()), agent, path, d.answers, d.answersOf)
	}
	d.answers, d.answersOf = d.answers[:0], d.answersOf[:0] // their strings are overwritten by the next
}

// emitAnswers is recordAnswers' way for every other case; apart, so that the usual way's frame
// holds no Event.
//
//go:noinline
func (d *delivery) emitAnswers(agent string, path []string) {
	for _, m := range d.answers {
		d.emit(&traces.Event{Kind: traces.KindMessage, Agent: agent, RunPath: path, Message: ptr(m)})
	}
}

// emitToolEvent is emitTool's way for every other case, through emit; apart, so that the usual
// way's frame holds no Event (see parkBehind).
//
//go:noinline
func (d *delivery) emitToolEvent(ended bool, agent string, path []string, tc *traces.ToolCall, result *traces.Message) {
	e := traces.Event{Kind: traces.KindToolStarted, Agent: agent, RunPath: path, Tool: tc}
	if ended {
		e.Kind = traces.KindToolFinished
	}
	if result == nil {
		d.emit(&e)
		return
	}
	*result = traces.Message{Role: string(schema.Tool), Content: tc.Result, ToolCallID: tc.CallID, ToolName: tc.Name}
	d.emitWithMessage(&e, result)
}

// parkBehind keeps e behind the last parked call. Apart from emit, whose frame then stays small:
// eino runs each tool call of a reply but the first on a goroutine of its own, whose stack starts
// small, and every frame on the way from a tool callback to the log is on it (a stack that
// outgrows its room is copied whole into one twice its size).
//
//go:noinline
func (d *delivery) parkBehind(e *traces.Event) {
	d.own(e)
	n := len(d.parked)
	d.parked[n-1].events = append(d.parked[n-1].events, *e)
	d.lastSeq = 0
}

// emitExtending is emit for a model.started whose input is the first keep messages of event
// from's followed by e.Model.Input, in which the results of the tool calls written at results
// may be (see traces.Recording.RecordExtending), and reports whether it was recorded so: only
// into a traces.Recording, at once (neither parked nor after a promised ending, which keep or
// compare whole events). Else the caller emits the input whole.
func (d *delivery) emitExtending(e *traces.Event, from int64, keep int, results []traces.ToolResult) bool {
	if d.rec == nil || len(d.parked) > 0 || d.promised != nil {
		return false
	}
	if e.Time.IsZero() {
		e.Time = d.at().time()
	}
	if !d.rec.RecordExtending(e, from, keep, results) {
		return false
	}
	if e.Agent != "" {
		d.lastAgent, d.lastPath = e.Agent, e.RunPath
	}
	d.lastSeq = e.Seq
	return true
}

// deliver hands e to the sink. While an ending is promised, an event that is the next of its
// tail (the drain of a copy of events recording what the tail foresaw) keeps the rest of it
// promised; any other means the run went on.
func (d *delivery) deliver(e *traces.Event) {
	if d.promised == nil {
		d.lastSeq = d.emitToSink(e)
		return
	}
	d.deliverPromised(e)
}

// deliverPromised is deliver while an ending is promised; apart, as parkBehind is.
//
//go:noinline
func (d *delivery) deliverPromised(e *traces.Event) {
	p := d.promised
	switch {
	case foreseen(p, *e):
		d.lastSeq = d.ender.EmitForeseen(*e, *p).Seq
	case lateFact(e.Kind):
		d.lastSeq = d.ender.EmitForeseen(*e, *p).Seq // before the tail, which still stands
	default:
		d.promised = nil
		d.lastSeq = d.emitToSink(e)
	}
}

// emitToSink records e in the sink and returns its seq.
func (d *delivery) emitToSink(e *traces.Event) int64 {
	if d.rec != nil {
		d.rec.Record(e)
		return e.Seq
	}
	return d.emitCopy(e)
}

// emitCopy records a copy of e in a sink other than a traces.Recording, and returns its seq;
// apart, as parkBehind is (the copies in and out take 400 bytes of stack).
//
//go:noinline
func (d *delivery) emitCopy(e *traces.Event) int64 { return d.sink.Emit(*e).Seq }

// promise hands the sink end, how the run ends should nothing follow, and returns how to wait
// until it is delivered. The sink must be an ender.
func (d *delivery) promise(end ending) (await func()) {
	d.promised = &end
	return d.ender.Ending(end)
}

// foreseen reports whether e is in p's tail, and takes it out: the first of it, or any agent's
// end (visits whose copies of events end at once may close in either order).
func foreseen(p *ending, e traces.Event) bool {
	for i, t := range p.Tail {
		if sameFact(e, t) {
			p.Tail = slices.Delete(slices.Clone(p.Tail), i, i+1)
			return true
		}
		if t.Kind != traces.KindAgentFinished {
			return false
		}
	}
	return false
}

// lateFact reports whether an event of kind, recorded after an ending, may be a fact of the work
// that ended, which the ending could not foresee (an OutputKey eino stores once the agent's
// runnable has returned, what a custom agent sends then): no new work, no change of outcome.
func lateFact(kind traces.Kind) bool {
	switch kind {
	case traces.KindSessionSet, traces.KindMessage, traces.KindExit, traces.KindBreakLoop:
		return true
	}
	return false
}

// sameFact reports whether a and b record the same fact, whenever and wherever in the trace.
func sameFact(a, b traces.Event) bool {
	a.Seq, a.Time, b.Seq, b.Time = 0, time.Time{}, 0, time.Time{}
	return reflect.DeepEqual(a, b)
}

// park parks the end of v's AgentTool call callID to callee, emitted next (agenttool.exited):
// it, and everything emitted after it, wait until the call is decided (see inner.go).
func (d *delivery) park(v *visit, callID, callee string) {
	d.parked = append(d.parked, &parkedCall{v: v, callID: callID, callee: callee})
}

// decide decides v's parked call callID and reports whether one was parked, undecided.
func (d *delivery) decide(v *visit, callID string) bool {
	for _, p := range d.parked {
		if p.v == v && p.callID == callID && !p.decided {
			p.decided = true
			d.release()
			return true
		}
	}
	return false
}

// decideAll decides the parked calls of v (of every visit when v is nil) by what the copies
// carried so far: v's copy has ended, or the run has.
func (d *delivery) decideAll(v *visit) {
	for _, p := range d.parked {
		if v == nil || p.v == v {
			p.decided = true
		}
	}
	d.release()
}

// release hands the sink the parked calls, and what waited behind them, up to the first
// undecided one.
func (d *delivery) release() {
	for len(d.parked) > 0 && d.parked[0].decided {
		p := d.parked[0]
		d.parked = d.parked[1:]
		p.events[0].AgentTool.InnerEvents = p.v.inner.innerEvents(p.callee)
		for i := range p.events {
			d.deliver(&p.events[i])
		}
	}
	if len(d.parked) == 0 && d.unparked != nil {
		close(d.unparked)
		d.unparked = nil
	}
}

// drained returns a channel closed once nothing is parked. Callers hold the recorder's lock.
func (d *delivery) drained() <-chan struct{} {
	if len(d.parked) == 0 {
		return alwaysClosed
	}
	if d.unparked == nil {
		d.unparked = make(chan struct{})
	}
	return d.unparked
}

// foreseeParked passes to add what is parked, as releasing it all now would deliver it, without
// changing it.
func (d *delivery) foreseeParked(add func(traces.Event)) {
	for _, p := range d.parked {
		for i, e := range p.events {
			if i == 0 {
				exited := *e.AgentTool
				exited.InnerEvents = p.v.inner.innerEvents(p.callee)
				e.AgentTool = &exited
			}
			add(e)
		}
	}
}
