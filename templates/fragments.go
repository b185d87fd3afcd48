package templates

import (
	"context"
	"fmt"
	"strings"

	"github.com/a-h/templ"

	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// Fragment is an HTML piece the live page swaps in: Swap "replace" replaces the element whose id
// is Target (outerHTML), "append" appends HTML inside Target.
type Fragment struct {
	Target string `json:"target"`
	Swap   string `json:"swap"`
	HTML   string `json:"html"`
}

// Swap modes of a Fragment.
const (
	SwapReplace = "replace"
	SwapAppend  = "append"
)

// Fragments returns what the run page must swap after the events of tr with seq > from; tr is
// the whole trace so far. It re-renders the header summary, the outcome and the tree on every
// change, the session panels only when a session.set or agent.started arrived, the agent filter
// only when a new agent appeared, and appends only the new timeline rows. It returns nil when no
// event is newer than from. It only fails when rendering fails.
func Fragments(ctx context.Context, tr traces.Trace, from int64) ([]Fragment, error) {
	u := web.NewUpdate(tr, from)
	if !u.Changed {
		return nil, nil
	}
	type part struct {
		target, swap string
		c            templ.Component
	}
	parts := []part{
		{"run-summary", SwapReplace, runSummary(u.Stats)},
		{"run-outcome", SwapReplace, runOutcome(u.Stats)},
		{"graph", SwapReplace, graphView(u.Graph, from)},
		{"timeline-rows", SwapAppend, timelineRows(u.Rows)},
	}
	if u.ValuesChanged {
		parts = append(parts, part{"session-values", SwapReplace, sessionValues(u.Session.Values)})
	}
	if u.HistoriesChanged {
		parts = append(parts, part{"session-histories", SwapReplace, sessionHistories(u.Session.Histories)})
	}
	if u.AgentsChanged {
		parts = append(parts, part{"filter-agent", SwapReplace, agentFilter(u.Agents)})
	}
	out := make([]Fragment, 0, len(parts))
	for _, p := range parts {
		html, err := render(ctx, p.c)
		if err != nil {
			return nil, fmt.Errorf("render fragment %s of run %s: %w", p.target, tr.Run.ID, err)
		}
		out = append(out, Fragment{Target: p.target, Swap: p.swap, HTML: html})
	}
	return out, nil
}

// Inspector returns the inspector panel content for event seq of tr (GET
// /runs/:id/inspector?seq=N), or an error with traces.CodeNotFound when tr has no such event.
func Inspector(tr traces.Trace, seq int64) (templ.Component, error) {
	in, err := web.NewInspection(tr, seq)
	if err != nil {
		return nil, err
	}
	return inspection(in), nil
}

// AgentInspector returns the inspector panel content for agent name of tr (GET
// /runs/:id/inspector?agent=NAME), or an error with traces.CodeNotFound when tr has no such agent.
func AgentInspector(tr traces.Trace, name string) (templ.Component, error) {
	s, err := web.NewAgentSummary(tr, name)
	if err != nil {
		return nil, err
	}
	return agentSummary(s), nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func relationWord(r traces.Relation) string {
	if r == traces.RelationAgentTool {
		return "AgentTool"
	}
	return strings.ReplaceAll(string(firstNonEmpty(string(r), "child")), "subagent", "sub-agent")
}
