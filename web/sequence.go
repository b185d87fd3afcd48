package web

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/baton-dev/baton/traces"
)

// Sequence is the handoff sequence view's model: one lane per agent over time, a bar per agent
// visit with its model and tool calls nested in it, and an arrow per transfer and per AgentTool
// call and return. The client draws it (static/sequence.js) from this compact form, only the part
// in view. Times are milliseconds since the run's first event.
//
// A Sequence is either Full (every bar and arrow as of Head) or a delta: the bars and arrows that
// the events of a range of seqs created or changed, in their state as of Head, which the client
// puts in place of its copies by ID. Lanes are always whole, and bars and arrows name lanes by index in
// them: the client resolves them to agents as it takes a Sequence in.
type Sequence struct {
	Full   bool       `json:"full"`
	Head   int64      `json:"head"` // the newest event taken in
	Now    float64    `json:"now"`  // the newest event's time: where open bars end for now
	Lanes  []SeqLane  `json:"lanes"`
	Bars   []SeqBar   `json:"bars"`
	Arrows []SeqArrow `json:"arrows"`
}

// SeqLane is one agent's lane.
type SeqLane struct {
	Agent  string `json:"agent"`
	Colour int    `json:"colour"`
	Depth  int    `json:"depth"` // in the agent tree, for the label's indent
}

// Bar kinds.
const (
	BarVisit = "agent" // an agent's visit: from its agent.started (or first own work) to its agent.finished
	BarModel = "model" // a model call: model.started to model.finished
	BarTool  = "tool"  // a tool call: tool.started to tool.finished
)

// SeqBar is one span of work on a lane, from event Seq at T0 to event End at T1. End is 0 while
// the span is open (T1 is then its start). Parent is the visit a model or tool call nests in, -1
// for visits and for calls made outside any visit.
type SeqBar struct {
	ID     int
	Lane   int
	Kind   string
	Name   string // the tool's name, the model's the call named ("gpt-4o-mini"; "" when it named none)
	Seq    int64
	End    int64
	T0     float64
	T1     float64
	Tokens int
	Failed bool
	Parent int
}

// Arrow kinds.
const (
	ArrowTransfer = "transfer" // control handed from one agent to another
	ArrowCall     = "call"     // an AgentTool call, caller to callee
	ArrowReturn   = "return"   // its result, callee to caller
)

// SeqArrow is one arrow between lanes at event Seq. Order numbers transfers as the tree's edges
// do (1..n, TransferEdge.Order), and AgentTool calls and their returns by call (1..n).
type SeqArrow struct {
	ID     int
	Kind   string
	Order  int
	From   int
	To     int
	Seq    int64
	T      float64
	Mode   string // transfers: llm or deterministic
	Failed bool
}

// MarshalJSON writes b as an array, [id, lane, kind, name, seq, end, t0, t1, tokens, failed,
// parent]: a run's bars are its bulk, and names of fields repeated thousands of times (then
// escaped into an HTML attribute) would be most of it.
func (b SeqBar) MarshalJSON() ([]byte, error) {
	out := make([]byte, 0, 64)
	out = append(strconv.AppendInt(append(out, '['), int64(b.ID), 10), ',')
	out = append(strconv.AppendInt(out, int64(b.Lane), 10), ',')
	out = append(appendString(out, b.Kind), ',')
	out = append(appendString(out, b.Name), ',')
	out = append(strconv.AppendInt(out, b.Seq, 10), ',')
	out = append(strconv.AppendInt(out, b.End, 10), ',')
	out = append(strconv.AppendFloat(out, b.T0, 'f', -1, 64), ',')
	out = append(strconv.AppendFloat(out, b.T1, 'f', -1, 64), ',')
	out = append(strconv.AppendInt(out, int64(b.Tokens), 10), ',')
	out = append(strconv.AppendBool(out, b.Failed), ',')
	return append(strconv.AppendInt(out, int64(b.Parent), 10), ']'), nil
}

// MarshalJSON writes a as an array, [id, kind, order, from, to, seq, t, mode, failed], as SeqBar
// does.
func (a SeqArrow) MarshalJSON() ([]byte, error) {
	out := make([]byte, 0, 48)
	out = append(strconv.AppendInt(append(out, '['), int64(a.ID), 10), ',')
	out = append(appendString(out, a.Kind), ',')
	out = append(strconv.AppendInt(out, int64(a.Order), 10), ',')
	out = append(strconv.AppendInt(out, int64(a.From), 10), ',')
	out = append(strconv.AppendInt(out, int64(a.To), 10), ',')
	out = append(strconv.AppendInt(out, a.Seq, 10), ',')
	out = append(strconv.AppendFloat(out, a.T, 'f', -1, 64), ',')
	out = append(appendString(out, a.Mode), ',')
	return append(strconv.AppendBool(out, a.Failed), ']'), nil
}

// appendString appends s as a JSON string.
func appendString(out []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(out, q...)
}

// sequence is the sequence panel's piece of the analysis, built one event at a time: the bars
// and arrows so far, what is open, and a log of which bar or arrow each event touched, so that a
// delta costs what it holds. It reads the tree (lanes are the roster's agents; transfers and
// AgentTool calls are the tree's) and the run's first time, and holds no pointer into either.
type sequence struct {
	bars   []SeqBar
	arrows []SeqArrow
	visit  map[string]int  // each agent's open visit
	model  map[callKey]int // open model calls, by agent and id
	tool   map[callKey]int // open tool calls, by agent and call id (else name)
	open   map[int]bool    // every open bar
	arrow  []int           // a transfer's arrow, by its order less one (-1: none yet): orders are dense
	calls  map[int]int     // each AgentTool call's order, by its index in the tree's calls
	log    []seqTouch
}

// callKey names an open model or tool call: its agent and its id. A pair, not the two joined
// in a string, which was an allocation an event.
type callKey struct{ agent, id string }

// seqTouch says that event seq created or changed a bar (arrow false) or an arrow.
type seqTouch struct {
	seq   int64
	id    int
	arrow bool
}

func newSequence() *sequence {
	return &sequence{visit: map[string]int{}, model: map[callKey]int{}, tool: map[callKey]int{},
		open: map[int]bool{}, calls: map[int]int{}}
}

// grow makes room for bars and arrows more, and their log: each bar is logged as it opens and
// as it closes, an arrow as it is drawn (and failed, now and then).
func (s *sequence) grow(bars, arrows int) {
	s.bars = slices.Grow(s.bars, bars)
	s.arrows = slices.Grow(s.arrows, arrows)
	s.log = slices.Grow(s.log, 2*bars+arrows)
}

// clone copies s: its open bars and arrows are changed in place, its log only grows.
func (s *sequence) clone() *sequence {
	c := *s
	c.bars, c.arrows, c.log = slices.Clone(s.bars), slices.Clone(s.arrows), capped(s.log)
	c.visit, c.model, c.tool = maps.Clone(s.visit), maps.Clone(s.model), maps.Clone(s.tool)
	c.open, c.arrow, c.calls = maps.Clone(s.open), slices.Clone(s.arrow), maps.Clone(s.calls)
	return &c
}

// ms returns t as milliseconds since t0, the run's first event's time.
func ms(t, t0 time.Time) float64 {
	return float64(t.Sub(t0).Microseconds()) / 1000
}

// add takes e into the sequence view, after the tree (t) took it in and changed what c says; t0
// is the run's first event's time.
func (s *sequence) add(e *traces.Event, t *treeState, c treeChange, t0 time.Time) {
	if c.failed != nil {
		s.fail(c.failed, e.Seq)
	}
	if !hasPayload(e) {
		return
	}
	r, at := t.roster, ms(e.Time, t0)
	switch e.Kind {
	case traces.KindAgentStarted:
		if v, ok := s.visit[e.Agent]; ok {
			s.closeBar(r, v, e, at, false) // a visit with no agent.finished: the next one ends it
		}
		s.openVisit(r, e, at)
	case traces.KindAgentFinished:
		if v, ok := s.visit[e.Agent]; ok {
			s.closeBar(r, v, e, at, e.AgentRun.Error != "")
		}
	case traces.KindModelStarted:
		s.model[callKey{e.Agent, e.Model.ID}] = s.openBar(r, e, at, BarModel, e.Model.Name)
	case traces.KindModelFinished:
		k := callKey{e.Agent, e.Model.ID}
		b, ok := s.model[k]
		if !ok {
			b = s.openBar(r, e, at, BarModel, e.Model.Name) // a trace cut before the call's start
		}
		delete(s.model, k)
		if s.bars[b].Name == "" {
			s.bars[b].Name = e.Model.Name // named at its end only
		}
		if u := e.Model.Usage; u != nil {
			s.bars[b].Tokens = u.TotalTokens
		}
		s.closeBar(r, b, e, at, e.Model.Error != "")
	case traces.KindToolStarted:
		s.tool[callKey{e.Agent, firstNonEmpty(e.Tool.CallID, e.Tool.Name)}] = s.openBar(r, e, at, BarTool, e.Tool.Name)
	case traces.KindToolFinished:
		k := callKey{e.Agent, firstNonEmpty(e.Tool.CallID, e.Tool.Name)}
		b, ok := s.tool[k]
		if !ok {
			b = s.openBar(r, e, at, BarTool, e.Tool.Name)
		}
		delete(s.tool, k)
		s.closeBar(r, b, e, at, e.Tool.Error != "")
	case traces.KindTransfer:
		x := t.transferAt(e.Seq)
		for len(s.arrow) < x.order {
			s.arrow = append(s.arrow, -1)
		}
		s.arrow[x.order-1] = s.addArrow(r, e, at, ArrowTransfer, x.order, x.t.From, x.t.To, x.t.Mode, x.failed)
	case traces.KindAgentToolEnter:
		order := len(s.calls) + 1
		s.calls[len(t.calls)-1] = order // the tree appended it
		s.addArrow(r, e, at, ArrowCall, order, e.AgentTool.Caller, e.AgentTool.Callee, "", false)
	case traces.KindAgentToolExit:
		// The tree paired it with its call, if it had one: the newest call exited here.
		order := 0
		for i := len(t.calls) - 1; i >= 0 && order == 0; i-- {
			if t.calls[i].exit == e.Seq {
				order = s.calls[i]
			}
		}
		s.addArrow(r, e, at, ArrowReturn, order, e.AgentTool.Callee, e.AgentTool.Caller, "", false)
	case traces.KindRunFinished:
		for _, b := range s.openBars() {
			s.closeBar(r, b, e, at, false)
		}
	}
}

// openBars returns the open bars, innermost (newest) first.
func (s *sequence) openBars() []int {
	ids := make([]int, 0, len(s.open))
	for id := range s.open {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(x, y int) int { return cmp.Compare(y, x) })
	return ids
}

func (s *sequence) openVisit(r *roster, e *traces.Event, at float64) int {
	id := s.newBar(r, e, at, BarVisit, "", -1)
	s.visit[e.Agent] = id
	return id
}

// openBar opens a model or tool bar of e's agent inside its visit, opening a visit first when
// the agent has none (a trace without agent events).
func (s *sequence) openBar(r *roster, e *traces.Event, at float64, kind, name string) int {
	v, ok := s.visit[e.Agent]
	if !ok && e.Agent != "" {
		v, ok = s.openVisit(r, e, at), true
	}
	if !ok {
		v = -1
	}
	return s.newBar(r, e, at, kind, name, v)
}

func (s *sequence) newBar(r *roster, e *traces.Event, at float64, kind, name string, parent int) int {
	id := len(s.bars)
	s.bars = append(s.bars, SeqBar{ID: id, Lane: r.lane(e.Agent), Kind: kind, Name: name, Seq: e.Seq,
		T0: at, T1: at, Parent: parent})
	s.open[id] = true
	s.log = append(s.log, seqTouch{seq: e.Seq, id: id})
	return id
}

// closeBar ends bar id at e, at ms at (its calls still open end with it), and forgets it as open.
func (s *sequence) closeBar(r *roster, id int, e *traces.Event, at float64, failed bool) {
	if !s.open[id] {
		return
	}
	b := &s.bars[id]
	b.End, b.T1, b.Failed = e.Seq, max(b.T0, at), b.Failed || failed
	delete(s.open, id)
	s.log = append(s.log, seqTouch{seq: e.Seq, id: id})
	if b.Kind != BarVisit {
		return
	}
	if s.visit[r.laneName(b.Lane)] == id {
		delete(s.visit, r.laneName(b.Lane))
	}
	for _, c := range s.openBars() {
		if s.bars[c].Parent == id {
			s.closeBar(r, c, e, at, false)
		}
	}
}

func (s *sequence) addArrow(r *roster, e *traces.Event, at float64, kind string, order int, from, to, mode string, failed bool) int {
	id := len(s.arrows)
	s.arrows = append(s.arrows, SeqArrow{ID: id, Kind: kind, Order: order, From: r.lane(from), To: r.lane(to),
		Seq: e.Seq, T: at, Mode: mode, Failed: failed})
	s.log = append(s.log, seqTouch{seq: e.Seq, id: id, arrow: true})
	return id
}

// fail marks transfer t's arrow failed, at event seq (an error after it said so).
func (s *sequence) fail(t *transfer, seq int64) {
	if t.order > len(s.arrow) || s.arrow[t.order-1] < 0 {
		return
	}
	if id := s.arrow[t.order-1]; !s.arrows[id].Failed {
		s.arrows[id].Failed = true
		s.log = append(s.log, seqTouch{seq: seq, id: id, arrow: true})
	}
}

// lane returns agent name's lane: its index in the roster, -1 for none.
func (r *roster) lane(name string) int {
	if m := r.byName[name]; m != nil {
		return slices.Index(r.list, m)
	}
	return -1
}

func (r *roster) laneName(lane int) string {
	if lane < 0 || lane >= len(r.list) {
		return ""
	}
	return r.list[lane].Name
}

// view returns the sequence view: whole when after <= 0, else what the events after seq after,
// up to seq through, created or changed (in its state now). A delta costs what it holds, not a
// pass over the run. head is the newest event, now its time in ms, r the tree's roster.
func (s *sequence) view(after, through, head int64, now float64, r *roster) Sequence {
	out := Sequence{Full: after <= 0, Head: head, Now: now, Lanes: r.lanes()}
	if out.Full {
		out.Bars, out.Arrows = slices.Clone(s.bars), slices.Clone(s.arrows)
		return out
	}
	bySeq := func(t seqTouch, seq int64) int { return cmp.Compare(t.seq, seq) }
	i, _ := slices.BinarySearchFunc(s.log, after+1, bySeq)
	j, _ := slices.BinarySearchFunc(s.log, through+1, bySeq)
	seenBar, seenArrow := map[int]bool{}, map[int]bool{}
	for _, t := range s.log[i:max(i, j)] {
		switch {
		case t.arrow && !seenArrow[t.id]:
			seenArrow[t.id] = true
			out.Arrows = append(out.Arrows, s.arrows[t.id])
		case !t.arrow && !seenBar[t.id]:
			seenBar[t.id] = true
			out.Bars = append(out.Bars, s.bars[t.id])
		}
	}
	return out
}

func (r *roster) lanes() []SeqLane {
	out := make([]SeqLane, len(r.list))
	for i, m := range r.list {
		out[i] = SeqLane{Agent: m.Name, Colour: m.colour, Depth: r.depth(m.Name)}
	}
	return out
}
