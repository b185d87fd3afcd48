package templates

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/a-h/templ"

	"github.com/baton-dev/baton/internal/prices"
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
// the whole trace so far: the parts Parts renders, with the new timeline rows appended after the
// tree. It returns nil when no event is newer than from. It only fails when rendering fails.
func Fragments(ctx context.Context, tr traces.Trace, from int64) ([]Fragment, error) {
	u := web.NewUpdate(tr, from)
	if !u.Changed {
		return nil, nil
	}
	parts, err := Parts(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("render fragments of run %s: %w", tr.Run.ID, err)
	}
	rows, err := Rows(ctx, append(u.Amended, u.Rows...))
	if err != nil {
		return nil, fmt.Errorf("render fragments of run %s: %w", tr.Run.ID, err)
	}
	// The rows go right after the tree (or the outcome, when the tree is unchanged), where the
	// page has always had them.
	i := slices.IndexFunc(parts, func(f Fragment) bool { return f.Target == "graph" }) + 1
	if i == 0 {
		i = min(2, len(parts))
	}
	return slices.Insert(parts, i, Fragment{Target: RowsTarget, Swap: SwapAppend, HTML: strings.Join(rows, "")}), nil
}

// RowsTarget is the element the timeline rows are appended to. A row whose id the page has
// already replaces the old one in place.
const RowsTarget = "timeline-rows"

// Parts renders the parts of the run page that u changes, rows aside: the header summary and
// the outcome on every change, the tree when it changed (transfers after u.From flash), else
// the nodes whose face alone changed, each in place of its node (NodeTarget), the session values
// when a session.set arrived, the histories when an agent first started, else the sections of
// those that started again (HistoryTarget), the agent filter only when a new agent appeared,
// the sequence view's data when u carries it. It returns nil when u changes nothing.
func Parts(ctx context.Context, u web.Update) ([]Fragment, error) {
	parts := partsOf(u)
	if len(parts) == 0 {
		return nil, nil
	}
	out := make([]Fragment, 0, len(parts))
	for _, p := range parts {
		html, err := render(ctx, p.c)
		if err != nil {
			return nil, fmt.Errorf("render fragment %s: %w", p.target, err)
		}
		out = append(out, Fragment{Target: p.target, Swap: SwapReplace, HTML: html})
	}
	return out, nil
}

// part is a replaceable part of the run page, to be rendered.
type part struct {
	target string
	c      templ.Component
}

// partsOf returns the parts that u changes (see Parts).
func partsOf(u web.Update) []part {
	if !u.Changed {
		return nil
	}
	parts := []part{
		{"run-summary", runSummary(u.Stats)},
		{"run-outcome", runOutcome(u.Stats)},
	}
	if u.GraphChanged {
		parts = append(parts, part{"graph", graphView(u.Graph, u.From)})
	}
	for _, nd := range u.Faces {
		parts = append(parts, part{NodeTarget(nd.Name), node(nd)})
	}
	if u.ValuesChanged {
		parts = append(parts, part{"session-values", sessionValues(u.Session.Values)})
	}
	if u.HistoriesChanged {
		parts = append(parts, part{"session-histories", sessionHistories(u.Session.Histories)})
	}
	for _, h := range u.Restarts {
		parts = append(parts, part{HistoryTarget(h.Agent), historySection(h)})
	}
	if u.AgentsChanged {
		parts = append(parts, part{"filter-agent", agentFilter(u.Agents)})
	}
	if u.Sequence != nil {
		parts = append(parts, part{SequenceTarget, sequenceData(*u.Sequence)})
	}
	return parts
}

// NodeTarget is the id of agent name's node in the tree, which a fragment replaces when only
// its face changed. Such a fragment is older news than a later "graph" one, which holds it.
func NodeTarget(name string) string { return domID(nodePrefix, name) }

// HistoryTarget is the id of agent name's section of the session panel, which a fragment
// replaces when only agents that had started before started again. Such a fragment is older
// news than a later "session-histories" one, which holds it.
func HistoryTarget(name string) string { return domID(historyPrefix, name) }

// WholeOf returns the part that holds target when target is a piece of one: "graph" for a node
// (NodeTarget), "session-histories" for an agent's history (HistoryTarget); else "".
func WholeOf(target string) string {
	switch {
	case strings.HasPrefix(target, nodePrefix):
		return "graph"
	case strings.HasPrefix(target, historyPrefix):
		return "session-histories"
	}
	return ""
}

const (
	nodePrefix    = "node-"
	historyPrefix = "hist-"
)

// SequenceTarget is the element that holds the sequence view's data; a fragment replaces it
// with the whole view (time travel, a first render) or what changed (live).
const SequenceTarget = "seq-data"

// Sequence renders the sequence view's data fragment for s.
func Sequence(ctx context.Context, s web.Sequence) (Fragment, error) {
	html, err := render(ctx, sequenceData(s))
	if err != nil {
		return Fragment{}, fmt.Errorf("render fragment %s: %w", SequenceTarget, err)
	}
	return Fragment{Target: SequenceTarget, Swap: SwapReplace, HTML: html}, nil
}

// Rows renders timeline rows, one HTML string each, to be appended to RowsTarget.
func Rows(ctx context.Context, rows []web.Row) ([]string, error) {
	out := make([]string, len(rows))
	for i, r := range rows {
		html, err := render(ctx, timelineRow(r))
		if err != nil {
			return nil, fmt.Errorf("render timeline row %d: %w", r.Seq, err)
		}
		out[i] = html
	}
	return out, nil
}

// Inspector returns the inspector panel content for event seq of tr (GET
// /runs/:id/inspector?seq=N), or an error with traces.CodeNotFound when tr has no such event.
// fork, when not nil, offers on a model call to fork the run there (the server runs tr's flow
// and tr has ended). Model calls are priced by p (nil: no money).
func Inspector(tr traces.Trace, seq int64, fork *Fork, p prices.Table) (templ.Component, error) {
	in, err := web.NewInspection(tr, seq, web.WithPrices(p))
	if err != nil {
		return nil, err
	}
	return InspectionPanel(in, tr.Agents, fork), nil
}

// InspectionPanel is Inspector's panel for in, an event of a run on agents.
func InspectionPanel(in web.Inspection, agents []traces.Agent, fork *Fork) templ.Component {
	if fork != nil && in.Kind == traces.KindModelStarted {
		return inspectionWithFork(in, agents, fork.Models)
	}
	return inspection(in)
}

// AppInspector is Inspector for the run of an app (a flow the server does not run): a model
// call offers the command that makes the app's next run a fork there.
func AppInspector(tr traces.Trace, seq int64, p prices.Table) (templ.Component, error) {
	in, err := web.NewInspection(tr, seq, web.WithPrices(p))
	if err != nil {
		return nil, err
	}
	return AppInspectionPanel(in, tr.Agents), nil
}

// AppInspectionPanel is AppInspector's panel for in, an event of an app's run on agents.
func AppInspectionPanel(in web.Inspection, agents []traces.Agent) templ.Component {
	if in.Kind == traces.KindModelStarted {
		return inspectionWithAppFork(in, agents)
	}
	return inspection(in)
}

// Fork is what the inspector's fork form offers.
type Fork struct {
	// Models are those a fork may go on with after its fork point, the one it goes on with
	// unless told first; the form lets a person pick only when there are two or more.
	Models []web.ModelInfo
}

// AgentInspector returns the inspector panel content for agent name of tr (GET
// /runs/:id/inspector?agent=NAME), or an error with traces.CodeNotFound when tr has no such agent.
// Its model calls are priced by p (nil: no money).
func AgentInspector(tr traces.Trace, name string, p prices.Table) (templ.Component, error) {
	s, err := web.NewAgentSummary(tr, name, web.WithPrices(p))
	if err != nil {
		return nil, err
	}
	return AgentPanel(s), nil
}

// AgentPanel is AgentInspector's panel for s.
func AgentPanel(s web.AgentSummary) templ.Component { return agentSummary(s) }

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
