package web

import (
	"fmt"

	"github.com/baton-dev/baton/traces"
)

// BreakHere is a breakpoint the page offers to add from an item of the run (an agent node, a
// transfer, a timeline row): Spec is written as POST /api/runs/:id/breakpoints takes it.
type BreakHere struct {
	Label string
	Spec  string
}

// breaksAt returns the breakpoints an event's inspector offers: before transfers to the agent a
// transfer goes to, before the model calls of the agent a model call or visit is of, at the tool
// a tool call is of, before the AgentTool calls of its callee.
func breaksAt(e *traces.Event) []BreakHere {
	switch {
	case e.Kind == traces.KindTransfer && e.Transfer != nil:
		return []BreakHere{breakTransfer(e.Transfer.To), breakModel(e.Transfer.To)}
	case e.Model != nil && e.Agent != "":
		return []BreakHere{breakModel(e.Agent)}
	case e.Tool != nil && e.Tool.Name != "" && e.Tool.Name != TransferTool:
		return []BreakHere{{Label: fmt.Sprintf("Break at tool %s", e.Tool.Name), Spec: traces.BreakTool + ":" + e.Tool.Name}}
	case e.AgentTool != nil && e.AgentTool.Callee != "":
		c := e.AgentTool.Callee
		return []BreakHere{{Label: fmt.Sprintf("Break before AgentTool calls of %s", c), Spec: traces.BreakAgentTool + ":" + c}}
	case e.AgentRun != nil && e.Agent != "":
		return agentBreaks(e.Agent)
	}
	return nil
}

// agentBreaks are the breakpoints an agent's node offers.
func agentBreaks(agent string) []BreakHere {
	return []BreakHere{breakTransfer(agent), breakModel(agent)}
}

func breakTransfer(to string) BreakHere {
	return BreakHere{Label: fmt.Sprintf("Break before transfers to %s", to), Spec: traces.BreakTransfer + ":" + to}
}

func breakModel(agent string) BreakHere {
	return BreakHere{Label: fmt.Sprintf("Break before %s's model calls", agent), Spec: traces.BreakModel + ":" + agent}
}
