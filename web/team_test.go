package web_test

import (
	"slices"
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// TestLargeTreeCollapsesTeams: the 20-agent, 40-transfer tree of four teams is drawn as the
// supervisor over its four leads, each standing for its team, whose agents wait in a card under
// it, covering no other node; the transfers keep the agents they ran between, those into a team
// drawn to its lead's node, those inside a team not drawn; and a tree the size of the
// catalogue's keeps every team open.
func TestLargeTreeCollapsesTeams(t *testing.T) {
	sizes := []int{4, 4, 4, 3}
	tr := webtest.Teams(sizes, 40)
	if err := traces.Validate(tr); err != nil {
		t.Fatal(err)
	}
	whole := web.WholeGraph(tr)
	if len(whole.Nodes) != 20 || len(whole.Teams) != 0 {
		t.Fatalf("the whole tree has %d nodes and %d teams, want 20 and 0", len(whole.Nodes), len(whole.Teams))
	}
	g := web.NewGraph(tr)
	var names []string
	for _, n := range g.Nodes {
		names = append(names, n.Name)
	}
	want := []string{"supervisor", "billing_lead", "shipping_lead", "returns_lead", "warranty_lead"}
	if !slices.Equal(names, want) {
		t.Fatalf("collapsed, the tree draws %v, want %v", names, want)
	}
	if g.Width > whole.Width/2 {
		t.Errorf("collapsed %.0f wide, the whole tree %.0f", g.Width, whole.Width)
	}
	box := map[string]web.Rect{}
	for i, tm := range g.Teams {
		lead := g.Nodes[i+1]
		if tm.Lead != lead.Name || lead.Team != sizes[i] || len(tm.Members) != sizes[i] {
			t.Errorf("team %d: lead %s (node %s, standing for %d) with %d members, want %d", i, tm.Lead, lead.Name, lead.Team, len(tm.Members), sizes[i])
		}
		for j, m := range tm.Members {
			if m.InTeam != tm.Lead || m.Parent != tm.Lead || !tm.Card.Contains(m.Box) || m.Box.Y < lead.Box.Bottom() {
				t.Errorf("%s: in team %q under %s, box %+v not in its card %+v under its lead", m.Name, m.InTeam, m.Parent, m.Box, tm.Card)
			}
			for _, o := range tm.Members[j+1:] {
				if m.Box.Overlaps(o.Box) {
					t.Errorf("%s and %s overlap in the card", m.Name, o.Name)
				}
			}
		}
	}
	for _, n := range g.Nodes {
		box[n.Name] = n.Box
	}
	drawn := 0
	for _, e := range g.Transfers {
		if e.Path == "" {
			continue
		}
		drawn++
		if e.From != "supervisor" && e.To != "supervisor" {
			t.Errorf("transfer %d %s -> %s, inside a team, is drawn", e.Order, e.From, e.To)
		}
		if _, ok := box[e.From]; !ok {
			t.Errorf("transfer %d from %s: not a node of the collapsed tree", e.Order, e.From)
		}
	}
	if drawn == 0 || len(g.Bundles) != 8 {
		t.Errorf("%d transfers drawn, %d bundles; want some, and one bundle each way per team", drawn, len(g.Bundles))
	}
	// 10 round trips over 4 teams: 3, 3, 2 and 2 each way.
	counts := map[string]int{"billing_lead": 3, "shipping_lead": 3, "returns_lead": 2, "warranty_lead": 2}
	for _, b := range g.Bundles {
		if want := counts[b.From] + counts[b.To]; b.Count != want {
			t.Errorf("bundle %s -> %s counts %d, want %d", b.From, b.To, b.Count, want)
		}
	}
	for _, sizes := range [][]int{sizes, {6, 6, 6, 6, 6}, {2, 9, 3}} {
		g := web.NewGraph(webtest.Teams(sizes, 40))
		if len(g.Teams) == 0 {
			t.Fatalf("teams %v: none collapsed", sizes)
		}
		for _, tm := range g.Teams {
			for _, n := range g.Nodes {
				if tm.Card.Overlaps(n.Box) {
					t.Errorf("teams %v: %s's card %+v covers %s %+v", sizes, tm.Lead, tm.Card, n.Name, n.Box)
				}
			}
		}
	}
	for name, small := range map[string]traces.Trace{"supervisor": webtest.Supervisor(), "agenttool": webtest.AgentTool(), "fan": webtest.Fan(8, 22)} {
		if g := web.NewGraph(small); len(g.Teams) != 0 {
			t.Errorf("%s collapses %d teams", name, len(g.Teams))
		}
	}
}

// TestCollapsedTeamShowsItsState: a collapsed team's lead node shows its team's state, not only
// its own: while a member works, the lead (which handed off to it) is drawn active, with the
// team's calls and tokens; a live page told only of the member's change gets the lead's node
// anew; once the work is back with the supervisor, the team is done.
func TestCollapsedTeamShowsItsState(t *testing.T) {
	tr := webtest.Teams([]int{4, 4, 4, 3}, 40)
	var member traces.Event // the first team member's model call
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelStarted && e.Agent == "billing_agent_1" {
			member = e
			break
		}
	}
	if member.Seq == 0 {
		t.Fatal("no member of the billing team calls its model")
	}
	node := func(g web.Graph, name string) web.Node {
		t.Helper()
		for _, n := range g.Nodes {
			if n.Name == name {
				return n
			}
		}
		t.Fatalf("no node %s among %d", name, len(g.Nodes))
		return web.Node{}
	}
	lead := node(web.ViewAt(tr, member.Seq).View().Graph, "billing_lead")
	if lead.Team == 0 || lead.State != web.StateActive || lead.HandedOff {
		t.Errorf("while billing_agent_1 works, its collapsed lead is %s (handed off %v, team %d), want active", lead.State, lead.HandedOff, lead.Team)
	}
	if lead.ModelCalls != 2 {
		t.Errorf("the lead counts %d calls, want its own and its member's: 2", lead.ModelCalls)
	}
	// Event by event, as a live page: the member's call changes only faces, and the lead's is among them.
	v := web.ViewAt(tr, member.Seq-1)
	v.Add(member)
	u := v.Update(member.Seq - 1)
	if u.GraphChanged {
		t.Fatal("a member's model call laid the tree out again")
	}
	var faces []string
	for _, n := range u.Faces {
		faces = append(faces, n.Name+" "+string(n.State))
	}
	if !slices.Contains(faces, "billing_lead active") {
		t.Errorf("the faces the member's call changed are %v, want billing_lead active among them", faces)
	}
	if end := node(web.NewView(tr).Graph, "billing_lead"); end.State != web.StateDone {
		t.Errorf("at the end the billing team is %s, want done", end.State)
	}
}
