package web

import (
	"fmt"
	"math"
	"slices"
)

// A tree too large to read at the legible zoom in a tree panel collapses its teams: an agent
// with sub-agents (a team lead, never a root) is drawn as one node, its team's agents hidden in a
// card the page opens under it. Transfers into or out of a collapsed team are drawn to its lead's
// node; those inside it are not drawn (the timeline lists them). Teams collapse a level at a
// time, the deepest first, until the drawing fits the budget or only roots are left.

// budgetW and budgetH are the largest drawing, at 1:1, that keeps every team open: about two
// tree panels of a 1440x900 screen at the legible zoom. The catalogue's flows stay well within.
const (
	budgetW = 1600.0
	budgetH = 900.0
)

// Team is a collapsed team: its Lead's node stands for it, Members (its agents, in the tree's
// order, their boxes laid out in Card) are drawn only when the page opens the card.
type Team struct {
	Lead    string
	Members []Node
	Card    Rect
	Title   Point // where the card's title line is written
}

// Card layout, in viewBox units.
const (
	cardGap  = 12.0 // between the lead's box and its card
	cardPad  = 12.0 // inside the card
	cardHead = 26.0 // the card's title line
	cardCols = 3    // the most member columns a card has
)

// collapseTeams returns t's graph, with teams collapsed when the whole tree is larger than the
// budget.
func collapseTeams(t *treeState) Graph {
	g := newGraphOf(t, nil)
	if g.Width <= budgetW && g.Height <= budgetH {
		return g
	}
	r := t.roster
	deepest := 0
	for _, m := range r.list {
		deepest = max(deepest, r.depth(m.Name))
	}
	into := make(map[string]string) // hidden agent -> the lead whose node stands for it
	for d := deepest - 1; d >= 1; d-- {
		leads := false
		for _, m := range r.list {
			if r.depth(m.Name) != d || len(r.children(m.Name)) == 0 || into[m.Name] != "" {
				continue
			}
			leads = true
			for _, x := range r.list {
				if x != m && r.under(x.Name, m.Name) {
					into[x.Name] = m.Name
				}
			}
		}
		if !leads {
			continue
		}
		g = newGraphOf(t, into)
		if g.Width <= budgetW && g.Height <= budgetH {
			break
		}
	}
	return g
}

// under reports whether name is below lead in the tree.
func (r *roster) under(name, lead string) bool {
	for m, d := r.byName[name], 0; m != nil && m.Parent != "" && d <= len(r.list); m, d = r.byName[m.Parent], d+1 {
		if m.Parent == lead {
			return true
		}
	}
	return false
}

// teamView returns t as the collapsed tree draws it: without the hidden agents, each transfer's
// ends replaced by the nodes that stand for them, and the pairs counted between those nodes
// (a transfer inside one team counted in none).
func (t *treeState) teamView(into map[string]string) *treeState {
	v := *t
	v.laid = nil
	shown := func(name string) string {
		if l := into[name]; l != "" {
			return l
		}
		return name
	}
	v.roster = &roster{byName: make(map[string]*member, len(t.roster.list))}
	for _, m := range t.roster.list {
		if into[m.Name] == "" {
			v.roster.list = append(v.roster.list, m)
			v.roster.byName[m.Name] = m
		}
	}
	v.transfers = make([]*transfer, len(t.transfers))
	v.pairs = make(map[[2]string]*pairTransfers)
	for i, x := range t.transfers {
		y := *x
		y.t.From, y.t.To = shown(x.t.From), shown(x.t.To)
		v.transfers[i] = &y
		if y.t.From == y.t.To {
			continue
		}
		key := [2]string{y.t.From, y.t.To}
		p := v.pairs[key]
		if p == nil {
			p = &pairTransfers{mode: y.t.Mode}
			v.pairs[key] = p
		} else if p.mode != y.t.Mode {
			p.mode = ModeMixed
		}
		p.count++
		if y.failed {
			p.failed++
		}
		if len(p.newest) == Lanes {
			p.newest = append(p.newest[:0], p.newest[1:]...)
		}
		p.newest = append(p.newest, &y)
	}
	return &v
}

// newGraphOf lays out t with the agents in into hidden in their leads' teams (none when into is
// empty).
func newGraphOf(t *treeState, into map[string]string) Graph {
	if len(into) == 0 {
		return newGraph(t)
	}
	g := newGraph(t.teamView(into))
	// The edges keep the agents they ran between; only their lines end at the leads' nodes.
	for i := range g.Transfers {
		if x := t.transferAt(g.Transfers[i].Seq); x != nil {
			g.Transfers[i].From, g.Transfers[i].To = x.t.From, x.t.To
		}
	}
	members := make(map[string][]string)
	for _, m := range t.roster.list {
		if l := into[m.Name]; l != "" {
			members[l] = append(members[l], m.Name)
		}
	}
	for i := range g.Nodes {
		nd := &g.Nodes[i]
		if names := members[nd.Name]; len(names) > 0 {
			nd.Team = len(names)
			g.Teams = append(g.Teams, t.team(*nd, names, g.Nodes))
		}
	}
	return g
}

// team lays out the card of lead's team as a grid of up to cardCols columns: under the lead's
// node where that covers no other node of the tree (nodes), else under the whole tree, where
// nothing is drawn (a row of leads stacked in columns leaves no room under the upper ones). The
// page opens one card at a time (static/graph.js), so cards never cover each other.
func (t *treeState) team(lead Node, names []string, nodes []Node) Team {
	cols := min(len(names), cardCols)
	colW := 0.0
	for _, n := range names {
		colW = max(colW, nodeWidth(n))
	}
	rows := (len(names) + cols - 1) / cols
	w := 2*cardPad + float64(cols)*colW + float64(cols-1)*stackGap
	h := 2*cardPad + cardHead + float64(rows)*NodeH + float64(rows-1)*stackGap
	card := Rect{math.Max(margin, lead.Box.Center().X-w/2), lead.Box.Bottom() + cardGap, w, h}
	bottom, covers := 0.0, false
	for _, n := range nodes {
		bottom = max(bottom, n.Box.Bottom())
		covers = covers || n.Name != lead.Name && card.Overlaps(n.Box)
	}
	if covers {
		card.Y = bottom + cardGap
	}
	tm := Team{Lead: lead.Name, Card: card, Title: Point{card.X + cardPad, card.Y + cardPad + 14}}
	for i, n := range names {
		m := t.roster.byName[n]
		x := card.X + cardPad + float64(i%cols)*(colW+stackGap)
		y := card.Y + cardPad + cardHead + float64(i/cols)*(NodeH+stackGap)
		w := nodeWidth(n)
		nd := Node{
			Name: n, Label: nameLabel(n, w), Description: m.Description, Kind: m.Kind, Parent: m.Parent,
			Relation: m.Relation, Depth: t.roster.depth(n), Box: Rect{x, y, w, NodeH}, Colour: m.colour,
			Extra: m.extra, Missing: m.missing, InTeam: lead.Name,
		}
		t.setFace(&nd)
		tm.Members = append(tm.Members, nd)
	}
	return tm
}

// teamNodes returns the nodes of g's team cards.
func (g Graph) teamNodes() []Node {
	var out []Node
	for _, tm := range g.Teams {
		out = append(out, tm.Members...)
	}
	return slices.Clip(out)
}

// teamRank orders states by what a collapsed team's node says first: work going on in the team,
// then a failure in it, an interrupt, work done.
var teamRank = map[State]int{StateIdle: 0, StateDone: 1, StateInterrupted: 2, StateFailed: 3, StateActive: 4}

// teamFace gives lead, the node of a collapsed team whose own face is set, the face of its team:
// the state that ranks first among the lead's and its members' (a team working inside while its
// lead waits is active), and their calls and tokens together. A failure names the member that
// failed.
func (t *treeState) teamFace(lead *Node, members []Node) {
	own := lead.State
	for _, m := range members {
		x := t.stateOf(m.Name)
		lead.ModelCalls, lead.ToolCalls, lead.Tokens = lead.ModelCalls+x.modelCalls, lead.ToolCalls+x.toolCalls, lead.Tokens+x.tokens
		if teamRank[x.state] > teamRank[lead.State] {
			lead.State = x.state
			if x.state == StateFailed {
				lead.Error = m.Name + ": " + x.err
			}
		}
	}
	if lead.State != own {
		lead.HandedOff = false // the team's state is a member's, not the lead's handoff
	}
	if lead.ModelCalls > 0 || lead.ToolCalls > 0 {
		lead.Detail = fmt.Sprintf("%s · %s tok", plural(lead.ModelCalls, "call"), compact(lead.Tokens)) // its badge says "team"
	}
}
