package web

import (
	"fmt"
	"time"

	"github.com/baton-dev/baton/traces"
)

// Inspection is the inspector panel for one event.
type Inspection struct {
	Seq     int64
	Time    time.Time
	Clock   string // as Row.Clock
	Stamp   string // as Row.Stamp
	Kind    traces.Kind
	Agent   string
	Colour  int
	RunPath []string
	Title   string
	Summary string
	Failed  bool
	Facts   []Fact
	Blocks  []Block
	// Messages is a model call's input or an agent's fed history, with origins.
	Messages      []FedMessage
	MessagesTitle string
	Links         []Ref // related events: the other half of a call, the error that failed a transfer...
	// Decision is, for a transfer, the seq of the event that made it (the model.finished whose
	// reply called it, or a deterministic wrapper's call), 0 when the trace has none; DecisionText
	// says who decided. Received is the target's agent.started, whose input is Messages.
	Decision     int64
	DecisionText string
	Received     int64
	// Pair lists, for a transfer whose direction between its two agents was taken more than
	// once (a bundled edge of the tree), those transfers in order, the newest PairShown of them
	// when there are more; PairTitle says which and how many.
	Pair      []Ref
	PairTitle string
	// Breaks are the breakpoints the page offers to add from this event (breaksAt).
	Breaks []BreakHere
}

// PairShown is how many transfers of one direction a transfer's inspector lists at most.
const PairShown = 100

// Fact is a short labelled value. Colour is an agent's colour index when Value names an agent,
// -1 otherwise.
type Fact struct {
	Label  string
	Value  string
	Colour int
}

// Ref points at another event.
type Ref struct {
	Label string
	Seq   int64
}

// NewInspection returns the inspector for event seq of tr, or an error with traces.CodeNotFound
// when tr has no such event.
func NewInspection(tr traces.Trace, seq int64, opts ...Option) (Inspection, error) {
	if eventIndex(tr, seq) < 0 {
		return Inspection{}, traces.Errorf(traces.CodeNotFound, "run %s has no event %d", tr.Run.ID, seq)
	}
	return analyse(tr, pricingOf(tr.Run, opts)).inspectionOf(seq)
}

// Inspection is NewInspection of the events the state took in, read from its analysis rather
// than a new one: a click in the page of a long run costs the one event, not the run.
func (v *ViewState) Inspection(seq int64) (Inspection, error) { return v.a.inspectionOf(seq) }

// inspectionOf returns the inspector of event seq, or an error with traces.CodeNotFound.
func (a *analysis) inspectionOf(seq int64) (Inspection, error) {
	i := eventIndex(a.tr, seq)
	if i < 0 {
		return Inspection{}, traces.Errorf(traces.CodeNotFound, "run %s has no event %d", a.tr.Run.ID, seq)
	}
	return a.inspection(i), nil
}

// inspection returns the inspector for the event at index i of the analysed trace.
func (a *analysis) inspection(i int) Inspection { return a.inspectionLast(i, 0) }

// inspectionLast is inspection showing only the last messages fed (all when last is 0).
func (a *analysis) inspectionLast(i, last int) Inspection {
	e := &a.tr.Events[i]
	in := Inspection{
		Seq: e.Seq, Time: e.Time, Clock: clock(e.Time), Stamp: stamp(e.Time), Kind: e.Kind,
		Agent: e.Agent, Colour: a.tree.roster.colour(e.Agent), RunPath: collapse(e.RunPath),
		Title: fmt.Sprintf("#%d %s", e.Seq, e.Kind), Summary: oneLine(Summary(*e)), Breaks: breaksAt(e),
	}
	s := &inspector{a: a, in: &in, i: i, last: last}
	s.fill()
	if s.cut {
		in.MessagesTitle += fmt.Sprintf(": the last %d here; the run in Baton shows all", last)
	}
	if a.timeline.callbacksOnly[e.Seq] {
		in.Facts = append(in.Facts, Fact{Label: "seen", Value: callbacksOnlyFact, Colour: -1})
	}
	if m := a.inspect.echoedBy[e.Seq]; m > 0 {
		in.Links = append(in.Links, Ref{Label: "its message (folded into this row)", Seq: m})
	}
	if c := a.timeline.echoOf[e.Seq]; c > 0 {
		in.Links = append(in.Links, Ref{Label: "the call it repeats", Seq: c})
	}
	return in
}

// collapse drops adjacent duplicates from a run path.
func collapse(path []string) []string {
	var out []string
	for _, p := range path {
		if len(out) == 0 || out[len(out)-1] != p {
			out = append(out, p)
		}
	}
	return out
}

// inspector fills one Inspection.
type inspector struct {
	a  *analysis
	in *Inspection
	i  int
	// last, when above 0, is how many of the latest messages fed to an agent or a model it
	// shows; cut is set when it showed fewer than there were.
	last int
	cut  bool
}

func (s *inspector) fact(label, value string) {
	if value != "" {
		s.in.Facts = append(s.in.Facts, Fact{Label: label, Value: value, Colour: -1})
	}
}

func (s *inspector) agentFact(label, name string) {
	if name != "" {
		s.in.Facts = append(s.in.Facts, Fact{Label: label, Value: name, Colour: s.a.tree.roster.colour(name)})
	}
}

func (s *inspector) block(label, text string) {
	if text != "" {
		s.in.Blocks = append(s.in.Blocks, NewBlock(label, text))
	}
}

func (s *inspector) link(label string, seq int64) {
	if seq > 0 {
		s.in.Links = append(s.in.Links, Ref{Label: label, Seq: seq})
	}
}

// find returns the seq of the nearest event before (dir -1) or after (dir 1) this one that
// matches, or 0.
// fed is the session's fed for the event at index i: msgs that agent received, with their origins.
func (s *inspector) fed(i int, agent string, msgs []traces.Message) []FedMessage {
	if s.last > 0 && len(msgs) > s.last {
		s.cut = true
		return s.a.session.fedLast(s.a.tr, i, agent, msgs, s.a.tree.roster, s.last)
	}
	return s.a.session.fed(s.a.tr, i, agent, msgs, s.a.tree.roster)
}

func (s *inspector) find(dir int, match func(*traces.Event) bool) int64 {
	ev := s.a.tr.Events
	for j := s.i + dir; j >= 0 && j < len(ev); j += dir {
		if match(&ev[j]) {
			return ev[j].Seq
		}
	}
	return 0
}

func (s *inspector) fill() {
	e := &s.a.tr.Events[s.i]
	switch {
	case e.Run != nil:
		s.run(e)
	case e.AgentRun != nil:
		s.agentRun(e)
	case e.Model != nil:
		s.model(e)
	case e.Tool != nil:
		s.tool(e)
	case e.Message != nil:
		s.message("message", *e.Message)
	case e.Transfer != nil:
		s.transfer(e)
	case e.AgentTool != nil:
		s.agentTool(e)
	case e.Session != nil:
		s.session(e)
	case e.Interrupt != nil:
		s.fact("interrupt id", e.Interrupt.ID)
		s.fact("address", e.Interrupt.Address)
		s.block("info", e.Interrupt.Info)
	case e.Exit != nil:
		s.block("final result", e.Exit.FinalResult)
	case e.BreakLoop != nil:
		s.agentFact("from", e.BreakLoop.From)
		s.fact("iterations", fmt.Sprint(e.BreakLoop.Iterations))
	case e.Error != nil:
		s.in.Failed = true
		s.block("error", e.Error.Message)
		if e.Agent == "" {
			s.fact("agent", "not attributed by eino")
		}
	}
}
