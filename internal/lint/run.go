package lint

import (
	"bytes"
	"hash/maphash"
	"strings"

	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/traces"
)

// Tools eino gives a model for control flow: their calls are handoffs and exits, not work.
const (
	transferTool = "transfer_to_agent"
	exitTool     = "exit"
)

// kind is an event's kind as one byte. The rules find the events they read, and the ones they
// look ahead or back for, in run.kinds, a byte an event, rather than in the events themselves
// (over 200 bytes each): at a million events, each rule's pass over the events cost more than
// all that a rule reads in them.
type kind = byte

const (
	kOther kind = iota
	kRunStarted
	kRunFinished
	kAgentStarted
	kAgentFinished
	kModelStarted
	kModelFinished
	kToolStarted
	kToolFinished
	kMessage
	kTransfer
	kAgentToolEnter
	kAgentToolExit
	kSessionSet
	kInterrupted
	kExit
	kBreakLoop
)

func kindOf(k traces.Kind) kind {
	switch k {
	case traces.KindRunStarted:
		return kRunStarted
	case traces.KindRunFinished:
		return kRunFinished
	case traces.KindAgentStarted:
		return kAgentStarted
	case traces.KindAgentFinished:
		return kAgentFinished
	case traces.KindModelStarted:
		return kModelStarted
	case traces.KindModelFinished:
		return kModelFinished
	case traces.KindToolStarted:
		return kToolStarted
	case traces.KindToolFinished:
		return kToolFinished
	case traces.KindMessage:
		return kMessage
	case traces.KindTransfer:
		return kTransfer
	case traces.KindAgentToolEnter:
		return kAgentToolEnter
	case traces.KindAgentToolExit:
		return kAgentToolExit
	case traces.KindSessionSet:
		return kSessionSet
	case traces.KindInterrupted:
		return kInterrupted
	case traces.KindExit:
		return kExit
	case traces.KindBreakLoop:
		return kBreakLoop
	}
	return kOther
}

// run is a trace indexed for the rules, in one pass over its events: what the rules read of
// each event is gathered there, in tables of a few words an entry, so that no rule walks the
// events again.
type run struct {
	events []traces.Event
	agents []traces.Agent
	// kinds holds each event's kind, by index in events.
	kinds []kind
	// numbered says each event's seq is its index + 1, as in every trace traces.Validate
	// accepts: a range of seqs is then a range of indexes.
	numbered bool
	// parents holds each agent's parent, by name (the first agent of a name's).
	parents map[string]string
	// request is the user's latest request: the last user message of the root agent's first
	// input, else the run's input.
	request string

	transfers   []transfer   // the transfers with a payload
	modelStarts []modelStart // the model.started with a payload
	agentStarts []agentStart // every agent.started
	agentTools  []int32      // the agenttool.entered and agenttool.exited, by index
	progress    []int32      // the events that did work (what ends a ping-pong), by index
	announced   []int32      // the replies that may announce a handoff (mayAnnounceHandoff), by index
	toolCalls   []toolCall   // the tool calls that returned, by their tool.finished (repeatedCall)

	seed maphash.Seed
	// running holds the model calls started and not finished, their places in modelStarts, and
	// runningTools the tool calls, their tool.started's indexes: both by a hash of the call's
	// id, and both as small as the calls in flight.
	running, runningTools map[uint64]int32
	// finishedIDs holds the hashes of the model.finished's call ids. Two alike say an id finished
	// twice (finishedTwice; or two ids hash alike): the model.finished after a call's start may
	// then not be its last, and finished, by id, made when first asked for, says.
	finishedIDs   hashSet
	finishedTwice bool
	finished      map[string]*traces.Event
	// toolsUnsure says a tool.finished did not find its start among runningTools (a call that
	// finished twice or never started, or two ids that hash alike): toolCalls are then paired
	// again, by id.
	toolsUnsure bool
	// promptTokens of modelStarts, by place, + 1; 0 until counted.
	prompts []int
}

// transfer is what the rules read of a transfer: its place in events, whether eino refused it,
// and its ends.
type transfer struct {
	at       int32
	failed   bool
	from, to string
}

type modelStart struct {
	at       int32
	finished int32 // the index of the model.finished the pass paired it with, or -1
	prompt   int   // that model.finished's prompt tokens, 0 for none
	agent    string
	model    *traces.ModelCall
}

type agentStart struct {
	at    int32
	agent string
	run   *traces.AgentRun
}

// toolCall is a tool call that returned: its tool.started and tool.finished by index, and a
// hash of what repeatedCall compares (callKey).
type toolCall struct {
	started, finished int32
	key               uint64
}

// callKey is what makes two tool calls the same to repeatedCall.
type callKey struct{ agent, tool, args, result string }

func (r *run) callKey(c toolCall) callKey {
	s, f := &r.events[c.started], &r.events[c.finished]
	return callKey{s.Agent, s.Tool.Name, s.Tool.Arguments, f.Tool.Result}
}

func (r *run) newToolCall(started, finished int) toolCall {
	c := toolCall{started: int32(started), finished: int32(finished)}
	c.key = maphash.Comparable(r.seed, r.callKey(c))
	return c
}

func newRun(tr traces.Trace) *run {
	r := &run{events: tr.Events, agents: tr.Agents, kinds: make([]kind, len(tr.Events)), numbered: true,
		parents: make(map[string]string, len(tr.Agents)), request: tr.Run.Input,
		seed: maphash.MakeSeed(), running: make(map[uint64]int32), runningTools: make(map[uint64]int32)}
	// The tables' sizes, guessed: a supervisor's run has about one event of each kind in eight.
	guess := len(tr.Events)/8 + 8
	r.transfers, r.modelStarts, r.agentStarts = make([]transfer, 0, guess), make([]modelStart, 0, guess), make([]agentStart, 0, guess)
	r.progress, r.toolCalls = make([]int32, 0, 2*guess), make([]toolCall, 0, guess/2)
	finishedIDs := make([]uint64, 0, guess)
	for _, a := range tr.Agents {
		if _, ok := r.parents[a.Name]; !ok {
			r.parents[a.Name] = a.Parent
		}
	}
	rootSeen := false
	for i := range tr.Events {
		e := &tr.Events[i]
		k := kindOf(e.Kind)
		r.kinds[i] = k
		if e.Seq != int64(i)+1 {
			r.numbered = false
		}
		switch k {
		case kRunStarted:
			if e.Run != nil && r.request == "" {
				r.request = e.Run.Input
			}
		case kAgentStarted:
			if !rootSeen && e.AgentRun != nil {
				rootSeen = true
				for _, m := range e.AgentRun.Input {
					if story.Origin(m) == story.FromUser && m.Content != "" {
						r.request = m.Content
					}
				}
			}
			r.agentStarts = append(r.agentStarts, agentStart{int32(i), e.Agent, e.AgentRun})
		case kModelStarted:
			if e.Model != nil {
				r.running[maphash.String(r.seed, e.Model.ID)] = int32(len(r.modelStarts))
				r.modelStarts = append(r.modelStarts, modelStart{at: int32(i), finished: -1, agent: e.Agent, model: e.Model})
			}
		case kModelFinished:
			if m := e.Model; m != nil {
				finishedIDs = append(finishedIDs, r.finishedIs(i, m))
				// An answer is progress; a reply without text announces nothing either.
				if out := m.Output; out != nil && out.Content != "" && !callsTransfer(out) {
					r.progress = append(r.progress, int32(i))
					if mayAnnounceHandoff(out.Content) {
						r.announced = append(r.announced, int32(i))
					}
				}
			}
		case kToolStarted:
			if t := e.Tool; t != nil && t.Name != transferTool && t.Name != exitTool {
				r.toolStarted(i, t.CallID)
			}
		case kToolFinished:
			if t := e.Tool; t != nil && t.Name != transferTool && t.Name != exitTool && t.Error == "" && !t.Interrupted {
				r.progress = append(r.progress, int32(i))
				r.toolFinished(i, t.CallID)
			}
		case kSessionSet:
			r.progress = append(r.progress, int32(i))
		case kTransfer:
			if t := e.Transfer; t != nil {
				r.transfers = append(r.transfers, transfer{int32(i), t.Outcome == traces.TransferFailed, t.From, t.To})
			}
		case kAgentToolEnter, kAgentToolExit:
			r.agentTools = append(r.agentTools, int32(i))
		}
	}
	r.request = strings.TrimSpace(r.request)
	r.finishedIDs = newHashSet(len(finishedIDs))
	for _, h := range finishedIDs {
		r.finishedTwice = r.finishedIDs.add(h) || r.finishedTwice
	}
	if r.toolsUnsure {
		r.pairToolCalls()
	}
	return r
}

// finishedIs notes the model.finished at index i, of the call m, and returns its id's hash.
func (r *run) finishedIs(i int, m *traces.ModelCall) uint64 {
	h := maphash.String(r.seed, m.ID)
	if p, ok := r.running[h]; ok {
		delete(r.running, h)
		if s := &r.modelStarts[p]; s.model.ID == m.ID {
			s.finished = int32(i)
			if m.Usage != nil {
				s.prompt = m.Usage.PromptTokens
			}
		}
	}
	return h
}

// finishedOf returns the model.finished of the model call started at modelStarts[p] (the last of
// its id), or nil.
func (r *run) finishedOf(p int) *traces.Event {
	s := r.modelStarts[p]
	if !r.finishedTwice {
		// Each id finished once at most: the call's model.finished is the one after its start,
		// if it was found there, and else none when no model.finished has its id's hash.
		if s.finished >= 0 {
			return &r.events[s.finished]
		}
		if !r.finishedIDs.has(maphash.String(r.seed, s.model.ID)) {
			return nil
		}
	}
	if r.finished == nil {
		r.finished = make(map[string]*traces.Event)
		for i := r.nextIndex(-1, kModelFinished); i >= 0; i = r.nextIndex(i, kModelFinished) {
			if e := &r.events[i]; e.Model != nil {
				r.finished[e.Model.ID] = e
			}
		}
	}
	return r.finished[s.model.ID]
}

// toolStarted notes the tool.started at index i, of the call id.
func (r *run) toolStarted(i int, id string) {
	h := maphash.String(r.seed, id)
	if j, ok := r.runningTools[h]; ok && r.events[j].Tool.CallID != id {
		r.toolsUnsure = true
	}
	r.runningTools[h] = int32(i)
}

// toolFinished pairs the tool.finished at index i, which returned, of the call id, with the
// latest tool.started of that id.
func (r *run) toolFinished(i int, id string) {
	h := maphash.String(r.seed, id)
	j, ok := r.runningTools[h]
	if !ok || r.events[j].Tool.CallID != id {
		r.toolsUnsure = true
		return
	}
	delete(r.runningTools, h)
	r.toolCalls = append(r.toolCalls, r.newToolCall(int(j), i))
}

// pairToolCalls makes toolCalls again, by call id: what toolsUnsure asks for.
func (r *run) pairToolCalls() {
	r.toolCalls = r.toolCalls[:0]
	started := map[string]int32{}
	for i, k := range r.kinds {
		if k != kToolStarted && k != kToolFinished {
			continue
		}
		t := r.events[i].Tool
		if t == nil || t.Name == transferTool || t.Name == exitTool {
			continue
		}
		if k == kToolStarted {
			started[t.CallID] = int32(i)
		} else if j, ok := started[t.CallID]; ok && t.Error == "" && !t.Interrupted {
			r.toolCalls = append(r.toolCalls, r.newToolCall(int(j), i))
		}
	}
}

// modelStartAfter returns the place in modelStarts of the first model call started after the
// event at index i, searching from place from.
func (r *run) modelStartAfter(i int32, from int) int {
	for from < len(r.modelStarts) && r.modelStarts[from].at < i {
		from++
	}
	return from
}

// promptOf is promptTokens of modelStarts[p], counted once.
func (r *run) promptOf(p int) int {
	if r.prompts == nil {
		r.prompts = make([]int, len(r.modelStarts))
	}
	if r.prompts[p] == 0 {
		s, reported := &r.modelStarts[p], 0
		if s.finished >= 0 && !r.finishedTwice { // its model.finished, read as it was paired
			reported = s.prompt
		} else if f := r.finishedOf(p); f != nil && f.Model.Usage != nil {
			reported = f.Model.Usage.PromptTokens
		}
		r.prompts[p] = promptTokens(s.model, reported) + 1
	}
	return r.prompts[p] - 1
}

// promptTokens is the size of a model call's prompt: the prompt tokens its model.finished
// reported, else an estimate of four characters a token.
func promptTokens(started *traces.ModelCall, reported int) int {
	if reported > 0 {
		return reported
	}
	return estimateTokens(started.Input)
}

func estimateTokens(msgs []traces.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
	}
	return (n + 3) / 4
}

// tokensBetween sums the tokens of the model calls that finished from the event at index from
// to the one at index to.
func (r *run) tokensBetween(from, to int) int {
	if !r.numbered { // seqs need not follow indexes: count by seq, over the whole run
		return r.tokensBetweenSeqs(r.events[from].Seq, r.events[to].Seq)
	}
	n := 0
	for i := from; i <= to; i++ {
		if r.kinds[i] != kModelFinished {
			continue
		}
		if e := &r.events[i]; e.Model != nil && e.Model.Usage != nil {
			n += e.Model.Usage.TotalTokens
		}
	}
	return n
}

func (r *run) tokensBetweenSeqs(from, to int64) int {
	n := 0
	for i := range r.events {
		if e := &r.events[i]; e.Seq >= from && e.Seq <= to && r.kinds[i] == kModelFinished && e.Model != nil && e.Model.Usage != nil {
			n += e.Model.Usage.TotalTokens
		}
	}
	return n
}

// callsTransfer reports whether a model's reply calls a tool that hands control on.
func callsTransfer(m *traces.Message) bool {
	for _, c := range m.ToolCalls {
		if c.Name == transferTool {
			return true
		}
	}
	return false
}

// nextIndex returns the index of the first event of kind k after index i, or -1.
func (r *run) nextIndex(i int, k kind) int {
	j := bytes.IndexByte(r.kinds[i+1:], k)
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// next returns the first event of kind k after index i that match accepts, or nil.
func (r *run) next(i int, k kind, match func(*traces.Event) bool) *traces.Event {
	for j := r.nextIndex(i, k); j >= 0; j = r.nextIndex(j, k) {
		if match(&r.events[j]) {
			return &r.events[j]
		}
	}
	return nil
}

// nextEither returns the first event of kind a or b after index i that match accepts, or nil.
func (r *run) nextEither(i int, a, b kind, match func(*traces.Event) bool) *traces.Event {
	for j := i + 1; j < len(r.kinds); j++ {
		if k := r.kinds[j]; (k == a || k == b) && match(&r.events[j]) {
			return &r.events[j]
		}
	}
	return nil
}

// prev returns the last event of kind k before index i that match accepts, or nil.
func (r *run) prev(i int, k kind, match func(*traces.Event) bool) *traces.Event {
	for j := bytes.LastIndexByte(r.kinds[:i], k); j >= 0; j = bytes.LastIndexByte(r.kinds[:j], k) {
		if match(&r.events[j]) {
			return &r.events[j]
		}
	}
	return nil
}

// within reports whether agent is root or below it in the run's tree.
func (r *run) within(agent, root string) bool {
	for depth := 0; agent != "" && depth <= len(r.agents); depth++ {
		if agent == root {
			return true
		}
		parent, ok := r.parents[agent]
		if !ok {
			return false
		}
		agent = parent
	}
	return false
}

// hashSet is a set of 64-bit hashes, filled and then asked: open addressing in a table at least
// twice the size of what it holds, nothing allocated an entry. It holds h|1 (0 marks a free
// slot): two hashes that differ in their lowest bit only are one, which only sends a caller to
// its exact path.
type hashSet struct{ slots []uint64 }

func newHashSet(n int) hashSet {
	size := 8
	for size < 2*n {
		size <<= 1
	}
	return hashSet{make([]uint64, size)}
}

// add adds h and reports whether it was there already.
func (s hashSet) add(h uint64) bool {
	h |= 1
	mask := uint64(len(s.slots) - 1)
	for j := h & mask; ; j = (j + 1) & mask {
		switch s.slots[j] {
		case 0:
			s.slots[j] = h
			return false
		case h:
			return true
		}
	}
}

func (s hashSet) has(h uint64) bool {
	h |= 1
	mask := uint64(len(s.slots) - 1)
	for j := h & mask; ; j = (j + 1) & mask {
		switch s.slots[j] {
		case 0:
			return false
		case h:
			return true
		}
	}
}
