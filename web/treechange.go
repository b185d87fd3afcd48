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
		if k := slices.IndexFunc(g.Nodes, func(n Node) bool { return n.Name == tm.Lead }); k >= 0 {
			t.teamFace(&g.Nodes[k], tm.Members)
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
	changed := func(name string) bool { x := t.acts[name]; return x != nil && x.faceSeq > from }
	teams := make(map[string][]Node, len(g.Teams))
	for _, tm := range g.Teams {
		teams[tm.Lead] = tm.Members
	}
	for _, nd := range append(slices.Clip(g.Nodes), g.teamNodes()...) {
		members := teams[nd.Name]
		if !changed(nd.Name) && !slices.ContainsFunc(members, func(m Node) bool { return changed(m.Name) }) {
			continue
		}
		t.setFace(&nd)
		if len(members) > 0 {
			t.teamFace(&nd, members) // a member's change is its lead's: the node stands for both
		}
		out = append(out, nd)
	}
	return out
}
