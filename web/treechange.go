package web

import "github.com/baton-dev/baton/traces"

// Many events leave the tree as drawn unchanged: the analysis notes the newest event that
// changed it (graphSeq), so that a live page is sent the tree only then.

// noteGraph notes whether e changed the tree as drawn: its nodes, links, AgentTool frames,
// transfer edges and badges. A new agent, a transfer, an AgentTool call, an error and the run's
// interrupt, resume or end do (they change the layout, edges, frames or several agents' states);
// any other event touches only its own agent, whose node changes when its state, error or detail
// line does: a message, or a tool call of an agent already at work, leaves the tree as it was.
func (a *analysis) noteGraph(e *traces.Event, newAgent bool) {
	switch e.Kind {
	case traces.KindTransfer, traces.KindAgentToolEnter, traces.KindAgentToolExit, traces.KindError,
		traces.KindInterrupted, traces.KindResumed, traces.KindRunFinished:
		newAgent = true
	}
	if newAgent {
		for _, x := range a.acts {
			x.drawn = x.face()
		}
		a.graphSeq = e.Seq
		return
	}
	if x := a.acts[e.Agent]; x != nil {
		if f := x.face(); !f.looksLike(x.drawn) {
			x.drawn = f
			a.graphSeq = e.Seq
		}
	}
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
