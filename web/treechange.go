package web

import "slices"

// The tree as drawn, from the tree piece (treestate.go), which notes what each event changed of
// it: laid out anew only when more than faces changed.

// graph returns the tree as drawn now. Its layout is made once per change beyond faces and kept;
// the faces are filled in anew on each call.
func (t *treeState) graph() Graph {
	g := t.layout()
	g.Nodes = slices.Clone(g.Nodes)
	for i := range g.Nodes {
		t.setFace(&g.Nodes[i])
	}
	g.Teams = slices.Clone(g.Teams)
	for i := range g.Teams {
		tm := &g.Teams[i]
		tm.Members = slices.Clone(tm.Members)
		for j := range tm.Members {
			t.setFace(&tm.Members[j])
		}
	}
	return g
}

// layout returns the tree as laid out at graphSeq, its faces as they were then.
func (t *treeState) layout() Graph {
	if t.laid == nil || t.laid.seq != t.graphSeq {
		t.laid = &laidTree{seq: t.graphSeq, g: collapseTeams(t)}
	}
	return t.laid.g
}

// faces returns the nodes whose faces changed after from, in the tree's order, when nothing
// else of the tree did; the caller checks the latter (graphSeq <= from).
func (t *treeState) faces(from int64) []Node {
	var out []Node
	g := t.layout()
	for _, nd := range append(slices.Clip(g.Nodes), g.teamNodes()...) {
		if x := t.acts[nd.Name]; x != nil && x.faceSeq > from {
			t.setFace(&nd)
			out = append(out, nd)
		}
	}
	return out
}
