package web

import (
	"cmp"
	"maps"
	"regexp"
	"slices"

	"github.com/baton-dev/baton/traces"
)

// State is what an agent is doing at the point of the trace being drawn.
type State string

// Agent states. Each is drawn with its own shape and word, never by colour alone.
const (
	StateIdle        State = "idle"        // no event of the agent yet
	StateActive      State = "active"      // its latest activity says it is working
	StateDone        State = "done"        // it finished, handed control on or the run ended
	StateFailed      State = "failed"      // an error was attributed to it
	StateInterrupted State = "interrupted" // the run was interrupted (or canceled) while it worked
)

// treeState is the tree panel's piece of the analysis: the agents (roster), what each did
// (activity), the transfers with the pairs of agents they ran between, the AgentTool calls, and at
// which event the tree last changed. The other pieces read it; it reads none of them.
type treeState struct {
	roster    *roster
	acts      map[string]*activity
	transfers []*transfer // in the order of their events: by seq (transferAt)
	// pairs holds, for each direction between two agents, how many transfers took it and the
	// newest Lanes of them: what the tree draws.
	pairs      map[[2]string]*pairTransfers
	calls      []*agentToolCall
	open       []*agentToolCall // the calls entered and not exited yet
	lastAgent  string           // of the newest event that names one: who an unattributed error is blamed on
	resumedSeq int64            // the newest resumed event

	// agentsSeq is the newest event that named an agent not known before; graphSeq the newest
	// that changed the tree as drawn beyond a node's face (see noteGraph); laid is the tree as
	// laid out at graphSeq, which a face change leaves in place.
	agentsSeq, graphSeq int64
	laid                *laidTree

	now treeChange // what the event being added did, for add to return
}

// laidTree is the tree as laid out after event seq.
type laidTree struct {
	seq int64
	g   Graph
}

// treeChange is what one event did to the tree that other pieces take in too.
type treeChange struct {
	newCall bool           // it made a model call the run had not counted yet
	failed  *transfer      // a transfer it failed
	late    bool           // failed is an earlier transfer, whose row is drawn again
	exited  *agentToolCall // the AgentTool call it ended
}

// activity is what the events say about one agent.
type activity struct {
	state      State
	openModels map[string]bool // the ids of its model calls started and not finished yet
	modelCalls int
	toolCalls  int
	tokens     int
	lastSeq    int64
	err        string
	iteration  int   // of its loop, when a loop agent runs it: the newest agent.started's
	handedOff  bool  // it transferred control away and has not been active since
	drawn      face  // what the agent's node showed after the last event that changed it
	faceSeq    int64 // the newest event that changed only its node's face (see noteGraph)
}

// face is what an agent's node in the tree shows of its activity: its state, its error, and the
// counts its detail line is made of.
type face struct {
	state                State
	err                  string
	calls, tools, tokens int
	iteration            int
	handedOff            bool
}

// looksLike reports whether a node showing f shows the same as one showing g: the detail line
// names model calls and tokens (compacted, 1.2k), and tool calls only as whether there were any.
func (f face) looksLike(g face) bool {
	return f.state == g.state && f.err == g.err && f.calls == g.calls && f.iteration == g.iteration && f.handedOff == g.handedOff && (f.tools == 0) == (g.tools == 0) &&
		(f.tokens == g.tokens || sameCompact(f.tokens, g.tokens))
}

func (x *activity) face() face {
	return face{state: x.state, err: x.err, calls: x.modelCalls, tools: x.toolCalls, tokens: x.tokens, iteration: x.iteration, handedOff: x.handedOff}
}

// transfer is one transfer event with what became of it.
type transfer struct {
	order   int
	seq     int64
	t       traces.Transfer
	failed  bool
	failSeq int64
	err     string
}

// agentToolCall pairs the entered and exited events of one AgentTool call.
type agentToolCall struct {
	caller, callee  string
	callID          string
	enter, exit     int64
	request, result string
	inner           string   // its exit's inner_events
	path            []string // the run path inside the call: its entry's, then the callee
}

// pairTransfers is the transfers of one direction between two agents.
type pairTransfers struct {
	count, failed int
	mode          string      // the transfers' mode, "mixed" when they differ
	newest        []*transfer // at most Lanes, oldest first
}

// Lanes is how many transfers of one direction between two agents the tree draws.
const Lanes = 3

// ModeMixed is the Mode of a bundle holding both llm and deterministic transfers.
const ModeMixed = "mixed"

// transferNotFound matches eino's message for a transfer to an agent it cannot reach.
var transferNotFound = regexp.MustCompile(`transfer failed: agent '([^']*)' not found`)

func newTreeState(agents []traces.Agent) *treeState {
	return &treeState{
		roster: newRoster(agents), acts: make(map[string]*activity),
		pairs: make(map[[2]string]*pairTransfers),
	}
}

// add takes in event i of ev, the events before it taken in already, and says what it changed
// that other pieces take in too.
func (t *treeState) add(ev []traces.Event, i int) treeChange {
	e := &ev[i]
	t.now = treeChange{}
	known := len(t.roster.list)
	t.roster.discover(e, i)
	grew := len(t.roster.list) > known
	if grew {
		t.agentsSeq = e.Seq
	}
	t.apply(ev, i)
	t.noteGraph(e, grew)
	if e.Agent != "" {
		t.lastAgent = e.Agent
	}
	return t.now
}

// clone returns a copy of t that shares nothing a later add changes. The laid out tree is
// shared: a new layout replaces it, none changes it.
func (t *treeState) clone() *treeState {
	c := *t
	c.roster = t.roster.clone()
	c.acts = make(map[string]*activity, len(t.acts))
	for k, x := range t.acts {
		y := *x
		y.openModels = maps.Clone(x.openModels)
		c.acts[k] = &y
	}
	// Transfers change when a later error fails them: copy each, and point the indexes at the copies.
	copied := make(map[*transfer]*transfer, len(t.transfers))
	c.transfers = slices.Clone(t.transfers)
	for i, x := range c.transfers {
		u := *x
		c.transfers[i], copied[x] = &u, &u
	}
	c.pairs = make(map[[2]string]*pairTransfers, len(t.pairs))
	for k, p := range t.pairs {
		q := *p
		q.newest = make([]*transfer, len(p.newest))
		for i, x := range p.newest {
			q.newest[i] = copied[x]
		}
		c.pairs[k] = &q
	}
	// Calls change when they exit: copy each, and point the open ones at the copies.
	c.calls = slices.Clone(t.calls)
	callCopies := make(map[*agentToolCall]*agentToolCall, len(t.calls))
	for i, k := range c.calls {
		l := *k
		c.calls[i], callCopies[k] = &l, &l
	}
	c.open = slices.Clone(t.open)
	for i, k := range c.open {
		c.open[i] = callCopies[k]
	}
	c.now = treeChange{}
	return &c
}

func (r *roster) clone() *roster {
	c := &roster{list: make([]*member, len(r.list)), byName: make(map[string]*member, len(r.byName))}
	for i, m := range r.list {
		n := *m
		c.list[i], c.byName[n.Name] = &n, &n
	}
	return c
}

func (t *treeState) act(name string) *activity {
	if name == "" {
		return nil
	}
	x, ok := t.acts[name]
	if !ok {
		x = &activity{state: StateIdle}
		t.acts[name] = x
	}
	return x
}

// touch records that name did something at seq and, unless it failed, that it is working.
func (t *treeState) touch(name string, seq int64, activate bool) *activity {
	x := t.act(name)
	if x == nil {
		return nil
	}
	x.lastSeq = max(x.lastSeq, seq)
	if activate && x.state != StateFailed {
		x.state, x.handedOff = StateActive, false
	}
	return x
}

func (t *treeState) settle(name string, s State) {
	if x := t.act(name); x != nil && x.state != StateFailed {
		x.state = s
	}
}

func (t *treeState) apply(ev []traces.Event, i int) {
	e := &ev[i]
	if !hasPayload(e) {
		// A malformed event still shows in the timeline; it just tells us nothing here.
		t.touch(e.Agent, e.Seq, false)
		return
	}
	switch e.Kind {
	case traces.KindAgentStarted, traces.KindResumed:
		if x := t.touch(e.Agent, e.Seq, true); x != nil && e.AgentRun != nil && e.AgentRun.Iteration > 0 {
			x.iteration = e.AgentRun.Iteration
		}
	case traces.KindMessage:
		// Stream events lag callbacks: a message after the agent's agent.finished is late news,
		// not new work. Only an agent never seen before becomes active by a message.
		t.touch(e.Agent, e.Seq, t.stateOf(e.Agent).state == StateIdle)
	case traces.KindAgentFinished:
		t.touch(e.Agent, e.Seq, false)
		if e.AgentRun.Interrupted {
			t.settle(e.Agent, StateInterrupted) // paused at an interrupt, not done: a resume wakes it
		} else {
			t.settle(e.Agent, StateDone)
		}
		if x := t.act(e.Agent); x != nil && e.AgentRun.Error != "" {
			x.state, x.err = StateFailed, e.AgentRun.Error
		}
	case traces.KindExit:
		t.touch(e.Agent, e.Seq, false)
		t.settle(e.Agent, StateDone)
	case traces.KindModelStarted, traces.KindModelFinished:
		t.model(e)
	case traces.KindToolStarted, traces.KindToolFinished:
		if x := t.touch(e.Agent, e.Seq, e.Kind == traces.KindToolStarted); e.Kind == traces.KindToolStarted && x != nil {
			x.toolCalls++
		}
	case traces.KindTransfer:
		t.transfer(e)
	case traces.KindAgentToolEnter, traces.KindAgentToolExit:
		t.agentTool(e)
	case traces.KindSessionSet:
		t.touch(e.Agent, e.Seq, false)
	case traces.KindInterrupted:
		t.touch(e.Agent, e.Seq, false)
		t.settleActive(StateInterrupted)
		t.settle(e.Agent, StateInterrupted)
	case traces.KindError:
		t.error(ev, i)
	case traces.KindRunFinished:
		t.finish(e)
	default:
		t.touch(e.Agent, e.Seq, false)
	}
	if e.Kind == traces.KindResumed {
		t.resumedSeq = e.Seq
		for _, x := range t.acts {
			if x.state == StateInterrupted {
				x.state = StateActive
			}
		}
	}
}

func (t *treeState) settleActive(s State) {
	for _, x := range t.acts {
		if x.state == StateActive {
			x.state = s
		}
	}
}

func (t *treeState) model(e *traces.Event) {
	x := t.touch(e.Agent, e.Seq, e.Kind == traces.KindModelStarted)
	m := e.Model
	if x == nil {
		x = &activity{}
	}
	// Count a call once whichever of its two events we see (a trace cut mid-call has only its
	// start): at its start, or at an end no start of its id waits for. Only the calls going on are
	// kept, not every id the run used (a map of 60,000 ids at a million events): an id that comes
	// again once its call ended is another call (a resumed part's, in a trace written before the
	// recording numbered them on).
	counted := e.Kind == traces.KindModelStarted
	switch {
	case m.ID == "":
	case counted:
		if x.openModels == nil {
			x.openModels = make(map[string]bool)
		}
		x.openModels[m.ID] = true
	case x.openModels[m.ID]:
		delete(x.openModels, m.ID)
	default:
		counted = true
	}
	if counted {
		x.modelCalls++
		t.now.newCall = true
	}
	if e.Kind == traces.KindModelFinished && m.Usage != nil {
		x.tokens += m.Usage.TotalTokens
	}
}

// transferAt returns the transfer of the transfer event seq, nil when seq is none: a search of
// the transfers, which their events add in seq order (a map by seq was an entry per transfer).
func (t *treeState) transferAt(seq int64) *transfer {
	if n := len(t.transfers); n > 0 && t.transfers[n-1].seq == seq {
		return t.transfers[n-1] // the sequence view asks for the one just added
	}
	i, ok := slices.BinarySearchFunc(t.transfers, seq, func(x *transfer, seq int64) int { return cmp.Compare(x.seq, seq) })
	if !ok {
		return nil
	}
	return t.transfers[i]
}

func (t *treeState) transfer(e *traces.Event) {
	tf := *e.Transfer
	tr := &transfer{order: len(t.transfers) + 1, seq: e.Seq, t: tf}
	t.transfers = append(t.transfers, tr)
	p := t.pairs[[2]string{tf.From, tf.To}]
	if p == nil {
		p = &pairTransfers{}
		t.pairs[[2]string{tf.From, tf.To}] = p
	}
	switch {
	case p.count == 0:
		p.mode = tf.Mode
	case p.mode != tf.Mode:
		p.mode = ModeMixed
	}
	if p.count++; len(p.newest) == Lanes {
		p.newest = append(p.newest[:0], p.newest[1:]...)
	}
	p.newest = append(p.newest, tr)
	t.touch(e.Agent, e.Seq, false)
	t.touch(tf.From, e.Seq, false)
	t.settle(tf.From, StateDone)
	if x := t.acts[tf.From]; x != nil && tf.Outcome != traces.TransferFailed {
		x.handedOff = true
	}
	if tf.Outcome == traces.TransferFailed {
		t.failTransfer(tr, e.Seq, tf.Error) // eino refused it: the target never started
		return
	}
	t.touch(tf.To, e.Seq, true)
}

// failTransfer marks tr failed at seq with msg, and its target failed (missing when the run
// never saw it otherwise).
func (t *treeState) failTransfer(tr *transfer, seq int64, msg string) {
	tr.failed, tr.failSeq, tr.err = true, seq, msg
	t.pairs[[2]string{tr.t.From, tr.t.To}].failed++
	t.now.failed = tr
	if m, x := t.roster.byName[tr.t.To], t.acts[tr.t.To]; m != nil && m.extra && (x == nil || x.lastSeq <= tr.seq) {
		m.missing = true
	}
	x := t.touch(tr.t.To, seq, false)
	x.state, x.err = StateFailed, msg
}

func (t *treeState) agentTool(e *traces.Event) {
	c := e.AgentTool
	t.touch(e.Agent, e.Seq, false)
	if e.Kind == traces.KindAgentToolEnter {
		if call := t.resumedCall(c); call != nil {
			// eino enters a call again when a run resumes into it: the same call, going on.
			call.exit, call.result, call.inner = 0, "", ""
			t.open = append(t.open, call)
			t.touch(c.Caller, e.Seq, true)
			t.touch(c.Callee, e.Seq, true)
			return
		}
		call := &agentToolCall{caller: c.Caller, callee: c.Callee, callID: c.CallID, enter: e.Seq, request: c.Request}
		if len(e.RunPath) > 0 {
			call.path = append(slices.Clone(e.RunPath), c.Callee)
		}
		t.calls = append(t.calls, call)
		t.open = append(t.open, call)
		t.touch(c.Caller, e.Seq, true)
		t.touch(c.Callee, e.Seq, true)
		return
	}
	call := t.openCall(c)
	if call == nil {
		call = &agentToolCall{caller: c.Caller, callee: c.Callee, callID: c.CallID}
		t.calls = append(t.calls, call)
	}
	call.exit, call.result, call.inner = e.Seq, c.Result, c.InnerEvents
	t.open = slices.DeleteFunc(t.open, func(k *agentToolCall) bool { return k == call })
	t.now.exited = call
	// The callee's frame says whether its newest call was seen through callbacks only.
	if m := t.roster.byName[call.callee]; m != nil && call.inner != "" {
		m.callbacksOnly = call.inner == traces.InnerEventsCallbacks
	}
	t.touch(c.Callee, e.Seq, false)
	if x := t.act(c.Callee); x == nil || x.state != StateInterrupted { // a paused callee stays paused
		t.settle(c.Callee, StateDone)
	}
}

// resumedCall returns the call c enters again after the run resumed: one of the same callee
// and id that exited before the newest resume, nil when c is a new call.
func (t *treeState) resumedCall(c *traces.AgentToolCall) *agentToolCall {
	if c.CallID == "" || t.resumedSeq == 0 {
		return nil
	}
	for i := len(t.calls) - 1; i >= 0; i-- {
		if k := t.calls[i]; k.callee == c.Callee && k.callID == c.CallID {
			if k.exit != 0 && k.exit < t.resumedSeq {
				return k
			}
			return nil
		}
	}
	return nil
}

// openCall returns the newest call of c's callee that has not exited, preferring the same id.
func (t *treeState) openCall(c *traces.AgentToolCall) *agentToolCall {
	var fallback *agentToolCall
	for i := len(t.calls) - 1; i >= 0; i-- {
		k := t.calls[i]
		if k.exit != 0 || k.callee != c.Callee {
			continue
		}
		if k.callID == c.CallID {
			return k
		}
		if fallback == nil {
			fallback = k
		}
	}
	return fallback
}

func (t *treeState) error(ev []traces.Event, i int) {
	e := &ev[i]
	msg := e.Error.Message
	if i > 0 {
		if p := ev[i-1].Transfer; p != nil && p.Outcome == traces.TransferFailed && p.Error == msg {
			return // the run's failure by that refused transfer, drawn with it
		}
	}
	if tr := t.failedTransfer(e); tr != nil {
		t.failTransfer(tr, e.Seq, msg) // a trace without transfer outcomes: read eino's error
		t.now.late = true
		return
	}
	// An unattributed error is blamed on the agent of the event before it.
	who := firstNonEmpty(e.Agent, t.lastAgent)
	if x := t.touch(who, e.Seq, false); x != nil {
		x.state, x.err = StateFailed, msg
	}
}

// failedTransfer returns the transfer an error event reports as failed: the newest transfer to
// the agent eino says it could not find or, for an unattributed error, the newest transfer
// whose target has done nothing since.
func (t *treeState) failedTransfer(e *traces.Event) *transfer {
	if m := transferNotFound.FindStringSubmatch(e.Error.Message); m != nil {
		for i := len(t.transfers) - 1; i >= 0; i-- {
			if tr := t.transfers[i]; tr.t.To == m[1] && !tr.failed {
				return tr
			}
		}
	}
	if e.Agent != "" || len(t.transfers) == 0 {
		return nil
	}
	tr := t.transfers[len(t.transfers)-1]
	if x := t.acts[tr.t.To]; tr.failed || x != nil && x.lastSeq > tr.seq {
		return nil
	}
	return tr
}

func (t *treeState) finish(e *traces.Event) {
	switch e.Run.Status {
	case traces.StatusCompleted:
		t.settleActive(StateDone)
	case traces.StatusFailed:
		failed := false
		for _, x := range t.acts {
			failed = failed || x.state == StateFailed
		}
		if failed {
			t.settleActive(StateDone)
		} else {
			t.settleActive(StateFailed)
		}
	case traces.StatusInterrupted, traces.StatusCanceled:
		t.settleActive(StateInterrupted)
	}
}

// stateOf returns the state of agent name.
func (t *treeState) stateOf(name string) *activity {
	if x, ok := t.acts[name]; ok {
		return x
	}
	return &activity{state: StateIdle}
}

// active returns how many agents are at work.
func (t *treeState) active() int {
	n := 0
	for _, x := range t.acts {
		if x.state == StateActive {
			n++
		}
	}
	return n
}

// agentRefs returns every agent with its colour index, in colour order.
func (t *treeState) agentRefs() []AgentRef {
	out := make([]AgentRef, len(t.roster.list))
	for i, m := range t.roster.list {
		out[i] = AgentRef{Name: m.Name, Colour: m.colour}
	}
	return out
}

// insideAgentTool reports whether e happened inside an AgentTool call: its agent is a callee (or
// below one) in the tree, or a call not yet exited ran it, by name or by run path.
func (t *treeState) insideAgentTool(e *traces.Event) bool {
	for m, d := t.roster.byName[e.Agent], 0; m != nil && d <= len(t.roster.list); m, d = t.roster.byName[m.Parent], d+1 {
		if m.Relation == traces.RelationAgentTool && m.Parent != "" {
			return true
		}
	}
	for _, k := range t.open {
		if e.Agent == k.callee || len(k.path) > 0 && len(e.RunPath) >= len(k.path) && slices.Equal(e.RunPath[:len(k.path)], k.path) {
			return true
		}
	}
	return false
}

// treeOf returns the tree of tr's events, without the other pieces: what the tree alone answers
// (the graph, an agent's summary) asks no more.
func treeOf(tr traces.Trace) *treeState {
	t := newTreeState(tr.Agents)
	for i := range tr.Events {
		t.add(tr.Events, i)
	}
	return t
}

// Many events leave the tree as drawn unchanged, and most others change one node's face (its
// state, detail line or error mark) without moving a box or an edge: the tree notes the
// newest event that changed the tree beyond faces (graphSeq) and, per agent, the newest that
// changed its face (faceSeq), so that a live page is sent the whole tree only for the first and
// the changed nodes alone for the second.

// noteGraph notes what e changed of the tree as drawn. A new agent, a transfer, an AgentTool
// call, an error and the run's interrupt, resume or end change the layout, edges, frames or
// several agents' states; any other event touches only its own agent, whose face changes when
// its state, error or detail line does: a message, or a tool call of an agent already at work,
// leaves the tree as it was.
func (t *treeState) noteGraph(e *traces.Event, newAgent bool) {
	switch e.Kind {
	case traces.KindTransfer, traces.KindAgentToolEnter, traces.KindAgentToolExit, traces.KindError,
		traces.KindInterrupted, traces.KindResumed, traces.KindRunFinished:
		newAgent = true
	}
	if newAgent {
		for _, x := range t.acts {
			x.drawn = x.face()
		}
		t.graphSeq = e.Seq
		return
	}
	if x := t.acts[e.Agent]; x != nil {
		if f := x.face(); !f.looksLike(x.drawn) {
			x.drawn = f
			x.faceSeq = e.Seq
		}
	}
}
