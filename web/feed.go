package web

import (
	"fmt"
	"slices"

	"github.com/baton-dev/baton/traces"
)

// A run held before a transfer (its target not started yet) shows what the target will be fed:
// what eino's flow agent rebuilds from the shared history when the target starts (adk's
// genAgentInput with the default history rewriter): the run's input, then every message of the
// Runner's stream, the target's own as they are and every other agent's rewritten as a user
// message "For context: [A] ...". A model's transfer is held inside the model call, before its
// reply and the transfer's tool result reach the stream: the prediction adds them as eino will.
// Where that rebuilding is not what the run does (a custom history rewriter, skipped transfer
// messages, a transfer inside an AgentTool), the banner says so instead of guessing.

// transferResult is the result eino's transfer_to_agent tool gives (adk's transferToAgentTool).
const transferResult = "successfully transferred to agent [%s]"

// heldFeed fills h, held at the paused event with index p of a.tr, with what its transfer's
// target will be fed, with origins, or why it cannot be told.
func (a *analysis) heldFeed(h *Held, p int) {
	if !h.transfer() {
		return
	}
	msgs, why := predictFeed(a.tr.Events, a.tree, p, h)
	if why != "" {
		h.FeedNote = why
		return
	}
	sys, known := instruction(a.tr.Events[:p], h.Target)
	if known {
		msgs = append([]traces.Message{sys}, msgs...)
	}
	h.Feed = a.session.fed(a.tr, len(a.tr.Events), h.Target, msgs, a.tree.roster)
	h.FeedTitle = fmt.Sprintf("What %s will be fed (%s)", h.Target, plural(len(msgs), "message"))
	if !known {
		h.FeedTitle = fmt.Sprintf("What %s will be fed after its instruction (%s; its system message is not in the trace until its model is first called)",
			h.Target, plural(len(msgs), "message"))
	}
}

// instruction returns the system message agent's model calls begin with, as its latest call in
// ev received it: what its model will be given first again. false when it called none.
func instruction(ev []traces.Event, agent string) (traces.Message, bool) {
	for j := len(ev) - 1; j >= 0; j-- {
		if e := &ev[j]; e.Kind == traces.KindModelStarted && e.Agent == agent && e.Model != nil {
			if in := e.Model.Input; len(in) > 0 && in[0].Role == "system" {
				return in[0], true
			}
			return traces.Message{}, false
		}
	}
	return traces.Message{}, false
}

// transfer reports whether h is held before a transfer, by a transfer breakpoint or a step.
func (h *Held) transfer() bool {
	return h.Break == traces.BreakTransfer || h.Break == traces.BreakStep && h.On == traces.BreakTransfer
}

// predictFeed returns the messages the target of h (held at the paused event with index p of ev)
// will be fed, or why they cannot be predicted faithfully.
func predictFeed(ev []traces.Event, t *treeState, p int, h *Held) ([]traces.Message, string) {
	if h.OwnFeed != "" {
		return nil, fmt.Sprintf("Baton does not predict what %s will be fed: %s.", h.Target, h.OwnFeed)
	}
	if t.insideAgentTool(&ev[p]) {
		return nil, "This transfer happens inside an AgentTool call, whose history is its own: Baton does not predict what the target will be fed."
	}
	// Every earlier transfer whose target started is evidence of how this run rebuilds a
	// target's input: where eino's default rewriting does not give what a target received, the
	// run rewrites the history its own way.
	for j := 0; j < p; j++ {
		if ev[j].Kind != traces.KindTransfer || ev[j].Transfer == nil || t.insideAgentTool(&ev[j]) {
			continue
		}
		r := received(ev, j)
		if r < 0 || r > p {
			continue
		}
		want := rebuild(sharedHistory(ev, t, r), ev[r].Agent)
		if !slices.EqualFunc(want, ev[r].AgentRun.Input, sameMessage) {
			return nil, fmt.Sprintf("This run does not feed a target eino's default history (event #%d: %s received something else, e.g. a custom history rewriter or skipped transfer messages): Baton does not predict what %s will be fed.", ev[r].Seq, ev[r].Agent, h.Target)
		}
	}
	hist := sharedHistory(ev, t, p)
	if h.At > 0 {
		// A model's transfer, held inside its call: its reply (unless it was streamed out) and
		// the tool's result are not on the stream yet.
		i := eventIndex(traces.Trace{Events: ev}, h.At)
		if i < 0 || ev[i].Model == nil || ev[i].Model.Output == nil {
			return nil, fmt.Sprintf("The deciding reply (#%d) is not in the trace: Baton cannot tell what %s will be fed.", h.At, h.Target)
		}
		reply := *ev[i].Model.Output
		var call *traces.ToolCallSpec
		for k := range reply.ToolCalls {
			if reply.ToolCalls[k].Name == TransferTool {
				call = &reply.ToolCalls[k]
			}
		}
		if call == nil || len(reply.ToolCalls) > 1 {
			return nil, fmt.Sprintf("The deciding reply (#%d) calls other tools beside %s, whose results are not known yet: Baton does not predict what %s will be fed.", h.At, TransferTool, h.Target)
		}
		if !onStream(ev[i+1:p], ev[i].Agent, reply) {
			hist = append(hist, entry{agent: ev[i].Agent, msg: reply})
		}
		result := traces.Message{Role: "tool", Content: fmt.Sprintf(transferResult, h.Target), ToolCallID: call.ID, ToolName: TransferTool}
		if !onStream(ev[i+1:p], ev[i].Agent, result) {
			hist = append(hist, entry{agent: ev[i].Agent, msg: result})
		}
	}
	return rebuild(hist, h.Target), ""
}

// entry is one message of the shared history and the agent that said it ("" for the run's input).
type entry struct {
	agent string
	msg   traces.Message
}

// sharedHistory returns the history eino keeps for the run before event index end: the run's
// input (its first agent's), then the messages of the Runner's stream outside AgentTool calls.
func sharedHistory(ev []traces.Event, t *treeState, end int) []entry {
	var out []entry
	root := false
	for j := 0; j < end; j++ {
		e := &ev[j]
		switch {
		case !root && e.Kind == traces.KindAgentStarted && e.AgentRun != nil:
			root = true
			for _, m := range e.AgentRun.Input {
				out = append(out, entry{msg: m})
			}
		case e.Kind == traces.KindMessage && e.Message != nil && !t.insideAgentTool(e):
			out = append(out, entry{agent: e.Agent, msg: *e.Message})
		}
	}
	return out
}

// rebuild is eino's default history rewriter for agent: its own messages and the run's input as
// they are, every other agent's as a user message "For context: [A] ..." (adk's rewriteMessage).
func rebuild(hist []entry, agent string) []traces.Message {
	out := make([]traces.Message, 0, len(hist))
	for _, h := range hist {
		if h.agent == "" || h.agent == agent {
			out = append(out, h.msg)
			continue
		}
		s := "For context:"
		switch m := h.msg; m.Role {
		case "assistant":
			if m.Content != "" {
				s += fmt.Sprintf(" [%s] said: %s.", h.agent, m.Content)
			}
			for _, c := range m.ToolCalls {
				s += fmt.Sprintf(" [%s] called tool: `%s` with arguments: %s.", h.agent, c.Name, c.Arguments)
			}
		case "tool":
			if m.Content != "" {
				s += fmt.Sprintf(" [%s] `%s` tool returned result: %s.", h.agent, m.ToolName, m.Content)
			}
		}
		out = append(out, traces.Message{Role: "user", Content: s})
	}
	return out
}

// onStream reports whether agent's message m is among the stream's messages of ev (a reply the
// model streamed out before it was held).
func onStream(ev []traces.Event, agent string, m traces.Message) bool {
	for j := range ev {
		if e := &ev[j]; e.Kind == traces.KindMessage && e.Message != nil && e.Agent == agent && sameMessage(*e.Message, m) {
			return true
		}
	}
	return false
}
