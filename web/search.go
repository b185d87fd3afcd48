package web

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/baton-dev/baton/traces"
)

// How far back a message event looks for the call it repeats. A reply's message comes right
// after its model call's end. A tool call's message comes after the ends of all the calls of its
// reply (the agent hands them to its model together), and of what ran inside them (an
// AgentTool's callee): it looks back to the reply, at most resultWindow events.
const (
	echoWindow   = 16
	resultWindow = 4096
)

// timelineIndex is the timeline's piece of the analysis: what its rows need beyond their event,
// for search and folding (where an input's new messages begin, the call each echoing message
// event repeats, the search texts made so far), the events seen through callbacks only, and the
// rows drawn again after their event. Its slices only grow and its maps only gain keys (inputs
// replaces an agent's input whole).
type timelineIndex struct {
	// inputs is each agent's newest agent and model input; freshFrom, by an input event's seq,
	// where its new messages begin; echoOf, by a message event's seq, the call it repeats.
	inputs    map[inputKey][]traces.Message
	freshFrom map[int64]int
	echoOf    map[int64]int64
	// searches holds the search texts of the first events, by index, made as searches need
	// them (IndexSearch): a run's next search costs a pass over strings, not over events.
	searches []string
	// callbacksOnly holds the events inside AgentTool calls whose inner events the caller's
	// event stream did not carry: the recorder saw them through callbacks only.
	callbacksOnly map[int64]bool
	// amended lists the rows drawn again after their event: a transfer that a later error failed,
	// the work inside an AgentTool call seen through callbacks only. In the order of their At.
	amended []amend
}

// inputKey names one of an agent's inputs: its agent's or its model's (the kind of its event). A
// pair, not the two joined in a string, which was an allocation an input.
type inputKey struct {
	kind  traces.Kind
	agent string
}

// amend says that the row of event Seq changed at event At.
type amend struct{ Seq, At int64 }

func newTimelineIndex() *timelineIndex {
	return &timelineIndex{inputs: make(map[inputKey][]traces.Message), freshFrom: make(map[int64]int), echoOf: make(map[int64]int64)}
}

// clone copies x's maps; its slices only grow, so a copy shares them, capped.
func (x *timelineIndex) clone() *timelineIndex {
	c := *x
	c.inputs = maps.Clone(x.inputs) // each replaced whole, never changed
	c.freshFrom, c.echoOf, c.callbacksOnly = maps.Clone(x.freshFrom), maps.Clone(x.echoOf), maps.Clone(x.callbacksOnly)
	c.searches, c.amended = capped(x.searches), capped(x.amended)
	return &c
}

// add takes in event i of ev, which the tree took in and changed as c says. It returns the seq
// of the call the event repeats, when it is a message that does (0 otherwise).
func (x *timelineIndex) add(ev []traces.Event, i int, c treeChange) (echoes int64) {
	x.addChange(ev, i, c)
	return x.noteSearch(ev, i)
}

// addChange is add but for the search notes (noteSearch), which read no tree: what c says of the
// rows drawn again.
func (x *timelineIndex) addChange(ev []traces.Event, i int, c treeChange) {
	if c.failed != nil && c.late {
		x.amended = append(x.amended, amend{Seq: c.failed.seq, At: ev[i].Seq})
	}
	if c.exited != nil {
		x.markInner(ev, i, c.exited)
	}
}

// noteSearch keeps what an event's row needs for search and folding: where an agent's input
// stops repeating its previous one, and which call a message event echoes. The event's search
// text is made when a search first needs it (IndexSearch): making it here would make every
// analysis, a replay's included, some 3 times as dear.
func (x *timelineIndex) noteSearch(ev []traces.Event, i int) (echoes int64) {
	e := &ev[i]
	var in []traces.Message
	key := inputKey{e.Kind, e.Agent} // a model's input and an agent's are different lists
	switch {
	case e.Model != nil && e.Kind == traces.KindModelStarted:
		in = e.Model.Input
	case e.AgentRun != nil && e.Kind == traces.KindAgentStarted:
		in = e.AgentRun.Input
	case e.Message != nil:
		if of := echoed(ev, i); of > 0 {
			x.echoOf[e.Seq] = of
			return of
		}
		return 0
	default:
		return 0
	}
	// Each input repeats the agent's previous one, or all but its last messages (a branch), and
	// adds to it: only what it adds is searched, so that a long conversation's search text grows
	// with its length, not its square.
	if p := x.inputs[key]; len(p) > 0 && len(p) <= len(in) && sameMessage(p[len(p)-1], in[len(p)-1]) {
		x.freshFrom[e.Seq] = len(p)
	} else if n := sharedMessages(p, in); n > 0 {
		x.freshFrom[e.Seq] = n
	}
	x.inputs[key] = in
	return 0
}

// markInner notes, at the exit (event i) of call, whether its inner events were seen through
// callbacks only; if so it marks each of them (the events between its entry and the exit that
// ran inside the callee), and a live page draws their rows again.
func (x *timelineIndex) markInner(ev []traces.Event, i int, call *agentToolCall) {
	if call.inner != traces.InnerEventsCallbacks || call.enter == 0 {
		return
	}
	e := &ev[i]
	inside := append(slices.Clone(e.RunPath), call.callee)
	for j := indexOf(ev, call.enter) + 1; j >= 1 && j < len(ev) && ev[j].Seq < e.Seq; j++ {
		o := &ev[j]
		if len(o.RunPath) < len(inside) || !slices.Equal(o.RunPath[:len(inside)], inside) {
			continue
		}
		if x.callbacksOnly == nil {
			x.callbacksOnly = make(map[int64]bool)
		}
		x.callbacksOnly[o.Seq] = true
		x.amended = append(x.amended, amend{Seq: o.Seq, At: e.Seq})
	}
}

// amendedSince returns the seqs of the rows up to from that events after from, up to to, drew
// again, each once. amended is in the order of its events, so this costs the rows it returns.
func (x *timelineIndex) amendedSince(from, to int64) []int64 {
	i, _ := slices.BinarySearchFunc(x.amended, from+1, func(m amend, at int64) int { return cmp.Compare(m.At, at) })
	var seqs []int64
	for _, m := range x.amended[i:] {
		if m.At > to {
			break
		}
		if m.Seq <= from && !slices.Contains(seqs, m.Seq) {
			seqs = append(seqs, m.Seq)
		}
	}
	return seqs
}

// echoed returns the seq of the model or tool call whose reply message event i repeats, or 0.
func echoed(ev []traces.Event, i int) int64 {
	e := &ev[i]
	m := e.Message
	window := echoWindow
	if m.Role == "tool" {
		window = resultWindow
	}
	for j := i - 1; j >= 0 && j >= i-window; j-- {
		o := &ev[j]
		if o.Agent != e.Agent {
			continue
		}
		switch {
		case m.Role == "assistant" && o.Kind == traces.KindModelFinished && o.Model != nil && o.Model.Output != nil:
			if sameMessage(*o.Model.Output, *m) {
				return o.Seq
			}
			return 0 // the agent's newest reply says something else
		case m.Role == "tool" && o.Kind == traces.KindModelFinished:
			return 0 // back at the reply that made the calls
		case m.Role == "tool" && o.Kind == traces.KindToolFinished && o.Tool != nil:
			if o.Tool.CallID == m.ToolCallID && o.Tool.Result == m.Content {
				return o.Seq
			}
		}
	}
	return 0
}

// sameMessage reports whether a and b say the same thing.
func sameMessage(a, b traces.Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.ToolCallID != b.ToolCallID || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for k := range a.ToolCalls {
		if a.ToolCalls[k] != b.ToolCalls[k] {
			return false
		}
	}
	return true
}

// searchOf returns the search text of event i: kept when IndexSearch made it, else made now.
func (x *timelineIndex) searchOf(ev []traces.Event, i int) string {
	if i < len(x.searches) {
		return x.searches[i]
	}
	e := &ev[i]
	return searchText(e, rowSummary(e), x.freshFrom[e.Seq])
}

// searchText is the lower-cased text a timeline search looks in for e: its row's words (summary)
// and the event's whole content (messages, arguments, results, errors, session values), of its
// input the messages from fresh on (timelineIndex.freshFrom).
func searchText(e *traces.Event, summary string, fresh int) string {
	var b strings.Builder
	add := func(ss ...string) {
		for _, s := range ss {
			if s != "" {
				b.WriteString(s)
				b.WriteByte('\n')
			}
		}
	}
	msgs := func(ms []traces.Message) {
		for _, m := range ms {
			add(m.Content)
			for _, c := range m.ToolCalls {
				add(c.Name, c.Arguments)
			}
		}
	}
	add(e.Agent, string(e.Kind), summary)
	switch {
	case e.Run != nil:
		add(e.Run.Input, e.Run.Error)
	case e.AgentRun != nil:
		msgs(e.AgentRun.Input[fresh:])
		add(e.AgentRun.Error)
	case e.Model != nil:
		msgs(e.Model.Input[fresh:])
		if e.Model.Output != nil {
			msgs([]traces.Message{*e.Model.Output})
		}
		add(e.Model.Error)
	case e.Tool != nil:
		add(e.Tool.Name, e.Tool.Arguments, e.Tool.Result, e.Tool.Error)
	case e.Message != nil:
		msgs([]traces.Message{*e.Message})
	case e.Transfer != nil:
		add(e.Transfer.Error)
	case e.AgentTool != nil:
		add(e.AgentTool.Request, e.AgentTool.Result)
	case e.Session != nil:
		add(e.Session.Key, string(e.Session.Value))
	case e.Interrupt != nil:
		add(e.Interrupt.Info, e.Interrupt.Address)
	case e.Exit != nil:
		add(e.Exit.FinalResult)
	case e.Error != nil:
		add(e.Error.Message)
	}
	return strings.ToLower(b.String())
}
