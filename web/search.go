package web

import (
	"strings"

	"github.com/baton-dev/baton/traces"
)

// echoWindow is how far back a message event looks for the call it repeats: eino emits the
// message right after the callback it echoes, give or take parallel tool calls.
const echoWindow = 16

// noteSearch keeps what an event's row needs for search and folding: where an agent's input
// stops repeating its previous one, and which call a message event echoes. The event's search
// text is made when a search first needs it (IndexSearch): making it here would make every
// analysis, a replay's included, some 3 times as dear.
func (a *analysis) noteSearch(i int) {
	e := &a.tr.Events[i]
	var in []traces.Message
	key := string(e.Kind) + " " + e.Agent // a model's input and an agent's are different lists
	switch {
	case e.Model != nil && e.Kind == traces.KindModelStarted:
		in = e.Model.Input
	case e.AgentRun != nil && e.Kind == traces.KindAgentStarted:
		in = e.AgentRun.Input
	case e.Message != nil:
		if of := a.echoed(i); of > 0 {
			a.echoOf[e.Seq], a.echoedBy[of] = of, e.Seq
		}
		return
	default:
		return
	}
	// Each input repeats the agent's previous one and adds to it: only what it adds is searched,
	// so that a long conversation's search text grows with its length, not its square.
	if p := a.inputs[key]; len(p) > 0 && len(p) <= len(in) && sameMessage(p[len(p)-1], in[len(p)-1]) {
		a.freshFrom[e.Seq] = len(p)
	}
	a.inputs[key] = in
}

// echoed returns the seq of the model or tool call whose reply message event i repeats, or 0.
func (a *analysis) echoed(i int) int64 {
	ev := a.tr.Events
	e := &ev[i]
	m := e.Message
	for j := i - 1; j >= 0 && j >= i-echoWindow; j-- {
		o := &ev[j]
		if o.Agent != e.Agent {
			continue
		}
		switch {
		case m.Role == "assistant" && o.Kind == traces.KindModelFinished && o.Model != nil && o.Model.Output != nil:
			if sameMessage(*o.Model.Output, *m) {
				return o.Seq
			}
			return 0 // the agent's newest reply says something else
		case m.Role == "tool" && o.Kind == traces.KindToolFinished && o.Tool != nil:
			if o.Tool.CallID == m.ToolCallID && o.Tool.Result == m.Content {
				return o.Seq
			}
		}
	}
	return 0
}

// sameMessage reports whether a and b say the same thing.
func sameMessage(a, b traces.Message) bool {
	if a.Role != b.Role || a.Content != b.Content || a.ToolCallID != b.ToolCallID || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for k := range a.ToolCalls {
		if a.ToolCalls[k] != b.ToolCalls[k] {
			return false
		}
	}
	return true
}

// searchOf returns the search text of event i: kept when IndexSearch made it, else made now.
func (a *analysis) searchOf(i int) string {
	if i < len(a.searches) {
		return a.searches[i]
	}
	e := &a.tr.Events[i]
	return a.searchText(e, shorten(oneLine(Summary(*e)), summaryLen))
}

// searchText is the lower-cased text a timeline search looks in for e: its row's words and the
// event's whole content (messages, arguments, results, errors, session values).
func (a *analysis) searchText(e *traces.Event, summary string) string {
	var b strings.Builder
	add := func(ss ...string) {
		for _, s := range ss {
			if s != "" {
				b.WriteString(s)
				b.WriteByte('\n')
			}
		}
	}
	msgs := func(ms []traces.Message) {
		for _, m := range ms {
			add(m.Content)
			for _, c := range m.ToolCalls {
				add(c.Name, c.Arguments)
			}
		}
	}
	add(e.Agent, string(e.Kind), summary)
	switch {
	case e.Run != nil:
		add(e.Run.Input, e.Run.Error)
	case e.AgentRun != nil:
		msgs(e.AgentRun.Input[a.freshFrom[e.Seq]:])
		add(e.AgentRun.Error)
	case e.Model != nil:
		msgs(e.Model.Input[a.freshFrom[e.Seq]:])
		if e.Model.Output != nil {
			msgs([]traces.Message{*e.Model.Output})
		}
		add(e.Model.Error)
	case e.Tool != nil:
		add(e.Tool.Name, e.Tool.Arguments, e.Tool.Result, e.Tool.Error)
	case e.Message != nil:
		msgs([]traces.Message{*e.Message})
	case e.Transfer != nil:
		add(e.Transfer.Error)
	case e.AgentTool != nil:
		add(e.AgentTool.Request, e.AgentTool.Result)
	case e.Session != nil:
		add(e.Session.Key, string(e.Session.Value))
	case e.Interrupt != nil:
		add(e.Interrupt.Info, e.Interrupt.Address)
	case e.Exit != nil:
		add(e.Exit.FinalResult)
	case e.Error != nil:
		add(e.Error.Message)
	}
	return strings.ToLower(b.String())
}
