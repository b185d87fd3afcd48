package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-dev/baton/traces"
)

// Breakpoint is where a Debugger holds a run: at every moment of one kind, or only where one
// agent acts and on one target.
type Breakpoint struct {
	// Kind is one of traces.Breaks.
	Kind string `json:"kind"`
	// Agent narrows it to the moments where this agent acts: the one transferring, calling a
	// tool or its model, failing, writing the session. "" for any.
	Agent string `json:"agent,omitempty"`
	// Target narrows it to one target: the transfer's target agent, the AgentTool's callee, the
	// tool's name, the session key, the agent whose model is called. "" for any.
	Target string `json:"target,omitempty"`
}

// ParseBreakpoint reads a breakpoint written KIND[:TARGET][@AGENT], as `baton run --break`
// takes it: "transfer:math_agent", "model@supervisor", "session:plan". An unknown kind is a
// traces.CodeInvalid error naming the known ones.
func ParseBreakpoint(s string) (Breakpoint, error) {
	var b Breakpoint
	s, b.Agent, _ = strings.Cut(s, "@")
	b.Kind, b.Target, _ = strings.Cut(s, ":")
	return b, b.Validate()
}

// Validate reports a breakpoint of an unknown kind as a traces.CodeInvalid error.
func (b Breakpoint) Validate() error {
	if !slices.Contains(traces.Breaks, b.Kind) {
		return traces.Errorf(traces.CodeInvalid, "breakpoint kind %q is not one of %s", b.Kind, strings.Join(traces.Breaks, ", "))
	}
	return nil
}

// String writes b as ParseBreakpoint reads it.
func (b Breakpoint) String() string {
	s := b.Kind
	if b.Target != "" {
		s += ":" + b.Target
	}
	if b.Agent != "" {
		s += "@" + b.Agent
	}
	return s
}

func (b Breakpoint) matches(s *Stop) bool {
	return b.Kind == s.Break && (b.Agent == "" || b.Agent == s.Agent) && (b.Target == "" || b.Target == s.Target)
}

// Stop is where a run is held: what is about to happen.
type Stop struct {
	Break  string `json:"break"`            // the breakpoint's kind; traces.BreakStep when a step held the run
	Agent  string `json:"agent,omitempty"`  // the agent acting
	Target string `json:"target,omitempty"` // the transfer's target, the tool's or callee's name, the session key
	At     int64  `json:"at,omitempty"`     // the seq of the deciding reply's model.finished, 0 for none
	Detail string `json:"detail,omitempty"` // what is about to happen, for a person
	// Reply is the deciding reply, which a Resume may replace; nil when the stop is at no reply.
	Reply *traces.Message `json:"reply,omitempty"`
	// Input is what the next model call receives, which a Resume may replace; nil when the stop
	// is at no model call.
	Input []traces.Message `json:"input,omitempty"`
	// Args is, at a tool or AgentTool call held before it runs (HeldTool), its arguments: a
	// Resume may give a result in the tool's place. nil where the call runs whatever is decided.
	Args *string `json:"args,omitempty"`
	// Value is, at a session breakpoint, the value just written under Target, which a Resume may
	// replace.
	Value json.RawMessage `json:"value,omitempty"`
}

// Resume is how a held run goes on.
type Resume struct {
	Action string `json:"action"`       // traces.ActionContinue, ActionStep or ActionAbort
	By     string `json:"by,omitempty"` // who: page, api, cli
	// Reply replaces the deciding reply: its text, its tool calls (a transfer's target is the
	// agent_name in the transfer_to_agent call's arguments). Only where the stop has a reply.
	Reply *traces.Message `json:"reply,omitempty"`
	// Input replaces the messages the next model call receives. Only where the stop has them.
	Input []traces.Message `json:"input,omitempty"`
	// Result is given in place of the held tool call's result: the tool is not run, and the
	// model sees this. Only where the stop has Args.
	Result *string `json:"result,omitempty"`
	// Value replaces the session value the stop is at (JSON, read as the value written was).
	// Only at a session breakpoint.
	Value json.RawMessage `json:"value,omitempty"`
	// Step is, for a step, the kind of moment it goes on to (one of traces.Breaks: the next
	// model call, tool call...); "" for the next handoff (a transfer or an AgentTool call).
	Step string `json:"step,omitempty"`
}

// Debugger holds a run at its breakpoints until someone lets it go on. It is safe for
// concurrent use: the run consults it from its goroutines, a page or a prompt continues it.
type Debugger struct {
	// armed is whether any moment may hold the run (breakpoints set, a step going on, an abort
	// to carry out): the one check a run with none pays per moment.
	armed    atomic.Bool
	mu       sync.Mutex
	points   []Breakpoint
	stepping bool   // a step goes on: the next moment of kind step (the next handoff for "") holds the run
	step     string // the kind of moment a step goes on to, "" for a handoff
	held     *held  // the stop the run is held at, if any
	notify   func(Stop)
	history  string // how the run feeds a transfer's target its own way; "" for eino's default
	cancel   context.CancelFunc
	// aborted is set by an abort with no cancel to call (an app's run, which Baton does not
	// own): the next model call fails instead (see abortError).
	aborted bool
	// timeout, when not 0, bounds a hold: the run then goes on by itself, and expired is told.
	timeout time.Duration
	expired func(Stop)
	// released, when set, is told that a hold notify was told of is over, however it ended.
	released func()
}

// ByTimeout is who let a run go on (traces.Pause.By) when no decision came within the
// debugger's timeout (SetTimeout): the app went on by itself.
const ByTimeout = "timeout"

// ErrStopped is the cause (context.Cause) of the end of a run's context when whoever runs it
// stops, as a server shutting down does: a run held at a breakpoint then ends interrupted, not
// canceled, as nobody decided its end.
var ErrStopped = errors.New("baton: stopped while the run went on")

// ErrAborted is what a held model call of a run Baton does not own fails with once the run was
// aborted at a breakpoint. The run ends canceled.
var ErrAborted = errors.New("baton: the run was aborted at a breakpoint")

type held struct {
	stop   Stop
	answer chan Resume // buffered: Continue never waits
}

// NewDebugger returns a debugger holding a run at points. notify, when set, is told of each
// stop from the run's goroutine as it is held: it must return quickly.
func NewDebugger(points []Breakpoint, notify func(Stop)) *Debugger {
	d := &Debugger{points: slices.Clone(points), notify: notify}
	d.rearm()
	return d
}

// rearm sets armed from what may hold the run. Callers hold d.mu, or own d alone.
func (d *Debugger) rearm() { d.armed.Store(len(d.points) > 0 || d.stepping || d.aborted) }

// Armed reports whether any moment may hold the run now: breakpoints are set, a step goes on.
// It is one atomic load, for the paths that skip everything else when it is false.
func (d *Debugger) Armed() bool { return d.armed.Load() }

// SetTimeout bounds each hold to t (0 for none): with no decision by then the run goes on by
// itself, continued by ByTimeout, and expired (when set) is told of the stop, from the run's
// goroutine. For runs whose deciders may be gone: an app's, whose Baton may have stopped.
func (d *Debugger) SetTimeout(t time.Duration, expired func(Stop)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.timeout, d.expired = t, expired
}

// HoldFor makes s, a stop a run in another process is held at, the stop d is held at, so that
// Continue answers it; the answer comes on the channel returned. Release ends the hold when the
// run went on without one.
func (d *Debugger) HoldFor(s Stop) <-chan Resume { return d.begin(s).answer }

// Release ends the hold d is at, unanswered.
func (d *Debugger) Release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.held = nil
}

// Breakpoints returns the breakpoints set.
func (d *Debugger) Breakpoints() []Breakpoint {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.points)
}

// SetBreakpoints replaces the breakpoints, from the next moment the run reaches on.
func (d *Debugger) SetBreakpoints(points []Breakpoint) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.points = slices.Clone(points)
	d.rearm()
}

// Held returns the stop the run is held at, if it is.
func (d *Debugger) Held() (Stop, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.held == nil {
		return Stop{}, false
	}
	return d.held.stop, true
}

// Abort ends the run through cancel (its context's), which Resume's abort calls; set by who
// runs it.
func (d *Debugger) Abort(cancel context.CancelFunc) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cancel = cancel
}

// OwnHistory says that the run feeds a transfer's target other than by eino's default
// rewriting of the shared history, and how, for a person: each pause before a transfer says so,
// so that no one predicts the feed from the history.
func (d *Debugger) OwnHistory(how string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.history = how
}

// Continue lets the held run go on as r says. It fails with traces.CodeConflict when the run is
// not held, and traces.CodeInvalid for an unknown action or an edit the stop has nothing to
// edit for.
func (d *Debugger) Continue(r Resume) error {
	switch r.Action {
	case traces.ActionContinue, traces.ActionStep, traces.ActionAbort:
	case "":
		r.Action = traces.ActionContinue
	default:
		return traces.Errorf(traces.CodeInvalid, "action %q is not %s, %s or %s", r.Action, traces.ActionContinue, traces.ActionStep, traces.ActionAbort)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.held
	if h == nil {
		return traces.Errorf(traces.CodeConflict, "the run is not paused: only a paused run can be continued")
	}
	if r.Reply != nil && h.stop.Reply == nil {
		return traces.Errorf(traces.CodeInvalid, "the run is paused at a %s breakpoint, where no reply decided: reply can be edited only where one did (transfer, step)", h.stop.Break)
	}
	if r.Input != nil && h.stop.Input == nil {
		return traces.Errorf(traces.CodeInvalid, "the run is paused at a %s breakpoint, before no model call: input can be edited only at a model breakpoint", h.stop.Break)
	}
	if r.Result != nil && h.stop.Args == nil {
		return traces.Errorf(traces.CodeInvalid, "the run is paused at a %s breakpoint, before no tool call it can skip: result can be given only at a tool or agenttool breakpoint held before the tool runs", h.stop.Break)
	}
	if r.Value != nil && h.stop.Value == nil {
		return traces.Errorf(traces.CodeInvalid, "the run is paused at a %s breakpoint, at no session write: value can be edited only at a session breakpoint", h.stop.Break)
	}
	if r.Value != nil && !json.Valid(r.Value) {
		return traces.Errorf(traces.CodeInvalid, "value is not JSON: write the session value as JSON (a string in quotes)")
	}
	if r.Step != "" && (r.Action != traces.ActionStep || !slices.Contains(traces.Breaks, r.Step)) {
		return traces.Errorf(traces.CodeInvalid, "step %q: give it with action step, one of %s (none for the next handoff)", r.Step, strings.Join(traces.Breaks, ", "))
	}
	if r.Reply != nil && r.Reply.Role == "" {
		r.Reply.Role = "assistant"
	}
	for i, m := range r.Input {
		if m.Role == "" {
			return traces.Errorf(traces.CodeInvalid, "input[%d] has no role: give each message its role (system, user, assistant, tool)", i)
		}
	}
	d.held = nil
	d.stepping, d.step = r.Action == traces.ActionStep, r.Step
	if r.Action == traces.ActionAbort {
		if d.cancel != nil {
			d.cancel()
		} else {
			d.aborted = true
		}
	}
	d.rearm()
	h.answer <- r
	return nil
}

// wants reports whether s holds the run, and by which kind: s's own, or a step's.
func (d *Debugger) wants(s *Stop) (string, bool) {
	if !d.armed.Load() {
		return "", false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	handoff := d.step == "" && (s.Break == traces.BreakTransfer || s.Break == traces.BreakAgentTool)
	if d.stepping && (handoff || s.Break == d.step) {
		d.stepping = false
		d.rearm()
		return traces.BreakStep, true
	}
	for _, b := range d.points {
		if b.matches(s) {
			return s.Break, true
		}
	}
	return "", false
}

// begin makes s the stop the run is held at: Continue answers it from now on.
func (d *Debugger) begin(s Stop) *held {
	h := &held{stop: s, answer: make(chan Resume, 1)}
	d.mu.Lock()
	d.held = h
	d.mu.Unlock()
	return h
}

// wait holds the run at h until Continue, until ctx ends (an abort by Baton), or until the
// debugger's timeout passes (the run goes on by itself).
func (d *Debugger) wait(ctx context.Context, h *held) Resume {
	d.mu.Lock()
	timeout, expired := d.timeout, d.expired
	d.mu.Unlock()
	if d.notify != nil {
		d.notify(h.stop)
	}
	if d.released != nil {
		defer d.released()
	}
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	unanswered := func(r Resume) Resume {
		d.mu.Lock()
		if d.held == h {
			d.held = nil
		}
		d.mu.Unlock()
		select {
		case answer := <-h.answer: // continued just then
			return answer
		default:
			return r
		}
	}
	select {
	case r := <-h.answer:
		return r
	case <-ctx.Done():
		return unanswered(Resume{Action: traces.ActionAbort, By: "baton"})
	case <-timer:
		r := unanswered(Resume{Action: traces.ActionContinue, By: ByTimeout})
		if r.By == ByTimeout && expired != nil {
			expired(h.stop)
		}
		return r
	}
}

// abortError is what a held call returns once the run was aborted: the run's context's error
// once the debugger canceled it (so the run ends canceled), or ErrAborted when it has nothing to
// cancel.
func (d *Debugger) abortError(ctx context.Context) error {
	d.mu.Lock()
	cancel := d.cancel
	d.mu.Unlock()
	if cancel == nil {
		return ErrAborted
	}
	<-ctx.Done()
	return ctx.Err()
}

// isAborted reports whether the run was aborted with nothing to cancel: its next model call fails.
func (d *Debugger) isAborted() bool {
	if !d.armed.Load() {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.aborted
}

// parkedWait bounds how long a hold waits for the AgentTool call ends parked before it (see
// inner.go) to be decided, so that its paused event is seen at once.
const parkedWait = 2 * time.Second

// hold holds the run at s when a breakpoint wants it, recording paused and continued around the
// wait, and returns how it went on; ok is false when nothing held it. Callers do not hold r.mu.
func (r *Recorder) hold(ctx context.Context, v *visit, s Stop) (Resume, bool) {
	d := r.debug
	if d == nil || ctx == nil || ctx.Err() != nil {
		return Resume{}, false // nothing to hold once the run is ending
	}
	brk, ok := d.wants(&s)
	if !ok {
		return Resume{}, false
	}
	on := ""
	if brk != s.Break {
		on = s.Break // a step held the run at this kind of moment
	}
	feed := ""
	if s.Break == traces.BreakTransfer {
		d.mu.Lock()
		feed = d.history
		d.mu.Unlock()
	}
	s.Break = brk
	var path []string
	if v != nil {
		path = v.path
	}
	h := d.begin(s) // before the paused event: whoever reads it can continue at once
	// An AgentTool call's end waits for the caller's copy of events, which carries it soon: the
	// paused event must not wait, unseen, behind it.
	r.mu.Lock()
	if len(r.out.parked) > 0 {
		deadline := time.NewTimer(parkedWait)
		for late := false; len(r.out.parked) > 0 && !late; {
			drained := r.out.drained()
			r.mu.Unlock()
			select {
			case <-drained:
			case <-deadline.C:
				late = true
			}
			r.mu.Lock()
		}
		deadline.Stop()
	}
	r.out.emit(&traces.Event{Kind: traces.KindPaused, Agent: s.Agent, RunPath: path,
		Pause: &traces.Pause{Break: s.Break, On: on, Feed: feed, Target: s.Target, At: s.At, Detail: s.Detail, Input: s.Input, Args: s.Args, Value: s.Value}})
	r.mu.Unlock()
	res := d.wait(ctx, h)
	p := &traces.Pause{Break: s.Break, Target: s.Target, At: s.At, Action: res.Action, By: res.By, Reply: res.Reply, Input: res.Input, Result: res.Result, Value: res.Value}
	p.Edited = edits(s, res)
	if res.By == ByTimeout {
		d.mu.Lock()
		p.Detail = fmt.Sprintf("no decision came within %s: the app went on by itself", d.timeout)
		d.mu.Unlock()
	}
	r.mu.Lock()
	switch {
	case res.Action == traces.ActionAbort && res.By == "baton" && errors.Is(context.Cause(ctx), ErrStopped):
		r.run.stopped = true // held when Baton stopped: the run ends interrupted
	case res.Action == traces.ActionAbort:
		r.run.aborted = true // a failure from here on is the abort's: the run ends canceled
	}
	var set *traces.Event // the session value written instead, recorded after continued
	if res.Value != nil && s.Value != nil && string(res.Value) != string(s.Value) && res.Action != traces.ActionAbort {
		var err error
		if set, err = r.editSession(ctx, v, s, res.Value); err != nil {
			p.Edited += " (not written: " + err.Error() + ")"
		}
	}
	r.out.emit(&traces.Event{Kind: traces.KindContinued, Agent: s.Agent, RunPath: path, Pause: p})
	if set != nil {
		r.out.emit(set)
	}
	r.mu.Unlock()
	return res, true
}

// edits says, for a person, what res changed of what s was about to do.
func edits(s Stop, res Resume) string {
	var parts []string
	if res.Reply != nil && s.Reply != nil {
		was, now := transferTarget(s.Reply), transferTarget(res.Reply)
		if was != now {
			parts = append(parts, fmt.Sprintf("transfer target: %s → %s", orNone(was), orNone(now)))
		}
		if res.Reply.Content != s.Reply.Content {
			parts = append(parts, "reply text")
		}
		if !slices.EqualFunc(res.Reply.ToolCalls, s.Reply.ToolCalls, func(a, b traces.ToolCallSpec) bool { return a.Name == b.Name && a.Arguments == b.Arguments }) && was == now {
			parts = append(parts, "reply tool calls")
		}
	}
	if res.Input != nil && !slices.EqualFunc(res.Input, s.Input, sameTraceMessage) {
		parts = append(parts, fmt.Sprintf("model input: %d messages → %d", len(s.Input), len(res.Input)))
	}
	if res.Result != nil && s.Args != nil {
		parts = append(parts, fmt.Sprintf("tool result given: %s was not run", s.Target))
	}
	if res.Value != nil && s.Value != nil && string(res.Value) != string(s.Value) {
		parts = append(parts, fmt.Sprintf("session value %s: %s → %s", s.Target, clip(string(s.Value), 80), clip(string(res.Value), 80)))
	}
	return strings.Join(parts, "; ")
}

func sameTraceMessage(a, b traces.Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.ToolCallID == b.ToolCallID &&
		slices.EqualFunc(a.ToolCalls, b.ToolCalls, func(x, y traces.ToolCallSpec) bool { return x == y })
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// transferTarget returns the agent a reply transfers to, "" for none.
func transferTarget(m *traces.Message) string {
	for _, tc := range m.ToolCalls {
		if tc.Name == transferToolName {
			return transferArgTarget(tc.Arguments)
		}
	}
	return ""
}
