package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/baton-dev/baton/traces"
)

// Summary describes an event in one line of plain text.
func Summary(e traces.Event) string {
	switch {
	case e.Run != nil:
		return runSummary(e)
	case e.AgentRun != nil:
		return agentSummary(e)
	case e.Model != nil:
		return modelSummary(e)
	case e.Tool != nil:
		return toolSummary(e)
	case e.Message != nil:
		return messageSummary(*e.Message)
	case e.Transfer != nil:
		t := e.Transfer
		return fmt.Sprintf("%s → %s (%s)", t.From, t.To, t.Mode)
	case e.AgentTool != nil:
		c := e.AgentTool
		if e.Kind == traces.KindAgentToolExit {
			return fmt.Sprintf("%s → %s: %s", c.Callee, c.Caller, quote(c.Result))
		}
		return fmt.Sprintf("%s → %s: %s", c.Caller, c.Callee, quote(c.Request))
	case e.Session != nil:
		return fmt.Sprintf("%s = %s", e.Session.Key, compactJSON(e.Session.Value))
	case e.Interrupt != nil:
		return firstNonEmpty(e.Interrupt.Info, e.Interrupt.Address, e.Interrupt.ID)
	case e.Exit != nil:
		return "exit: " + quote(e.Exit.FinalResult)
	case e.BreakLoop != nil:
		return fmt.Sprintf("%s broke its loop after %s", e.BreakLoop.From, plural(e.BreakLoop.Iterations, "iteration"))
	case e.Error != nil:
		return e.Error.Message
	case e.Lost != nil:
		return plural(int(e.Lost.Count), "event") + " lost: the app could not send them to Baton"
	case e.Pause != nil:
		return pauseSummary(e)
	}
	return string(e.Kind)
}

func runSummary(e traces.Event) string {
	r := e.Run
	if e.Kind == traces.KindRunStarted {
		return fmt.Sprintf("flow %s: %s", firstNonEmpty(r.Flow, "?"), quote(r.Input))
	}
	if r.Error != "" {
		return fmt.Sprintf("%s: %s", r.Status, r.Error)
	}
	return string(r.Status)
}

func agentSummary(e traces.Event) string {
	r := e.AgentRun
	if e.Kind == traces.KindAgentFinished {
		return "finished"
	}
	how := startedHow(r)
	if len(r.Input) > 0 {
		how += ", fed " + plural(len(r.Input), "message")
	}
	return how
}

// startedHow says how an agent took control: "started via transfer", "resumed via run", or, for an
// agent eino passes through on its way back to the interrupt a run resumes (via resume), that.
func startedHow(r *traces.AgentRun) string {
	if r.Via == viaResume {
		return "resumed on the way back to the interrupt"
	}
	how := "started"
	if r.Resumed {
		how = "resumed"
	}
	if r.Via != "" {
		how += " via " + r.Via
	}
	return how
}

// viaResume is the via of an agent eino re-enters on the way back to the interrupt a run
// resumes: not a transfer, nor a new visit's own start.
const viaResume = "resume"

func modelSummary(e traces.Event) string {
	m := e.Model
	if e.Kind == traces.KindModelStarted {
		return fmt.Sprintf("call with %s, %s", plural(len(m.Input), "message"), plural(len(m.Tools), "tool"))
	}
	var parts []string
	switch {
	case m.Error != "":
		parts = append(parts, "failed: "+m.Error)
	case m.Output != nil:
		parts = append(parts, messageSummary(*m.Output))
	}
	if m.Usage != nil {
		parts = append(parts, fmt.Sprintf("%d tok", m.Usage.TotalTokens))
	}
	if m.DurationMS > 0 {
		parts = append(parts, fmt.Sprintf("%.0f ms", m.DurationMS))
	}
	return strings.Join(parts, " · ")
}

func toolSummary(e traces.Event) string {
	t := e.Tool
	if e.Kind == traces.KindToolStarted {
		return fmt.Sprintf("%s(%s)", t.Name, compactJSON(json.RawMessage(t.Arguments)))
	}
	if t.Error != "" {
		return fmt.Sprintf("%s failed: %s", t.Name, t.Error)
	}
	return fmt.Sprintf("%s → %s", t.Name, quote(t.Result))
}

func messageSummary(m traces.Message) string {
	var parts []string
	if m.Content != "" {
		parts = append(parts, quote(m.Content))
	}
	for _, c := range m.ToolCalls {
		parts = append(parts, fmt.Sprintf("calls %s(%s)", c.Name, compactJSON(json.RawMessage(c.Arguments))))
	}
	who := firstNonEmpty(m.Role, "message")
	if m.Role == "tool" && m.ToolName != "" {
		who = "tool " + m.ToolName
	}
	if len(parts) == 0 {
		return who + ": (empty)"
	}
	return who + ": " + strings.Join(parts, ", ")
}

// quote puts s in double quotes, cut short for a one-line summary.
func quote(s string) string { return `"` + shorten(oneLine(s), summaryLen) + `"` }

// compactJSON shows a JSON value on one line, with markup as written rather than as \u003c
// escapes: templ escapes what is shown.
func compactJSON(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return shorten(oneLine(string(raw)), summaryLen)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return shorten(strings.TrimSpace(buf.String()), summaryLen)
}

// pauseSummary says what a breakpoint held, or how the run went on from it.
func pauseSummary(e traces.Event) string {
	p := e.Pause
	if e.Kind == traces.KindPaused {
		if p.Detail != "" {
			return "paused before: " + p.Detail
		}
		return "paused at a " + p.Break + " breakpoint"
	}
	s := p.Action
	switch p.Action {
	case traces.ActionContinue:
		s = "continued"
	case traces.ActionStep:
		s = "stepped to the next handoff"
	case traces.ActionAbort:
		s = "aborted"
	}
	if p.By != "" {
		s += " by " + p.By
	}
	if p.Edited != "" {
		s += ", edited: " + p.Edited
	}
	return s
}
