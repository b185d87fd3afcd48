package record

import (
	"context"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/compose"
)

// place is where a callback fired, read from eino's execution address
// ("agent:a;agent:b;runnable:b;node:...;tool:search:call_1;agent:c"): the agent segments are the
// run path eino also puts on events, the last one owns the callback, and a tool segment just before
// an agent marks an AgentTool boundary.
type place struct {
	path []string // agent segments, as eino's RunPath
	// callerTool and callID are set when the owning agent runs inside an AgentTool call.
	callerTool, callID string
	// toolCallID is the call id of the innermost tool segment after the owning agent, if any.
	toolCallID string
	// boundaryCallID is the call id of the innermost AgentTool call the owning agent runs under,
	// however many agents (transfer targets, workflow steps) lie between.
	boundaryCallID string
	// runnable is true when the address ends in the owning agent's own compose runnable.
	runnable bool
	// node is the graph node the address ends in, if it does: for a model inside eino's host
	// multi-agent, the specialist (or "host") it runs as.
	node string
}

// placeOf reads the place of a callback in ctx. Its path is known, the path of the visit the
// callback runs in, when equal: then it is shared, not built again for every callback.
func placeOf(ctx context.Context, known []string) place {
	var p place
	var lastToolName, lastToolID string
	addr := compose.GetCurrentAddress(ctx)
	agents, same := 0, true
	for i := range addr { // by index: a segment is three strings, copied by a range over values
		if seg := &addr[i]; seg.Type == adk.AddressSegmentAgent {
			same = same && agents < len(known) && known[agents] == seg.ID
			agents++
		}
	}
	shared := same && agents == len(known)
	if !shared {
		p.path = make([]string, 0, agents)
	}
	n := 0 // agent segments so far
	for i := range addr {
		seg := &addr[i]
		switch seg.Type {
		case adk.AddressSegmentAgent:
			if n++; shared {
				p.path = known[:n:n]
			} else {
				p.path = append(p.path, seg.ID)
			}
			p.callerTool, p.callID = "", ""
			if lastToolName != "" {
				p.callerTool, p.callID = lastToolName, lastToolID
				p.boundaryCallID = lastToolID
			}
			lastToolName, lastToolID, p.toolCallID = "", "", ""
			p.runnable, p.node = false, ""
		case compose.AddressSegmentTool:
			lastToolName, lastToolID, p.toolCallID = seg.ID, seg.SubID, seg.SubID
		case compose.AddressSegmentRunnable:
			p.runnable = i == len(addr)-1 && len(p.path) > 0 && seg.ID == p.path[len(p.path)-1]
		case compose.AddressSegmentNode:
			if i == len(addr)-1 {
				p.node = seg.ID
			}
		}
	}
	return p
}

// agent returns the agent that owns the place, or "".
func (p place) agent() string {
	if len(p.path) == 0 {
		return ""
	}
	return p.path[len(p.path)-1]
}

// pathKey identifies a run path with adjacent duplicates collapsed.
func pathKey(path []string) string { return strings.Join(collapse(path), ">") }

func collapse(path []string) []string {
	out := make([]string, 0, len(path))
	for _, s := range path {
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

func runPathOf(steps []adk.RunStep) []string {
	out := make([]string, len(steps))
	for i := range steps {
		out[i] = steps[i].String()
	}
	return out
}
