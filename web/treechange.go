package web

import (
	"slices"

	"github.com/baton-dev/baton/traces"
)

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

// graph returns the tree as drawn now. Its layout is made once per change beyond faces and kept;
// the faces are filled in anew on each call.
func (t *treeState) graph() Graph {
	g := t.layout()
	g.Nodes = slices.Clone(g.Nodes)
	for i := range g.Nodes {
		t.setFace(&g.Nodes[i])
	}
	return g
}

// layout returns the tree as laid out at graphSeq, its faces as they were then.
func (t *treeState) layout() Graph {
	if t.laid == nil || t.laid.seq != t.graphSeq {
		t.laid = &laidTree{seq: t.graphSeq, g: newGraph(t)}
	}
	return t.laid.g
}

// laidTree is the tree as laid out after event seq.
type laidTree struct {
	seq int64
	g   Graph
}

// faces returns the nodes whose faces changed after from, in the tree's order, when nothing
// else of the tree did; the caller checks the latter (graphSeq <= from).
func (t *treeState) faces(from int64) []Node {
	var out []Node
	for _, nd := range t.layout().Nodes {
		if x := t.acts[nd.Name]; x != nil && x.faceSeq > from {
			t.setFace(&nd)
			out = append(out, nd)
		}
	}
	return out
}

// face is what an agent's node in the tree shows of its activity: its state, its error, and the
// counts its detail line is made of.
type face struct {
	state                State
	err                  string
	calls, tools, tokens int
}

// looksLike reports whether a node showing f shows the same as one showing g: the detail line
// names model calls and tokens (compacted, 1.2k), and tool calls only as whether there were any.
func (f face) looksLike(g face) bool {
	return f.state == g.state && f.err == g.err && f.calls == g.calls && (f.tools == 0) == (g.tools == 0) &&
		(f.tokens == g.tokens || compact(f.tokens) == compact(g.tokens))
}

func (x *activity) face() face {
	return face{state: x.state, err: x.err, calls: x.modelCalls, tools: x.toolCalls, tokens: x.tokens}
}
