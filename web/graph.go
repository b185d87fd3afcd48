package web

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/baton-dev/baton/traces"
)

// Graph is the agent tree as the run page draws it: an SVG whose viewBox is 0 0 Width Height.
type Graph struct {
	Width, Height float64
	Nodes         []Node           // preorder of the tree
	Links         []Link           // parent to sub-agent
	Boundaries    []Boundary       // one per AgentTool callee
	Transfers     []TransferEdge   // those the tree draws (see TransferEdge), in order
	Bundles       []TransferBundle // one per direction between two agents with several transfers
	Teams         []Team           // collapsed teams, when the whole tree is too large (team.go)
	TransferCount int              // all the transfers of the run
}

// Node is one agent of the tree.
type Node struct {
	Name        string
	Label       string // Name, or its head and "…" when the widest box cannot hold it
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
	Error       string // why it failed, when it did
	Extra       bool   // not in Trace.Agents: met in the events
	Missing     bool   // only named as the target of a transfer that failed because it does not exist
	Caller      bool   // it calls at least one AgentTool
	Iteration   int    // of its loop, when a loop agent ran it
	HandedOff   bool   // done by transferring control away, not since active: waiting, or gone on
	Team        int    // how many agents of its collapsed team its node stands for
	InTeam      string // the lead of the collapsed team whose card holds this node
}

// Link is the line from a parent to its sub-agent (AgentTool callees get a Boundary instead):
// Route from A on the parent's bottom edge to B on the sub-agent's top edge, Path its SVG path
// data.
type Link struct {
	From, To string
	A, B     Point
	Route    Route
	Path     string
}

// Boundary is the frame around an AgentTool callee: the callee runs in a history of its own but
// shares session values with Caller. Call and Result are the arrow pair between caller and
// callee, the call from the caller's bottom edge into the frame through its top to the callee's
// top edge, the result back; CallSeq and ResultSeq are the newest agenttool.entered and
// agenttool.exited events (0 when none).
type Boundary struct {
	Caller, Callee string
	CallerColour   int
	Frame          Rect
	Caption        string      // "AgentTool of {caller}:"
	Note           string      // "own history, shared session values"
	CaptionLines   []string    // Caption wrapped to the frame's width
	NoteLines      []string    // Note wrapped likewise
	Lines          []FrameText // CaptionLines then NoteLines, where they are drawn: under what the frame holds
	Text           Rect        // what Lines cover, by a generous estimate of their width
	Calls          int
	// Order is the place of the newest call in the run's AgentTool calls (1..n, by when they
	// entered), 0 when none: the number the call and result arrows' badges show.
	Order   int
	Running bool // entered and not exited yet
	// CallbacksOnly: the newest call's inner events were seen through callbacks only, the
	// caller's event stream showing just the call and its result.
	CallbacksOnly bool
	CallSeq       int64
	ResultSeq     int64
	Call, Result  Route
	// CallLabel and ResultLabel are where the arrows' words sit, inside the frame's top, beside
	// the arrows where they run down to the callee: "result" on the left, "call" on the right;
	// CallAnchor and ResultAnchor are their SVG text-anchor.
	CallLabel, ResultLabel   Point
	CallAnchor, ResultAnchor string
	// CallBadge and ResultBadge are the centres of the order badges, beside the words.
	CallBadge, ResultBadge Point
}

// AtBadgeR is the radius of an AgentTool arrow's order badge.
const AtBadgeR = 9.0

// FrameText is one line of an AgentTool frame's text, with the baseline's left end.
type FrameText struct {
	Text string
	At   Point
	Note bool // a line of the note, not of the caption
}

// TransferEdge is one transfer of control, drawn from From to To along Route; Path is Route's SVG
// path data and Label where the order number sits. Failed is set when an error reported the
// transfer failed (FailSeq is that error's event); Current marks the newest transfer. Only the
// newest Lanes transfers of each direction between two agents are drawn, so that drawing the tree
// costs the same however many transfers the run made: Graph.Transfers holds those (without a Path
// when an end has no box), and the oldest of each direction counts the older ones in Earlier,
// written at EarlierAt with SVG text-anchor EarlierAnchor.
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
	Route   Route
	Path    string
	Label   Point
	Earlier int
	// Bundled is set when a TransferBundle stands for this edge's direction: the page shows the
	// bundle, and this edge once the bundle is expanded.
	Bundled bool

	EarlierAt     Point
	EarlierAnchor string
}

// TransferBundle is the transfers of one direction between two agents, when there are several,
// drawn as one line with a count badge: along the newest drawn edge's route, its badge where that
// edge's order badge sits, so that the collapsed tree shows a subset of what the expanded one
// does. Seq is the newest transfer's event (inspecting it lists them all), Orders the order
// numbers of the edges drawn for it (the newest Lanes), Failed how many failed, Mode their mode
// or ModeMixed.
type TransferBundle struct {
	From, To string
	Count    int
	Failed   int
	Mode     string
	Seq      int64
	Orders   []int
	Current  bool
	Route    Route
	Path     string
	Label    Point
}

// NewGraph lays out tr's agent tree with the state each agent is in after tr's last event, its
// teams collapsed when it is too large (team.go).
func NewGraph(tr traces.Trace) Graph {
	return collapseTeams(treeOf(tr))
}

func newGraph(t *treeState) Graph {
	slots, w, h := layoutTree(t.roster, func(from, to string) int {
		if p := t.pairs[[2]string{from, to}]; p != nil {
			return p.count
		}
		return 0
	})
	g := Graph{Width: w, Height: h, TransferCount: len(t.transfers)}
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
			g.Boundaries = append(g.Boundaries, t.boundary(s))
		} else if s.m.Parent != "" && !s.m.missing {
			g.Links = append(g.Links, Link{From: s.m.Parent, To: s.m.Name})
		}
	}
	for _, s := range slots {
		g.Nodes = append(g.Nodes, t.node(s, depth[s.m.Name], callers[s.m.Name]))
	}
	var drawn []bool
	g.Transfers, drawn = t.transferEdges(boxes)
	g.route(slots, drawn)
	g.Bundles = t.bundles(g.Transfers)
	for _, e := range g.Transfers {
		// A transfer within a row dips below it: make room for the lowest such dip.
		if e.Path != "" {
			g.Height = max(g.Height, e.Label.Y+40)
		}
	}
	return g
}

func (t *treeState) node(s *slot, depth int, caller bool) Node {
	m := s.m
	n := Node{
		Name: m.Name, Label: nameLabel(m.Name, s.box.W), Description: m.Description, Kind: m.Kind,
		Parent: m.Parent, Relation: m.Relation, Depth: depth, Box: s.box, Colour: m.colour,
		Extra: m.extra, Missing: m.missing, Caller: caller,
	}
	t.setFace(&n)
	return n
}

// setFace fills in what n shows of its agent's activity: its state, counts, error and detail
// line. None of it moves the node's box (its width is its name's), so a face can be redrawn
// alone.
func (t *treeState) setFace(n *Node) {
	x := t.stateOf(n.Name)
	n.State, n.ModelCalls, n.ToolCalls, n.Tokens, n.Error = x.state, x.modelCalls, x.toolCalls, x.tokens, x.err
	n.Iteration, n.HandedOff = x.iteration, x.handedOff
	switch {
	case n.Missing:
		n.Detail = "no such agent"
	case x.modelCalls == 0 && x.toolCalls == 0:
		n.Detail = string(n.Kind)
	default:
		n.Detail = fmt.Sprintf("%s · %s tok", plural(x.modelCalls, "call"), compact(x.tokens))
	}
}

func (t *treeState) boundary(s *slot) Boundary {
	b := Boundary{
		Caller: s.m.Parent, Callee: s.m.Name, CallerColour: t.roster.colour(s.m.Parent),
		Frame: s.outer, Caption: "AgentTool of " + s.m.Parent + ":", Note: noteOf(s.m),
		CallbacksOnly: s.m.callbacksOnly,
		CaptionLines:  s.caption, NoteLines: s.note, Text: s.text,
	}
	for i, l := range append(slices.Clone(s.caption), s.note...) {
		// 13.5px text: its baseline 12 below the top of its line.
		at := Point{s.text.X, s.text.Y + 12 + frameLine*float64(i)}
		b.Lines = append(b.Lines, FrameText{Text: l, At: at, Note: i >= len(s.caption)})
	}
	for i, c := range t.calls {
		if c.callee != b.Callee {
			continue
		}
		if c.enter != 0 {
			b.Calls++
			b.CallSeq, b.Order = c.enter, i+1
		}
		if c.exit != 0 {
			b.ResultSeq = c.exit
		}
		b.Running = c.enter != 0 && c.exit == 0
	}
	return b
}

// transferEdges returns the transfers the tree draws, the newest Lanes of each direction between
// two agents, in order, and which of them it has boxes for.
func (t *treeState) transferEdges(boxes map[string]Rect) ([]TransferEdge, []bool) {
	var shown []*transfer
	for _, p := range t.pairs {
		shown = append(shown, p.newest...)
	}
	slices.SortFunc(shown, func(x, y *transfer) int { return x.order - y.order })
	out := make([]TransferEdge, len(shown))
	drawn := make([]bool, len(shown))
	for i, x := range shown {
		p := t.pairs[[2]string{x.t.From, x.t.To}]
		e := TransferEdge{
			Order: x.order, Seq: x.seq, From: x.t.From, To: x.t.To, Mode: x.t.Mode, CallID: x.t.CallID,
			Failed: x.failed, FailSeq: x.failSeq, Error: x.err, Current: x.order == len(t.transfers),
		}
		_, okF := boxes[x.t.From]
		_, okT := boxes[x.t.To]
		if drawn[i] = okF && okT; drawn[i] && p.newest[0] == x {
			e.Earlier = p.count - len(p.newest)
		}
		out[i] = e
	}
	return out, drawn
}

// bundles returns the bundles of the drawn edges es, newest last, and marks their edges
// Bundled.
func (t *treeState) bundles(es []TransferEdge) []TransferBundle {
	at := make(map[[2]string]int) // index in out
	var out []TransferBundle
	for i := range es {
		e := &es[i]
		key := [2]string{e.From, e.To}
		p := t.pairs[key]
		if e.Path == "" || p.count < 2 {
			continue
		}
		e.Bundled = true
		j, ok := at[key]
		if !ok {
			j = len(out)
			at[key] = j
			out = append(out, TransferBundle{From: e.From, To: e.To, Count: p.count, Failed: p.failed, Mode: p.mode})
		}
		b := &out[j]
		// es is in order: the last edge of a direction is its newest.
		b.Seq, b.Current, b.Route, b.Path, b.Label = e.Seq, e.Current, e.Route, e.Path, e.Label
		b.Orders = append(b.Orders, e.Order)
	}
	slices.SortFunc(out, func(x, y TransferBundle) int {
		return cmp.Compare(x.Orders[len(x.Orders)-1], y.Orders[len(y.Orders)-1])
	})
	return out
}

// CallWord is what the call arrow of b says: "call", or "call ×N" after several calls.
func (b Boundary) CallWord() string {
	if b.Calls > 1 {
		return fmt.Sprintf("call ×%d", b.Calls)
	}
	return "call"
}

// BadgeW is the width of b's count badge: a pill as tall as an order badge, wide enough for
// "×N" in its 14px bold text.
func (b TransferBundle) BadgeW() float64 {
	return max(2*BadgeR, 12+9*float64(len(fmt.Sprint(b.Count))+1))
}

// MinFont is the least size, in CSS pixels, at which the page shows text; SmallestFont is the
// size of the smallest text the graph draws (app.css: a lane's count of earlier transfers), so
// MinZoom is the least zoom at which the whole tree stays legible: the page opens and fits the
// tree no smaller.
const (
	MinFont      = 11.0
	SmallestFont = 13.0
	MinZoom      = MinFont / SmallestFont
)
