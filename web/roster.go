package web

import (
	"slices"

	"github.com/baton-dev/baton/traces"
)

// Palette is the number of agent colours (CSS classes agent-c0 .. agent-c9); colour indexes
// wrap around after it.
const Palette = 10

// member is one agent of a trace: declared in Trace.Agents or discovered in its events.
type member struct {
	traces.Agent
	colour int
	// extra: not in Trace.Agents; missing: named only as the target of a transfer that failed
	// because no such agent exists.
	extra, missing bool
	// since is the index of the event that made the agent known, -1 for declared agents.
	since int
	// callbacksOnly says the agent's newest AgentTool call was seen through callbacks only: the
	// caller's event stream did not carry its inner events.
	callbacksOnly bool
}

// roster holds a trace's agents in colour order: the declared tree in preorder, then the agents
// met in events in the order they appeared. Appending never reorders, so a colour, once given,
// stays the agent's for the rest of the run.
type roster struct {
	list   []*member
	byName map[string]*member
}

// newRoster returns the roster of the declared agents; discover adds those the events name.
func newRoster(agents []traces.Agent) *roster {
	r := &roster{byName: make(map[string]*member, len(agents)+4)}
	for _, a := range declaredPreorder(agents) {
		r.add(a, false).since = -1
	}
	return r
}

// declaredPreorder returns agents in depth-first order from the roots, children in declaration
// order. An agent whose parent is unknown (or that sits on a parent cycle) becomes a root; a name
// declared twice keeps its first declaration.
func declaredPreorder(agents []traces.Agent) []traces.Agent {
	index := make(map[string]int, len(agents))
	for i, a := range agents {
		if _, dup := index[a.Name]; !dup {
			index[a.Name] = i
		}
	}
	children := make(map[string][]int, len(agents))
	var roots []int
	for i, a := range agents {
		if index[a.Name] != i {
			continue
		}
		if _, ok := index[a.Parent]; ok && a.Parent != "" && a.Parent != a.Name {
			children[a.Parent] = append(children[a.Parent], i)
		} else {
			roots = append(roots, i)
		}
	}
	out := make([]traces.Agent, 0, len(agents))
	seen := make([]bool, len(agents))
	var walk func(i int)
	walk = func(i int) {
		if seen[i] {
			return
		}
		seen[i] = true
		out = append(out, agents[i])
		for _, c := range children[agents[i].Name] {
			walk(c)
		}
	}
	for _, i := range roots {
		walk(i)
	}
	// Agents on a parent cycle are reachable from no root: show them as roots.
	for i, a := range agents {
		if index[a.Name] == i && !seen[i] {
			seen[i] = true
			a.Parent, a.Relation = "", ""
			out = append(out, a)
		}
	}
	return out
}

func (r *roster) add(a traces.Agent, extra bool) *member {
	if m, ok := r.byName[a.Name]; ok {
		return m
	}
	if a.Parent != "" {
		if _, ok := r.byName[a.Parent]; !ok {
			a.Parent, a.Relation = "", ""
		}
	}
	m := &member{Agent: a, colour: len(r.list) % Palette, extra: extra}
	if extra && a.Kind == "" {
		m.Kind = traces.AgentCustom
	}
	r.list = append(r.list, m)
	r.byName[a.Name] = m
	return m
}

// discover adds the agents e names that the roster does not know yet, each under the agent it
// came from: the caller of an AgentTool, the source of a transfer, or the agent before it in
// the run path.
func (r *roster) discover(e *traces.Event, i int) {
	switch {
	case e.Transfer != nil:
		r.addUnder(i, e.Transfer.From, "", "")
		r.addUnder(i, e.Transfer.To, e.Transfer.From, traces.RelationSubAgent)
	case e.AgentTool != nil:
		r.addUnder(i, e.AgentTool.Caller, "", "")
		r.addUnder(i, e.AgentTool.Callee, e.AgentTool.Caller, traces.RelationAgentTool)
	case e.Session != nil:
		r.addOnPath(i, e.Session.SetBy, e.RunPath)
	}
	r.addOnPath(i, e.Agent, e.RunPath)
}

// addOnPath adds name, when new, under the agent before it on its run path.
func (r *roster) addOnPath(i int, name string, path []string) {
	if name != "" && r.byName[name] == nil {
		r.addUnder(i, name, pathParent(path, name), "")
	}
}

func (r *roster) addUnder(i int, name, parent string, rel traces.Relation) {
	if name == "" || r.byName[name] != nil {
		return
	}
	if parent == name {
		parent = ""
	}
	if parent != "" && rel == "" {
		rel = traces.RelationSubAgent
	}
	r.add(traces.Agent{Name: name, Parent: parent, Relation: rel}, true).since = i
}

// pathParent returns the agent before the last occurrence of name in a run path (adjacent
// duplicates collapsed), the path's last agent when name is not on it, or "".
func pathParent(path []string, name string) string {
	if !slices.Contains(path, name) && len(path) > 0 {
		return path[len(path)-1]
	}
	for i := len(path) - 1; i > 0; i-- {
		if path[i] != name {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			if path[j] != name {
				return path[j]
			}
		}
		return ""
	}
	return ""
}

// colour returns the colour index of agent name, or -1 when the trace does not know it.
func (r *roster) colour(name string) int {
	if m, ok := r.byName[name]; ok {
		return m.colour
	}
	return -1
}

// children returns the members whose parent is name, in roster order.
func (r *roster) children(name string) []*member {
	var out []*member
	for _, m := range r.list {
		if m.Parent == name && m.Name != name {
			out = append(out, m)
		}
	}
	return out
}

// AgentRef names an agent with its colour index, for filters and legends.
type AgentRef struct {
	Name   string
	Colour int
}

// depth returns how many parents name has up to its root (0 for a root or an unknown agent).
func (r *roster) depth(name string) int {
	d := 0
	for m := r.byName[name]; m != nil && m.Parent != "" && d <= len(r.list); m = r.byName[m.Parent] {
		d++
	}
	return d
}
