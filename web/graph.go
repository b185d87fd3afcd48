package web

import (
	"fmt"

	"github.com/baton-dev/baton/traces"
)

// Graph is the agent tree as the run page draws it: an SVG whose viewBox is 0 0 Width Height.
type Graph struct {
	Width, Height float64
	Nodes         []Node         // preorder of the tree
	Links         []Link         // parent to sub-agent
	Boundaries    []Boundary     // one per AgentTool callee
	Transfers     []TransferEdge // in order, Order 1..n
}

// Node is one agent of the tree.
type Node struct {
	Name        string
	Label       string // Name shortened to fit the box
	Description string
	Kind        traces.AgentKind
	Parent      string
	Relation    traces.Relation
	Depth       int
	Box         Rect
	State       State
	Colour      int
	ModelCalls  int
	ToolCalls   int
	Tokens      int
	Detail      string // "3 calls · 1.2k tok"
	LastSeq     int64  // the agent's latest event, 0 when idle: what clicking the node inspects
	Error       string // why it failed, when it did
	Extra       bool   // not in Trace.Agents: met in the events
	Missing     bool   // only named as the target of a transfer that failed because it does not exist
	Caller      bool   // it calls at least one AgentTool
}

// Link is the line from a parent to its sub-agent (AgentTool callees get a Boundary instead).
type Link struct {
	From, To string
	A, B     Point
}

// Boundary is the frame around an AgentTool callee: the callee runs in a history of its own but
// shares session values with Caller. Call and Result are the arrow pair between caller and
// callee; CallSeq and ResultSeq are the newest agenttool.entered and agenttool.exited events (0
// when none).
type Boundary struct {
	Caller, Callee string
	CallerColour   int
	Frame          Rect
	Caption        string   // "AgentTool of {caller}:"
	Note           string   // "own history, shared session values"
	CaptionLines   []string // Caption wrapped to the frame's width, drawn at its top
	NoteLines      []string // Note wrapped likewise, drawn at its bottom
	Calls          int
	Running        bool // entered and not exited yet
	CallSeq        int64
	ResultSeq      int64
	Call, Result   [2]Point
	// CallLabel and ResultLabel are where the arrows' words sit, just above the frame and on the
	// outer side of each arrow; CallAnchor and ResultAnchor are their SVG text-anchor.
	CallLabel, ResultLabel   Point
	CallAnchor, ResultAnchor string
}

// TransferEdge is one transfer of control, drawn from From to To. Path is SVG path data and
// Label where the order number sits. Failed is set when an error reported the transfer failed
// (FailSeq is that error's event); Current marks the newest transfer. Only the newest Lanes
// transfers of each direction between two agents are drawn: older ones have no Path, and the
// oldest drawn one counts them in Earlier.
type TransferEdge struct {
	Order   int
	Seq     int64
	From    string
	To      string
	Mode    string
	CallID  string
	Failed  bool
	FailSeq int64
	Error   string
	Current bool
	Path    string
	Label   Point
	Earlier int
}

// Lanes is how many transfers of one direction between two agents the tree draws.
const Lanes = 3

// NewGraph lays out tr's agent tree with the state each agent is in after tr's last event.
func NewGraph(tr traces.Trace) Graph {
	return newGraph(analyse(tr))
}

func newGraph(a *analysis) Graph {
	slots, w, h := layoutTree(a.roster)
	g := Graph{Width: w, Height: h}
	boxes := make(map[string]Rect, len(slots))
	depth := make(map[string]int, len(slots))
	for _, s := range slots {
		boxes[s.m.Name] = s.box
		if s.m.Parent != "" {
			depth[s.m.Name] = depth[s.m.Parent] + 1
		}
	}
	callers := make(map[string]bool)
	for _, s := range slots {
		if s.frame {
			callers[s.m.Parent] = true
			g.Boundaries = append(g.Boundaries, a.boundary(s, boxes[s.m.Parent]))
		} else if s.m.Parent != "" && !s.m.missing {
			// The link runs between a transfer pair's two lanes (see transferPath).
			g.Links = append(g.Links, Link{From: s.m.Parent, To: s.m.Name, A: facing(boxes[s.m.Parent], s.box), B: s.box.topMid(0)})
		}
	}
	for _, s := range slots {
		g.Nodes = append(g.Nodes, a.node(s, depth[s.m.Name], callers[s.m.Name]))
	}
	g.Transfers = a.transferEdges(boxes)
	for _, t := range g.Transfers {
		// A transfer within a row dips below it: make room for the lowest such dip.
		if t.Path != "" {
			g.Height = max(g.Height, t.Label.Y+40)
		}
	}
	return g
}

func (a *analysis) node(s *slot, depth int, caller bool) Node {
	m, x := s.m, a.stateOf(s.m.Name)
	n := Node{
		Name: m.Name, Label: shorten(m.Name, 17), Description: m.Description, Kind: m.Kind,
		Parent: m.Parent, Relation: m.Relation, Depth: depth, Box: s.box, State: x.state,
		Colour: m.colour, ModelCalls: x.modelCalls, ToolCalls: x.toolCalls, Tokens: x.tokens,
		LastSeq: x.lastSeq, Error: x.err, Extra: m.extra, Missing: m.missing, Caller: caller,
	}
	switch {
	case m.missing:
		n.Detail = "no such agent"
	case x.modelCalls == 0 && x.toolCalls == 0:
		n.Detail = string(m.Kind)
	default:
		n.Detail = fmt.Sprintf("%s · %s tok", plural(x.modelCalls, "call"), compact(x.tokens))
	}
	return n
}

func (a *analysis) boundary(s *slot, caller Rect) Boundary {
	b := Boundary{
		Caller: s.m.Parent, Callee: s.m.Name, CallerColour: a.roster.colour(s.m.Parent),
		Frame: s.outer, Caption: "AgentTool of " + s.m.Parent + ":", Note: frameNote,
		CaptionLines: s.caption, NoteLines: s.note,
	}
	for _, c := range a.calls {
		if c.callee != b.Callee {
			continue
		}
		if c.enter != 0 {
			b.Calls++
			b.CallSeq = c.enter
		}
		if c.exit != 0 {
			b.ResultSeq = c.exit
		}
		b.Running = c.enter != 0 && c.exit == 0
	}
	from, to := facing(caller, s.box), s.box.topMid(0)
	left := leftOf(from, to).scale(9)
	b.Call = [2]Point{from.add(left), to.add(left)}
	b.Result = [2]Point{to.sub(left), from.sub(left)}
	y := s.outer.Y - 7
	xc, xr := atY(b.Call[0], b.Call[1], y), atY(b.Result[1], b.Result[0], y)
	if xc <= xr {
		b.CallLabel, b.CallAnchor = Point{xc - 6, y}, "end"
		b.ResultLabel, b.ResultAnchor = Point{xr + 6, y}, "start"
	} else {
		b.CallLabel, b.CallAnchor = Point{xc + 6, y}, "start"
		b.ResultLabel, b.ResultAnchor = Point{xr - 6, y}, "end"
	}
	return b
}

func (a *analysis) transferEdges(boxes map[string]Rect) []TransferEdge {
	out := make([]TransferEdge, len(a.transfers))
	total := make(map[[2]string]int)
	for _, t := range a.transfers {
		total[[2]string{t.t.From, t.t.To}]++
	}
	seen := make(map[[2]string]int)
	for i, t := range a.transfers {
		e := TransferEdge{
			Order: t.order, Seq: t.seq, From: t.t.From, To: t.t.To, Mode: t.t.Mode, CallID: t.t.CallID,
			Failed: t.failed, FailSeq: t.failSeq, Error: t.err, Current: i == len(a.transfers)-1,
		}
		pair := [2]string{t.t.From, t.t.To}
		hidden := total[pair] - Lanes // how many older transfers of this pair are not drawn
		k := seen[pair] - max(hidden, 0)
		seen[pair]++
		from, okF := boxes[t.t.From]
		to, okT := boxes[t.t.To]
		if okF && okT && k >= 0 {
			e.Path, e.Label = transferPath(from, to, k)
			if k == 0 {
				e.Earlier = max(hidden, 0)
			}
		}
		out[i] = e
	}
	return out
}

// transferPath routes the k-th transfer from box a to box b. Between rows it leaves the upper
// box on the side facing the lower one and bows to the left of travel, so a pair's two
// directions run side by side and never cross; within a row it dips below.
func transferPath(a, b Rect, k int) (string, Point) {
	step := float64(min(k, 6)) * 18
	switch {
	case a == b:
		p, q := Point{a.Right(), a.Y + 20}, Point{a.Right(), a.Bottom() - 20}
		c := Point{a.Right() + 56 + step, a.Center().Y}
		return pathData("M", p, "Q", c, q), Point{a.Right() + 28 + step/2, a.Center().Y}
	case b.Y >= a.Bottom():
		p, q := facing(a, b), b.topMid(0)
		off := leftOf(p, q).scale(13)
		return curve(p.add(off), q.add(off), 10+step)
	case b.Bottom() <= a.Y:
		p, q := a.topMid(0), facing(b, a)
		off := leftOf(p, q).scale(13)
		return curve(p.add(off), q.add(off), 10+step)
	}
	return loopBelow(a.bottomMid(0), b.bottomMid(0), 44+step)
}

// facing returns the point on upper's bottom edge that faces lower: toward lower's centre, but
// far enough from the corners for two edges to fit.
func facing(upper, lower Rect) Point {
	reach := upper.W/2 - 30
	dx := (lower.Center().X - upper.Center().X) / 2
	return upper.bottomMid(max(-reach, min(reach, dx)))
}

// shorten cuts s to at most n runes, ending in "…" when it had to cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// compact writes a count the way the header does: 950, 1.2k, 34k, 1.5M.
func compact(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 10_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	case n < 1_000_000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// atY returns the x where the line through p and q reaches height y.
func atY(p, q Point, y float64) float64 {
	if q.Y == p.Y {
		return p.X
	}
	return p.X + (q.X-p.X)*(y-p.Y)/(q.Y-p.Y)
}
