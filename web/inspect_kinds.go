package web

import (
	"fmt"
	"strings"

	"github.com/baton-dev/baton/traces"
)

// run describes the run as it is now, not as it was at the event: a run.started event was
// recorded "running" whatever became of the run.
func (s *inspector) run(e *traces.Event) {
	s.fact("flow", e.Run.Flow)
	s.fact("status", string(s.a.run.status))
	s.block("input", e.Run.Input)
	s.block("error", e.Run.Error)
	s.in.Failed = e.Run.Error != ""
	if e.Kind == traces.KindRunStarted {
		s.link("run finished", s.find(1, func(o *traces.Event) bool { return o.Kind == traces.KindRunFinished }))
		if s.a.run.status != traces.StatusRunning {
			s.block("error", s.a.runError())
		}
	}
}

func (s *inspector) agentRun(e *traces.Event) {
	r := e.AgentRun
	s.fact("via", r.Via)
	if r.Resumed {
		s.fact("resumed", "yes")
	}
	if e.Kind == traces.KindAgentStarted {
		s.in.Messages = s.fed(s.i, e.Agent, r.Input)
		s.in.MessagesTitle = fmt.Sprintf("History %s was fed (%s)", e.Agent, plural(len(r.Input), "message"))
		s.link("previous start", s.find(-1, func(o *traces.Event) bool {
			return o.Kind == traces.KindAgentStarted && o.Agent == e.Agent
		}))
	}
}

func (s *inspector) model(e *traces.Event) {
	m := e.Model
	s.fact("call id", m.ID)
	s.fact("model", m.Name)
	sameCall := func(kind traces.Kind) func(*traces.Event) bool {
		return func(o *traces.Event) bool {
			return o.Kind == kind && o.Model != nil && o.Model.ID == m.ID && o.Agent == e.Agent
		}
	}
	input, tools, at := m.Input, m.Tools, s.i
	if e.Kind == traces.KindModelFinished {
		start := s.find(-1, sameCall(traces.KindModelStarted))
		s.link("call", start)
		if j := eventIndex(s.a.tr, start); j >= 0 && len(input) == 0 {
			input, tools, at = s.a.tr.Events[j].Model.Input, s.a.tr.Events[j].Model.Tools, j
		}
		if m.Usage != nil {
			u := m.Usage
			s.fact("tokens", fmt.Sprintf("%d (prompt %d, completion %d)", u.TotalTokens, u.PromptTokens, u.CompletionTokens))
			s.fact("cost", costText(s.a.pricing, m))
		}
		if m.DurationMS > 0 {
			s.fact("duration", fmt.Sprintf("%.0f ms", m.DurationMS))
		}
		s.block("error", m.Error)
		s.in.Failed = m.Error != ""
		if m.Output != nil {
			s.message("output", *m.Output)
			for _, c := range m.Output.ToolCalls {
				if c.Name == TransferTool {
					s.link("transfer it made", madeTransfer(s.a.tr.Events, s.i, c.ID))
				}
			}
		}
	} else {
		fin := s.find(1, sameCall(traces.KindModelFinished))
		s.link("result", fin)
		if j := eventIndex(s.a.tr, fin); j >= 0 {
			s.fact("cost", costText(s.a.pricing, s.a.tr.Events[j].Model))
		}
	}
	s.fact("tools offered", strings.Join(tools, ", "))
	if len(input) > 0 {
		by, estimate := byOrigin(s.a.session.sources.promptTokens(s.a.tr, at, s.a.tr.Events[at].Agent, input, s.a.inspect.counts))
		s.fact("prompt by origin", byOriginText(by)+" ("+Estimator+")")
		if e.Kind == traces.KindModelFinished && m.Usage == nil {
			s.fact("tokens", fmt.Sprintf("prompt %d (%s); the model reported none", estimate, Estimator))
		}
		s.in.Messages = s.fed(at, e.Agent, input)
		s.in.MessagesTitle = fmt.Sprintf("Input (%s)", plural(len(input), "message"))
	}
}

func (s *inspector) tool(e *traces.Event) {
	t := e.Tool
	s.fact("tool", t.Name)
	s.fact("call id", t.CallID)
	sameCall := func(kind traces.Kind) func(*traces.Event) bool {
		return func(o *traces.Event) bool {
			return o.Kind == kind && o.Tool != nil && o.Tool.Name == t.Name && o.Tool.CallID == t.CallID
		}
	}
	if e.Kind == traces.KindToolStarted {
		s.block("arguments", t.Arguments)
		s.link("result", s.find(1, sameCall(traces.KindToolFinished)))
		return
	}
	if t.DurationMS > 0 {
		s.fact("duration", fmt.Sprintf("%.0f ms", t.DurationMS))
	}
	start := s.find(-1, sameCall(traces.KindToolStarted))
	s.link("call", start)
	if j := eventIndex(s.a.tr, start); j >= 0 {
		s.block("arguments", s.a.tr.Events[j].Tool.Arguments)
	}
	s.block("result", t.Result)
	s.block("error", t.Error)
	s.in.Failed = t.Error != ""
}

func (s *inspector) message(label string, m traces.Message) {
	s.fact("role", m.Role)
	s.fact("tool", m.ToolName)
	s.fact("tool call id", m.ToolCallID)
	s.block(label, m.Content)
	for _, c := range m.ToolCalls {
		s.block(fmt.Sprintf("tool call %s (%s)", c.Name, c.ID), c.Arguments)
	}
}

func (s *inspector) transfer(e *traces.Event) {
	t := e.Transfer
	s.agentFact("from", t.From)
	s.agentFact("to", t.To)
	s.fact("mode", t.Mode)
	s.fact("call id", t.CallID)
	for _, x := range s.a.tree.transfers {
		if x.seq != e.Seq {
			continue
		}
		s.in.Title = fmt.Sprintf("#%d transfer %d", e.Seq, x.order)
		if x.failed {
			s.in.Failed = true
			s.fact("outcome", "failed")
			s.block("error", x.err)
			s.fact(ErrorWordsLabel, errorWords[t.ErrorBy])
			s.link("error", x.failSeq)
		}
	}
	s.transferWhy(e)
	s.pair(t)
}

// ErrorWordsLabel labels the fact that says whose words a refused transfer's error is.
const ErrorWordsLabel = "in the words of"

// errorWords says whose words a refused transfer's error is, by its error_by (nothing for a trace
// written before the recorder said).
var errorWords = map[string]string{
	traces.ErrorByEino: "eino: its own error",
	traces.ErrorByRecorder: "Baton: eino (as of v0.9.21) reports a refused transfer only on the Runner's event stream, " +
		"which callbacks do not see, so an app recorded through the run option or the global handler has only what Baton " +
		"saw; one recorded through Baton.Run, which reads that stream, has eino's own words",
}

// pair lists the transfers that took t's direction, when there were several.
func (s *inspector) pair(t *traces.Transfer) {
	p := s.a.tree.pairs[[2]string{t.From, t.To}]
	if p == nil || p.count < 2 {
		return
	}
	for _, x := range s.a.tree.transfers {
		if x.t.From == t.From && x.t.To == t.To {
			s.in.Pair = append(s.in.Pair, Ref{Label: fmt.Sprintf("transfer %d", x.order), Seq: x.seq})
		}
	}
	n := len(s.in.Pair)
	s.in.PairTitle = fmt.Sprintf("All %d transfers %s → %s", n, t.From, t.To)
	if n > PairShown {
		s.in.Pair = s.in.Pair[n-PairShown:]
		s.in.PairTitle = fmt.Sprintf("The newest %d of %d transfers %s → %s", PairShown, n, t.From, t.To)
	}
}

// callbacksOnlyFact is what the inspector says of an event seen through callbacks only.
const callbacksOnlyFact = "through callbacks only: inside an AgentTool call whose caller's event stream did not carry it"

func (s *inspector) agentTool(e *traces.Event) {
	c := e.AgentTool
	s.agentFact("caller", c.Caller)
	s.agentFact("callee", c.Callee)
	s.fact("call id", c.CallID)
	s.fact("boundary", "own history, shared session values")
	pair := func(kind traces.Kind) func(*traces.Event) bool {
		return func(o *traces.Event) bool {
			return o.Kind == kind && o.AgentTool != nil && o.AgentTool.Callee == c.Callee && o.AgentTool.CallID == c.CallID
		}
	}
	if e.Kind == traces.KindAgentToolEnter {
		switch c.InputMode {
		case traces.AgentToolInputFullHistory:
			s.fact("input", "the caller's history, rewritten; the request below was dropped")
		case traces.AgentToolInputRequest:
			s.fact("input", "the request below, as a user message")
		}
		s.link("callee's input", s.find(1, func(o *traces.Event) bool {
			return o.Kind == traces.KindAgentStarted && o.Agent == c.Callee
		}))
		s.block("request", c.Request)
		s.link("result", s.find(1, pair(traces.KindAgentToolExit)))
		return
	}
	switch c.InnerEvents {
	case traces.InnerEventsCallbacks:
		s.fact("inner events", "seen through callbacks only: the caller's event stream showed just the call and its result")
	case traces.InnerEventsStream:
		s.fact("inner events", "on the caller's event stream too")
	}
	s.block("result", c.Result)
	s.link("call", s.find(-1, pair(traces.KindAgentToolEnter)))
}

func (s *inspector) session(e *traces.Event) {
	v := e.Session
	s.fact("key", v.Key)
	s.agentFact("set by", firstNonEmpty(v.SetBy, e.Agent))
	s.in.Blocks = append(s.in.Blocks, NewBlock("value", string(v.Value)))
	s.link("previous value", s.find(-1, func(o *traces.Event) bool {
		return o.Kind == traces.KindSessionSet && o.Session != nil && o.Session.Key == v.Key
	}))
}

// byOriginText lists a prompt's tokens per origin: "instruction 40, for context 230".
func byOriginText(parts []OriginTokens) string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = fmt.Sprintf("%s %d", p.Origin, p.Tokens)
	}
	return strings.Join(out, ", ")
}
