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
// callback runs in, when equal: then it is shared, not built again for every callback. One pass
// over the address: its path is known's until an agent segment differs.
func placeOf(ctx context.Context, known []string) place {
	var p place
	var lastToolName, lastToolID string
	addr := compose.GetCurrentAddress(ctx)
	n, shared := 0, true  // agent segments so far; whether they are known's first n
	for i := range addr { // by index: a segment is three strings, copied by a range over values
		seg := &addr[i]
		switch seg.Type {
		case adk.AddressSegmentAgent:
			if shared && n < len(known) && known[n] == seg.ID {
				n++
				p.path = known[:n:n]
			} else {
				if shared { // the path parts from known's here
					shared = false
					p.path = append(make([]string, 0, len(addr)-i+n), known[:n]...)
				}
				n++
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
	if shared && n < len(known) {
		p.path = append(make([]string, 0, n), p.path...) // a part of known's only: a path of its own
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
