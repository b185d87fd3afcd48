package record

import (
	"slices"
	"unsafe"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// echoes counts off what a visit's copy of events repeats of what its callbacks recorded: each
// model reply, when its replies are events (see repliesAreEvents), and each tool result. They
// are recorded once, from callbacks; the end of the visit's work waits until its copy has carried
// them (see Recorder.ending). Its callers hold the recorder's lock.
type echoes struct {
	// replies are the model replies recorded from callbacks, not echoed yet, oldest first: a
	// window of room, counted off at its front and expected at its back (see makeRoom).
	replies []*traces.Message
	room    []*traces.Message
	// results[echoed:] are the call ids of the tool results recorded from callbacks that the copy
	// has not carried yet, in the order they ended ("" for a call of no id): counted off at the
	// front, with no copy, and emptied once all are.
	results  []string
	echoed   int
	caughtUp chan struct{} // closed when the echoes due are in (see due)
	observed chan struct{} // closed when an event of the visit's own is recorded (see catchUp)
}

// expectReply counts a model reply recorded from callbacks, whose echo the copy will carry.
func (e *echoes) expectReply(reply *traces.Message) {
	if len(e.replies) == cap(e.replies) {
		e.makeRoom()
	}
	e.replies = append(e.replies, reply)
}

// makeRoom makes room behind the replies for one more. It moves them to the front of room when
// those counted off left more room than they take: a streaming visit's copy of events
// counts off about a reply each time its callbacks expect the next, and without room at the back
// each reply would take an allocation. Else it takes a room twice their size, as append would.
func (e *echoes) makeRoom() {
	n := len(e.replies)
	if n < cap(e.room)-n || n == 0 && len(e.room) > 0 {
		copy(e.room, e.replies)
		clear(e.room[n:]) // the replies counted off are not kept alive
		e.replies = e.room[:n]
		return
	}
	e.room = make([]*traces.Message, max(2*n, 4))
	e.replies = e.room[:copy(e.room, e.replies)]
}

// dropLastReply forgets the latest reply expected: one that will never reach the copy.
func (e *echoes) dropLastReply() { e.replies = e.replies[:max(len(e.replies)-1, 0)] }

// expectResult counts the result of tool call callID, recorded from a callback, whose echo the
// copy will carry.
func (e *echoes) expectResult(callID string) { e.results = append(e.results, callID) }

// result reports whether ev, a whole message, repeats a tool result callbacks already recorded,
// and counts it off (see resultOf): a chat model agent's events carry each result of its tools. A
// streamed one is told once read (observe asks resultOf then).
func (e *echoes) result(ev *adk.AgentEvent) bool {
	mo := messageOf(ev)
	if ev.Err != nil || mo == nil || mo.Role != schema.Tool || mo.IsStreaming || mo.Message == nil {
		return false
	}
	return e.resultOf(mo.Message.ToolCallID)
}

// resultOf reports whether a tool message of call callID repeats a tool result callbacks already
// recorded, and counts it off. A message is told by its call's id: the result of a call that
// failed, which a tool middleware turned into the message the model reads, was never recorded
// from callbacks (they saw the error), and is the copy's to record, not the echo of the next
// call's result. A message of no id counts off the oldest.
func (e *echoes) resultOf(callID string) bool {
	if e.echoed == len(e.results) {
		return false
	}
	due := e.results[e.echoed:]
	if i := 0; callID != "" && callID != due[0] {
		if i = slices.Index(due, callID); i < 0 {
			if i = slices.Index(due, ""); i < 0 {
				return false
			}
		}
		copy(due[1:i+1], due[:i]) // the one echoed out, the others kept in order behind it
	}
	due[0] = ""
	if e.echoed++; e.echoed == len(e.results) {
		e.results, e.echoed = e.results[:0], 0
	}
	return true
}

// reply reports whether msg, a message of the visit's own events, repeats one of its model
// replies recorded from callbacks, and counts off that reply and any before it (events keep their
// order). A chat model agent's events carry each reply as it is; an agent that sends a message of
// its own (plan-execute's planner and replanner send their model's tool call arguments: the plan,
// the response) sends another message, which is the agent's. Call it once the replies streamed so
// far are recorded.
func (e *echoes) reply(msg *schema.Message) bool {
	if msg == nil || msg.Role == schema.Tool {
		return false
	}
	i := slices.IndexFunc(e.replies, func(reply *traces.Message) bool { return sameReply(msg, reply) })
	if i < 0 {
		return false
	}
	e.replies = e.replies[i+1:]
	return true
}

// oldest returns the oldest reply recorded from callbacks that the copy has not echoed yet, or nil.
func (e *echoes) oldest() *traces.Message {
	if len(e.replies) == 0 {
		return nil
	}
	return e.replies[0]
}

// countOff counts off reply, echoed, and any before it, as reply does for a message that says
// what reply says.
func (e *echoes) countOff(reply *traces.Message) {
	if i := slices.Index(e.replies, reply); i >= 0 {
		e.replies = e.replies[i+1:]
	}
}

// sameReply reports whether msg says what reply, as recorded, says: the same text and tool calls.
func sameReply(msg *schema.Message, reply *traces.Message) bool {
	return msg.Content == reply.Content && len(msg.ToolCalls) == len(reply.ToolCalls) && sameCallsAs(msg.ToolCalls, reply.ToolCalls)
}

// sameCallsAs reports whether tcs and calls, as many, are the same calls. An echo nearly always
// holds its reply's very strings: they are compared by where they are first, in a loop that calls
// nothing (nor saves the registers a call would), and byte by byte only from the first call that
// differs.
func sameCallsAs(tcs []schema.ToolCall, calls []traces.ToolCallSpec) bool {
	for i := range tcs { // by index: the calls are large structs, copied by a range over values
		tc, c := &tcs[i], &calls[i]
		if !sameRef(tc.ID, c.ID) || !sameRef(tc.Function.Name, c.Name) || !sameRef(tc.Function.Arguments, c.Arguments) {
			return sameCallTexts(tcs[i:], calls[i:])
		}
	}
	return true
}

// sameCallTexts reports whether tcs and calls, as many, are the same calls, byte by byte.
//
//go:noinline
func sameCallTexts(tcs []schema.ToolCall, calls []traces.ToolCallSpec) bool {
	for i := range tcs {
		tc, c := &tcs[i], &calls[i]
		if !sameText(tc.ID, c.ID) || !sameText(tc.Function.Name, c.Name) || !sameText(tc.Function.Arguments, c.Arguments) {
			return false
		}
	}
	return true
}

// sameText reports whether a and b are equal, at once when they are the very same bytes (a
// reply's echo shares its strings with the reply eino's model returned): no call to compare them.
func sameText(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// sameRef reports whether a and b are the very same bytes.
func sameRef(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// allIn reports whether every echo due has been carried.
func (e *echoes) allIn() bool { return len(e.replies) == 0 && e.echoed == len(e.results) }

// due returns a channel closed once the copy has carried, and the recorder recorded, the echo of
// every reply and tool result callbacks recorded so far.
func (e *echoes) due() <-chan struct{} {
	if e.allIn() {
		return alwaysClosed
	}
	if e.caughtUp == nil {
		e.caughtUp = make(chan struct{})
	}
	return e.caughtUp
}

// nextOwn returns a channel closed when the next event of the visit's own is recorded.
func (e *echoes) nextOwn() <-chan struct{} {
	if e.observed == nil {
		e.observed = make(chan struct{})
	}
	return e.observed
}

// observedOwn wakes whoever waits for the copy to catch up: an event of the visit's own is
// recorded, and maybe the last echo due.
func (e *echoes) observedOwn() {
	if e.observed != nil {
		close(e.observed)
		e.observed = nil
	}
	if e.caughtUp != nil && e.allIn() {
		close(e.caughtUp)
		e.caughtUp = nil
	}
}
