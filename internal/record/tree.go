package record

import (
	"regexp"
	"slices"
	"strings"
	"unsafe"

	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// tree is the run's agent tree: what the app declared, completed by what the run shows. eino
// offers no way to walk an agent's sub-agents, so the tree is inferred from the visits (who ran
// whom as a tool or a workflow step), the transfers (a transfer goes to a sub-agent unless it
// goes back up), the tools each model is offered, and the agents eino's transfer instruction
// lists, which names sub-agents before they run. A declared agent is never changed.
type tree struct {
	agents   map[string]*traces.Agent
	order    []string
	declared map[string]bool
	dirty    []string // changed since the last put, in order
	// unlisting is the system prompt a model call had last that lists no agents: an agent's
	// every call has the very same string, which is then not searched again (a long prompt's
	// search was ~700 instructions a call).
	unlisting string
}

func newTree(declared []traces.Agent) *tree {
	t := &tree{agents: make(map[string]*traces.Agent), declared: make(map[string]bool)}
	for _, a := range declared {
		a.Tools = slices.Clone(a.Tools)
		t.agents[a.Name] = &a
		t.order = append(t.order, a.Name)
		t.declared[a.Name] = true
	}
	return t
}

// node returns the agent named name, adding it when new; it returns nil for a declared agent,
// which inference leaves as declared.
func (t *tree) node(name string) *traces.Agent {
	if name == "" || t.declared[name] {
		return nil
	}
	a, ok := t.agents[name]
	if !ok {
		a = &traces.Agent{Name: name, Kind: traces.AgentCustom}
		t.agents[name] = a
		t.order = append(t.order, name)
		t.touch(name)
	}
	return a
}

func (t *tree) touch(name string) {
	if !slices.Contains(t.dirty, name) {
		t.dirty = append(t.dirty, name)
	}
}

// isAncestor reports whether a is b's parent, grandparent...
func (t *tree) isAncestor(a, b string) bool {
	for seen := 0; seen <= len(t.order); seen++ {
		n, ok := t.agents[b]
		if !ok || n.Parent == "" {
			return false
		}
		if n.Parent == a {
			return true
		}
		b = n.Parent
	}
	return false
}

// adopt makes child a sub-agent of parent unless it has a parent already or is parent's ancestor.
func (t *tree) adopt(parent, child string, rel traces.Relation) {
	n := t.node(child)
	if n == nil || n.Parent != "" || parent == child || t.isAncestor(child, parent) {
		return
	}
	n.Parent, n.Relation = parent, rel
	t.touch(child)
}

// visit learns from an agent's start: its kind, and who runs it as a tool or a step.
func (t *tree) visit(v *visit) {
	n := t.node(v.agent)
	if n == nil {
		return
	}
	if kind := agentKind(v.kind); n.Kind == traces.AgentCustom && kind != traces.AgentCustom {
		n.Kind = kind
		t.touch(v.agent)
	}
	switch {
	case v.via == viaAgentTool && v.parent != nil:
		t.adopt(v.parent.agent, v.agent, traces.RelationAgentTool)
	case v.via == viaWorkflow && v.parent != nil:
		t.adopt(v.parent.agent, v.agent, traces.RelationSubAgent)
	}
}

// transfer learns from a transfer: the target is a sub-agent of the source, unless it is the
// source's parent (or further up).
func (t *tree) transfer(from, to string) {
	t.node(from)
	t.adopt(from, to, traces.RelationSubAgent)
}

// transferInstruction matches each agent eino's transfer instruction lists.
var transferInstruction = regexp.MustCompile(`\n- Agent name: ([^\n]+)\n  Agent description: ([^\n]*)`)

// modelCall learns from a model call: the tools the agent offers, and the agents its transfer
// instruction lists (its sub-agents and its parent), with their descriptions.
func (t *tree) modelCall(agent string, input []*schema.Message, tools []string) {
	n := t.node(agent)
	if n != nil && len(n.Tools) == 0 && len(tools) > 0 {
		n.Tools = slices.Clone(tools)
		if n.Kind == traces.AgentCustom {
			n.Kind = traces.AgentChatModel
		}
		t.touch(agent)
	}
	if len(input) == 0 || input[0] == nil || input[0].Role != schema.System {
		return
	}
	system := input[0].Content
	if len(system) == len(t.unlisting) && unsafe.StringData(system) == unsafe.StringData(t.unlisting) {
		return
	}
	i := strings.LastIndex(system, "Available other agents:")
	if i < 0 {
		t.unlisting = system
		return
	}
	for _, m := range transferInstruction.FindAllStringSubmatch(system[i:], -1) {
		name, desc := strings.TrimSpace(m[1]), strings.TrimSpace(m[2])
		if l := t.node(name); l != nil && l.Description == "" && desc != "" {
			l.Description = desc
			t.touch(name)
		}
		t.adopt(agent, name, traces.RelationSubAgent)
	}
}

// outputKeyOwner returns the agent whose OutputKey is key, or "".
func (t *tree) outputKeyOwner(key string) string {
	for _, name := range t.order {
		if t.agents[name].OutputKey == key {
			return name
		}
	}
	return ""
}

// setOutputKey records that agent stores its answer under key.
func (t *tree) setOutputKey(agent, key string) {
	if n := t.node(agent); n != nil && n.OutputKey == "" {
		n.OutputKey = key
		t.touch(agent)
	}
}

// changed returns the agents changed since the last call, and forgets them.
func (t *tree) changed() []traces.Agent {
	out := make([]traces.Agent, 0, len(t.dirty))
	for _, name := range t.dirty {
		a := *t.agents[name]
		a.Tools = slices.Clone(a.Tools)
		out = append(out, a)
	}
	t.dirty = t.dirty[:0]
	return out
}

// putAgents hands the agents the run changed to the sink. Callers hold r.mu.
func (r *Recorder) putAgents() {
	for _, a := range r.tree.changed() {
		r.out.sink.PutAgent(a)
	}
}

// agentKind maps eino's agent type to the trace's kind.
func agentKind(einoType string) traces.AgentKind {
	switch einoType {
	case "ChatModel":
		return traces.AgentChatModel
	case "Supervisor":
		return traces.AgentSupervisor
	case "Sequential":
		return traces.AgentSequential
	case "Parallel":
		return traces.AgentParallel
	case "Loop":
		return traces.AgentLoop
	}
	return traces.AgentCustom
}
