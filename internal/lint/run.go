package lint

import (
	"bytes"
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
	kinds
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

// run is a trace indexed for the rules, in one pass over its events.
type run struct {
	events []traces.Event
	agents []traces.Agent
	// kinds holds each event's kind, by index in events; counts, how many events of each kind.
	kinds  []kind
	counts [kinds]int
	// numbered says each event's seq is its index + 1, as in every trace traces.Validate
	// accepts: a range of seqs is then a range of indexes.
	numbered bool
	// parents holds each agent's parent, by name (the first agent of a name's).
	parents map[string]string
	// finished holds each model call's model.finished (its last, by call id), made when first
	// asked for (finishedOf).
	finished map[string]*traces.Event
	// request is the user's latest request: the last user message of the root agent's first
	// input, else the run's input.
	request string
}

func newRun(tr traces.Trace) *run {
	r := &run{events: tr.Events, agents: tr.Agents, kinds: make([]kind, len(tr.Events)), numbered: true,
		parents: make(map[string]string, len(tr.Agents)), request: tr.Run.Input}
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
		r.counts[k]++
		if e.Seq != int64(i)+1 {
			r.numbered = false
		}
		switch {
		case k == kRunStarted && e.Run != nil && r.request == "":
			r.request = e.Run.Input
		case k == kAgentStarted && !rootSeen && e.AgentRun != nil:
			rootSeen = true
			for _, m := range e.AgentRun.Input {
				if story.Origin(m) == story.FromUser && m.Content != "" {
					r.request = m.Content
				}
			}
		}
	}
	r.request = strings.TrimSpace(r.request)
	return r
}

// finishedOf returns the model.finished of the model call id, or nil.
func (r *run) finishedOf(id string) *traces.Event {
	if r.finished == nil {
		r.finished = make(map[string]*traces.Event, r.counts[kModelFinished])
		for i := r.nextIndex(-1, kModelFinished); i >= 0; i = r.nextIndex(i, kModelFinished) {
			if e := &r.events[i]; e.Model != nil {
				r.finished[e.Model.ID] = e
			}
		}
	}
	return r.finished[id]
}

// promptTokens is the size of a model call's prompt: what the model reported, else an estimate
// of four characters a token.
func (r *run) promptTokens(started *traces.Event) int {
	if f := r.finishedOf(started.Model.ID); f != nil && f.Model.Usage != nil && f.Model.Usage.PromptTokens > 0 {
		return f.Model.Usage.PromptTokens
	}
	return estimateTokens(started.Model.Input)
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
