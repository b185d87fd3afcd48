package web

import (
	"regexp"
	"slices"
	"time"

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

// activity is what the events say about one agent.
type activity struct {
	state      State
	modelIDs   map[string]bool
	modelCalls int
	toolCalls  int
	tokens     int
	lastSeq    int64
	err        string
	drawn      face  // what the agent's node showed after the last event that changed it
	faceSeq    int64 // the newest event that changed only its node's face (see noteGraph)
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

// analysis is what the events of a trace say, built one event at a time (add) and never
// revisited: per-agent activity, transfers, AgentTool calls, the header's counters, the outcome's
// candidates, the session, and at which event each part of the page last changed. Asking it for
// a part of the page costs what that part holds (agents, transfers, keys), never a pass over the
// events.
type analysis struct {
	tr         traces.Trace // tr.Events: the events added so far, in order
	roster     *roster
	acts       map[string]*activity
	transfers  []*transfer
	transferAt map[int64]*transfer // by the transfer event's seq
	// pairs holds, for each direction between two agents, how many transfers took it and the
	// newest Lanes of them: what the tree draws.
	pairs      map[[2]string]*pairTransfers
	calls      []*agentToolCall
	open       []*agentToolCall // the calls entered and not exited yet
	metaStatus traces.Status    // the run's status before any event: tr.Run's
	status     traces.Status
	errors     int
	tools      int
	models     int
	tokens     int

	lastSeq     int64
	lastAgent   string // of the newest event that names one: who an unattributed error is blamed on
	flow, input string // the run's, else its run.started event's
	firstTime   time.Time
	lastTime    time.Time
	// idle is the time the run spent stopped between a run.finished and the resume after it;
	// stoppedAt the time of a run.finished not yet followed by anything.
	idle         time.Duration
	stoppedAt    time.Time
	runErr       string  // of the newest run.finished that has one
	finishedSeq  int64   // the newest run.finished
	settled      bool    // a run.finished with a valid status came: the status no longer is the run's own
	errorSeq     int64   // the newest error event
	answer       Outcome // the newest answer on the Runner's own stream (noteAnswer)
	answerIsTool bool    // answer is a tool's result message
	paused       *Paused // where an interrupted run waits
	pausedTool   string  // the interrupted tool call before the interrupted event

	values    []SessionValue
	valueAt   map[string]int
	histories map[string]*started
	sources   *sourceIndex // grown as agents start (and inspections ask), to classify what each was fed
	counts    tokenCache   // the inspections' token counts
	spans     *sequence    // the sequence view (sequence.go)

	// For the timeline's search and folding (search.go): each agent's newest agent and model input,
	// where an input event's new messages begin, and the call each echoing message event repeats.
	inputs    map[string][]traces.Message
	freshFrom map[int64]int
	echoOf    map[int64]int64
	// searches holds the search texts of the first events, by index, made as searches need
	// them (IndexSearch): a run's next search costs a pass over strings, not over events.
	searches []string
	echoedBy map[int64]int64 // the reverse of echoOf

	// The seq of the event that last changed each part of the page; amended lists transfer
	// rows drawn again because a later error failed them.
	valuesSeq, historiesSeq, agentsSeq int64
	// sectionsSeq is the newest agent.started that was its agent's first: the session panel
	// gained a section (an agent starting again only changes its own).
	sectionsSeq int64
	// graphSeq is the newest event that changed the tree as drawn beyond a node's face (see
	// noteGraph); laid is the tree as laid out at graphSeq, which a face change leaves in place.
	graphSeq int64
	laid     *laidTree
	amended  []amend
	// callbacksOnly holds the events inside AgentTool calls whose inner events the caller's
	// event stream did not carry: the recorder saw them through callbacks only.
	callbacksOnly map[int64]bool
}

// pairTransfers is the transfers of one direction between two agents.
type pairTransfers struct {
	count, failed int
	mode          string      // the transfers' mode, "mixed" when they differ
	newest        []*transfer // at most Lanes, oldest first
}

// started is an agent's newest agent.started, with the seqs of its newest starts and how many
// there were.
type started struct {
	seq     int64
	via     string
	resumed bool
	starts  []int64
	count   int
	fed     []FedMessage // its input, classified by origin
}

// amend says that the row of event Seq changed at event At.
type amend struct{ Seq, At int64 }

// transferNotFound matches eino's message for a transfer to an agent it cannot reach.
var transferNotFound = regexp.MustCompile(`transfer failed: agent '([^']*)' not found`)

// analyse returns the analysis of tr's events. It shares tr's events and copies none.
func analyse(tr traces.Trace) *analysis {
	a := newAnalysis(tr.Run, tr.Agents)
	// Capped, so that a later add copies rather than writes into tr's array.
	a.tr.Events = tr.Events[:len(tr.Events):len(tr.Events)]
	for i := range a.tr.Events {
		a.step(i)
	}
	return a
}

// newAnalysis starts the analysis of run on agents with no events yet. The run's status is its
// status until an event says otherwise (run.finished, or an event after it, which resumes it).
func newAnalysis(run traces.Run, agents []traces.Agent) *analysis {
	a := &analysis{
		tr: traces.Trace{Run: run, Agents: agents}, roster: newRoster(agents),
		acts: make(map[string]*activity), transferAt: make(map[int64]*transfer),
		pairs:      make(map[[2]string]*pairTransfers),
		metaStatus: run.Status, flow: run.Flow, input: run.Input,
		valueAt: make(map[string]int), histories: make(map[string]*started), sources: newSourceIndex(), counts: tokenCache{}, spans: newSequence(),
		inputs: make(map[string][]traces.Message), freshFrom: make(map[int64]int), echoOf: make(map[int64]int64),
		echoedBy: make(map[int64]int64),
	}
	if !a.metaStatus.Valid() {
		a.metaStatus = traces.StatusRunning
	}
	a.status = a.metaStatus
	return a
}

// add appends e to the analysis. e's payloads are shared, never changed.
func (a *analysis) add(e traces.Event) {
	a.tr.Events = append(a.tr.Events, e)
	a.step(len(a.tr.Events) - 1)
}

// step takes in event i of a.tr.Events, the events before it taken in already.
func (a *analysis) step(i int) {
	ev := &a.tr.Events[i]
	known := len(a.roster.list)
	a.roster.discover(ev, i)
	if len(a.roster.list) > known {
		a.agentsSeq = ev.Seq
	}
	a.apply(i)
	a.noteGraph(ev, len(a.roster.list) > known)
	a.note(ev)
	a.notePause(ev)
	a.noteSession(i)
	a.noteSearch(i)
	a.noteSequence(i)
}

// note keeps what the header, the outcome and the session need from e.
func (a *analysis) note(e *traces.Event) {
	a.lastSeq = max(a.lastSeq, e.Seq)
	if e.Agent != "" {
		a.lastAgent = e.Agent
	}
	if a.firstTime.IsZero() {
		a.firstTime = e.Time
	}
	if e.Time.After(a.lastTime) {
		a.lastTime = e.Time
	}
	if !a.stoppedAt.IsZero() && e.Kind != traces.KindRunFinished {
		a.idle += max(0, e.Time.Sub(a.stoppedAt))
		a.stoppedAt = time.Time{}
	}
	if e.Kind == traces.KindRunFinished {
		a.stoppedAt = e.Time
	}
	switch {
	case e.Kind == traces.KindRunFinished && e.Run != nil && e.Run.Status.Valid():
		a.status, a.finishedSeq, a.settled = e.Run.Status, e.Seq, true
		if e.Run.Error != "" {
			a.runErr = e.Run.Error
		}
	case e.Kind == traces.KindRunFinished:
		a.finishedSeq = e.Seq
	case a.finishedSeq > 0:
		// An event after run.finished: the run was resumed.
		a.status = a.metaStatus
		if a.status.Ended() {
			a.status = traces.StatusRunning
		}
	}
	if e.Run != nil && e.Kind == traces.KindRunStarted {
		a.flow, a.input = firstNonEmpty(a.flow, e.Run.Flow), firstNonEmpty(a.input, e.Run.Input)
	}
	if e.Kind == traces.KindError {
		a.errorSeq = e.Seq
	}
	a.noteAnswer(e)
}

// runError is the run's failure reason: its run.finished event's (a live snapshot may carry it
// before the run's metadata does), else the run's own.
func (a *analysis) runError() string {
	return firstNonEmpty(a.runErr, a.tr.Run.Error)
}

func (a *analysis) act(name string) *activity {
	if name == "" {
		return nil
	}
	x, ok := a.acts[name]
	if !ok {
		x = &activity{state: StateIdle}
		a.acts[name] = x
	}
	return x
}

// touch records that name did something at seq and, unless it failed, that it is working.
func (a *analysis) touch(name string, seq int64, activate bool) *activity {
	x := a.act(name)
	if x == nil {
		return nil
	}
	x.lastSeq = max(x.lastSeq, seq)
	if activate && x.state != StateFailed {
		x.state = StateActive
	}
	return x
}

func (a *analysis) settle(name string, s State) {
	if x := a.act(name); x != nil && x.state != StateFailed {
		x.state = s
	}
}

func (a *analysis) apply(i int) {
	e := &a.tr.Events[i]
	if !hasPayload(e) {
		// A malformed event still shows in the timeline; it just tells us nothing here.
		a.touch(e.Agent, e.Seq, false)
		return
	}
	switch e.Kind {
	case traces.KindAgentStarted, traces.KindResumed:
		a.touch(e.Agent, e.Seq, true)
	case traces.KindMessage:
		// Stream events lag callbacks: a message after the agent's agent.finished is late news,
		// not new work. Only an agent never seen before becomes active by a message.
		a.touch(e.Agent, e.Seq, a.stateOf(e.Agent).state == StateIdle)
	case traces.KindAgentFinished:
		a.touch(e.Agent, e.Seq, false)
		if e.AgentRun.Interrupted {
			a.settle(e.Agent, StateInterrupted) // paused at an interrupt, not done: a resume wakes it
		} else {
			a.settle(e.Agent, StateDone)
		}
		if x := a.act(e.Agent); x != nil && e.AgentRun.Error != "" {
			x.state, x.err = StateFailed, e.AgentRun.Error
		}
	case traces.KindExit:
		a.touch(e.Agent, e.Seq, false)
		a.settle(e.Agent, StateDone)
	case traces.KindModelStarted, traces.KindModelFinished:
		a.model(e)
	case traces.KindToolStarted, traces.KindToolFinished:
		if x := a.touch(e.Agent, e.Seq, e.Kind == traces.KindToolStarted); e.Kind == traces.KindToolStarted {
			a.tools++
			if x != nil {
				x.toolCalls++
			}
		}
	case traces.KindTransfer:
		a.transfer(e)
	case traces.KindAgentToolEnter, traces.KindAgentToolExit:
		a.agentTool(e)
	case traces.KindSessionSet:
		a.touch(e.Agent, e.Seq, false)
	case traces.KindInterrupted:
		a.touch(e.Agent, e.Seq, false)
		a.settleActive(StateInterrupted)
		a.settle(e.Agent, StateInterrupted)
	case traces.KindError:
		a.error(i)
	case traces.KindRunFinished:
		a.finish(e)
	default:
		a.touch(e.Agent, e.Seq, false)
	}
	if e.Kind == traces.KindResumed {
		for _, x := range a.acts {
			if x.state == StateInterrupted {
				x.state = StateActive
			}
		}
	}
}

func (a *analysis) settleActive(s State) {
	for _, x := range a.acts {
		if x.state == StateActive {
			x.state = s
		}
	}
}

func (a *analysis) model(e *traces.Event) {
	x := a.touch(e.Agent, e.Seq, e.Kind == traces.KindModelStarted)
	m := e.Model
	if x == nil {
		x = &activity{}
	}
	if x.modelIDs == nil {
		x.modelIDs = make(map[string]bool)
	}
	// Count a call once whichever of its two events we see (a trace cut mid-call has only one).
	if m.ID == "" && e.Kind == traces.KindModelStarted || m.ID != "" && !x.modelIDs[m.ID] {
		x.modelIDs[m.ID] = true
		x.modelCalls++
		a.models++
	}
	if e.Kind == traces.KindModelFinished && m.Usage != nil {
		x.tokens += m.Usage.TotalTokens
		a.tokens += m.Usage.TotalTokens
	}
}

func (a *analysis) transfer(e *traces.Event) {
	t := *e.Transfer
	tr := &transfer{order: len(a.transfers) + 1, seq: e.Seq, t: t}
	a.transfers = append(a.transfers, tr)
	a.transferAt[e.Seq] = tr
	p := a.pairs[[2]string{t.From, t.To}]
	if p == nil {
		p = &pairTransfers{}
		a.pairs[[2]string{t.From, t.To}] = p
	}
	switch {
	case p.count == 0:
		p.mode = t.Mode
	case p.mode != t.Mode:
		p.mode = ModeMixed
	}
	if p.count++; len(p.newest) == Lanes {
		p.newest = append(p.newest[:0], p.newest[1:]...)
	}
	p.newest = append(p.newest, tr)
	a.touch(e.Agent, e.Seq, false)
	a.touch(t.From, e.Seq, false)
	a.settle(t.From, StateDone)
	if t.Outcome == traces.TransferFailed {
		a.failTransfer(tr, e.Seq, t.Error) // eino refused it: the target never started
		return
	}
	a.touch(t.To, e.Seq, true)
}

// failTransfer marks t failed at seq with msg, and its target failed (missing when the run
// never saw it otherwise).
func (a *analysis) failTransfer(t *transfer, seq int64, msg string) {
	t.failed, t.failSeq, t.err = true, seq, msg
	a.pairs[[2]string{t.t.From, t.t.To}].failed++
	a.failSequence(t, seq)
	if m, x := a.roster.byName[t.t.To], a.acts[t.t.To]; m != nil && m.extra && (x == nil || x.lastSeq <= t.seq) {
		m.missing = true
	}
	x := a.touch(t.t.To, seq, false)
	x.state, x.err = StateFailed, msg
}

func (a *analysis) agentTool(e *traces.Event) {
	c := e.AgentTool
	a.touch(e.Agent, e.Seq, false)
	if e.Kind == traces.KindAgentToolEnter {
		call := &agentToolCall{caller: c.Caller, callee: c.Callee, callID: c.CallID, enter: e.Seq, request: c.Request}
		if len(e.RunPath) > 0 {
			call.path = append(slices.Clone(e.RunPath), c.Callee)
		}
		a.calls = append(a.calls, call)
		a.open = append(a.open, call)
		a.touch(c.Caller, e.Seq, true)
		a.touch(c.Callee, e.Seq, true)
		return
	}
	call := a.openCall(c)
	if call == nil {
		call = &agentToolCall{caller: c.Caller, callee: c.Callee, callID: c.CallID}
		a.calls = append(a.calls, call)
	}
	call.exit, call.result, call.inner = e.Seq, c.Result, c.InnerEvents
	a.open = slices.DeleteFunc(a.open, func(k *agentToolCall) bool { return k == call })
	a.markInner(e, call)
	a.touch(c.Callee, e.Seq, false)
	if x := a.act(c.Callee); x == nil || x.state != StateInterrupted { // a paused callee stays paused
		a.settle(c.Callee, StateDone)
	}
}

// markInner notes, at the exit e of call, whether its inner events were seen through callbacks
// only; if so it marks each of them (the events between its entry and e that ran inside the
// callee), and a live page draws their rows again.
func (a *analysis) markInner(e *traces.Event, call *agentToolCall) {
	if m := a.roster.byName[call.callee]; m != nil && call.inner != "" {
		m.callbacksOnly = call.inner == traces.InnerEventsCallbacks
	}
	if call.inner != traces.InnerEventsCallbacks || call.enter == 0 {
		return
	}
	inside := append(slices.Clone(e.RunPath), call.callee)
	for i := a.index(call.enter) + 1; i >= 1 && i < len(a.tr.Events) && a.tr.Events[i].Seq < e.Seq; i++ {
		o := &a.tr.Events[i]
		if len(o.RunPath) < len(inside) || !slices.Equal(o.RunPath[:len(inside)], inside) {
			continue
		}
		if a.callbacksOnly == nil {
			a.callbacksOnly = make(map[int64]bool)
		}
		a.callbacksOnly[o.Seq] = true
		a.amended = append(a.amended, amend{Seq: o.Seq, At: e.Seq})
	}
}

// openCall returns the newest call of c's callee that has not exited, preferring the same id.
func (a *analysis) openCall(c *traces.AgentToolCall) *agentToolCall {
	var fallback *agentToolCall
	for i := len(a.calls) - 1; i >= 0; i-- {
		k := a.calls[i]
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

func (a *analysis) error(i int) {
	e := &a.tr.Events[i]
	a.errors++
	msg := e.Error.Message
	if i > 0 {
		if p := a.tr.Events[i-1].Transfer; p != nil && p.Outcome == traces.TransferFailed && p.Error == msg {
			return // the run's failure by that refused transfer, drawn with it
		}
	}
	if t := a.failedTransfer(e); t != nil {
		a.failTransfer(t, e.Seq, msg) // a trace without transfer outcomes: read eino's error
		a.amended = append(a.amended, amend{Seq: t.seq, At: e.Seq})
		return
	}
	// An unattributed error is blamed on the agent of the event before it.
	who := firstNonEmpty(e.Agent, a.lastAgent)
	if x := a.touch(who, e.Seq, false); x != nil {
		x.state, x.err = StateFailed, msg
	}
}

// failedTransfer returns the transfer an error event reports as failed: the newest transfer to
// the agent eino says it could not find or, for an unattributed error, the newest transfer
// whose target has done nothing since.
func (a *analysis) failedTransfer(e *traces.Event) *transfer {
	if m := transferNotFound.FindStringSubmatch(e.Error.Message); m != nil {
		for i := len(a.transfers) - 1; i >= 0; i-- {
			if t := a.transfers[i]; t.t.To == m[1] && !t.failed {
				return t
			}
		}
	}
	if e.Agent != "" || len(a.transfers) == 0 {
		return nil
	}
	t := a.transfers[len(a.transfers)-1]
	if x := a.acts[t.t.To]; t.failed || x != nil && x.lastSeq > t.seq {
		return nil
	}
	return t
}

func (a *analysis) finish(e *traces.Event) {
	switch e.Run.Status {
	case traces.StatusCompleted:
		a.settleActive(StateDone)
	case traces.StatusFailed:
		failed := false
		for _, x := range a.acts {
			failed = failed || x.state == StateFailed
		}
		if failed {
			a.settleActive(StateDone)
		} else {
			a.settleActive(StateFailed)
		}
	case traces.StatusInterrupted, traces.StatusCanceled:
		a.settleActive(StateInterrupted)
	}
}

// stateOf returns the state of agent name.
func (a *analysis) stateOf(name string) *activity {
	if x, ok := a.acts[name]; ok {
		return x
	}
	return &activity{state: StateIdle}
}

// hasPayload reports whether e carries the payload its kind requires.
func hasPayload(e *traces.Event) bool {
	switch e.Kind {
	case traces.KindRunStarted, traces.KindRunFinished:
		return e.Run != nil
	case traces.KindAgentStarted, traces.KindAgentFinished:
		return e.AgentRun != nil
	case traces.KindModelStarted, traces.KindModelFinished:
		return e.Model != nil
	case traces.KindToolStarted, traces.KindToolFinished:
		return e.Tool != nil
	case traces.KindMessage:
		return e.Message != nil
	case traces.KindTransfer:
		return e.Transfer != nil
	case traces.KindAgentToolEnter, traces.KindAgentToolExit:
		return e.AgentTool != nil
	case traces.KindSessionSet:
		return e.Session != nil
	case traces.KindInterrupted, traces.KindResumed:
		return e.Interrupt != nil
	case traces.KindExit:
		return e.Exit != nil
	case traces.KindBreakLoop:
		return e.BreakLoop != nil
	case traces.KindError:
		return e.Error != nil
	case traces.KindLost:
		return e.Lost != nil
	}
	return true
}
