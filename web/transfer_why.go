package web

import (
	"fmt"

	"github.com/baton-dev/baton/traces"
)

// TransferTool is the tool eino gives a model to hand control to another agent.
const TransferTool = "transfer_to_agent"

// deciding returns the index of the event that made transfer event i: for an llm transfer, the
// From agent's newest model.finished before it whose reply calls the transfer's call id; for a
// deterministic one, the wrapper's synthetic assistant call with that id. -1 when the trace has
// none (a transfer recorded without its call). Call ids repeat (eino's wrappers may all use one
// UUID), so the nearest match before the transfer wins.
func deciding(ev []traces.Event, i int) int {
	t := ev[i].Transfer
	for j := i - 1; j >= 0; j-- {
		e := &ev[j]
		if e.Agent != t.From {
			continue
		}
		var m *traces.Message
		switch {
		case t.Mode == traces.TransferLLM && e.Kind == traces.KindModelFinished && e.Model != nil:
			m = e.Model.Output
		case t.Mode != traces.TransferLLM && e.Kind == traces.KindMessage:
			m = e.Message
		}
		if m != nil && callOf(*m, t.CallID) != nil {
			return j
		}
		if e.Kind == traces.KindAgentStarted {
			return -1 // the transfer's agent visit began with no such call
		}
	}
	return -1
}

// callOf returns m's transfer call with id, or nil.
func callOf(m traces.Message, id string) *traces.ToolCallSpec {
	for k := range m.ToolCalls {
		if c := &m.ToolCalls[k]; c.Name == TransferTool && c.ID == id {
			return c
		}
	}
	return nil
}

// received returns the index of the agent.started with which transfer event i's target took
// control, or -1 when it has not (yet, or because the transfer failed).
func received(ev []traces.Event, i int) int {
	to := ev[i].Transfer.To
	for j := i + 1; j < len(ev); j++ {
		if ev[j].Kind == traces.KindAgentStarted && ev[j].Agent == to {
			return j
		}
		if ev[j].Kind == traces.KindTransfer {
			return -1 // control moved on before the target started
		}
	}
	return -1
}

// madeTransfer returns the seq of the transfer that the call id of a model's reply (event i)
// made, or 0.
func madeTransfer(ev []traces.Event, i int, id string) int64 {
	from := ev[i].Agent
	for j := i + 1; j < len(ev); j++ {
		e := &ev[j]
		if e.Kind == traces.KindTransfer && e.Transfer.From == from && e.Transfer.CallID == id {
			return e.Seq
		}
		if e.Kind == traces.KindModelFinished && e.Agent == from {
			return 0 // the agent's next reply: that call made no transfer
		}
	}
	return 0
}

// transferWhy fills a transfer's inspector with why it happened and what its target received.
func (s *inspector) transferWhy(e *traces.Event) {
	t := e.Transfer
	if d := deciding(s.a.tr.Events, s.i); d >= 0 {
		de := &s.a.tr.Events[d]
		s.in.Decision = de.Seq
		if de.Model != nil {
			s.in.DecisionText = fmt.Sprintf("%s's model call %s chose it", t.From, de.Model.ID)
			out := de.Model.Output
			s.block("the model said", out.Content)
			s.block("its "+TransferTool+" arguments", callOf(*out, t.CallID).Arguments)
		} else {
			s.in.DecisionText = fmt.Sprintf("the deterministic wrapper around %s made it when %s finished", t.From, t.From)
		}
	} else if t.Mode != traces.TransferLLM {
		s.in.DecisionText = fmt.Sprintf("the deterministic wrapper around %s", t.From)
	}
	r := received(s.a.tr.Events, s.i)
	if r < 0 {
		return
	}
	re := &s.a.tr.Events[r]
	s.in.Received = re.Seq
	s.link(t.To+" received", re.Seq)
	s.in.Messages = s.fed(r, t.To, re.AgentRun.Input)
	s.in.MessagesTitle = fmt.Sprintf("What %s then received (%s)", t.To, plural(len(re.AgentRun.Input), "message"))
}
