package web

import (
	"slices"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// FlowInfo is one flow of the catalogue as the index page shows it: the server fills it from
// agents.Flow so that web does not import eino.
type FlowInfo struct {
	Name         string
	Title        string
	Group        string // what the flow shows ("Handoff by transfer")
	Plain        string // that, in plain words, shown before Description's API names
	Description  string
	DefaultInput string
	// InputNote, when set, says next to the input box that the answers do not (fully) follow it.
	InputNote string
	Agents    []traces.Agent
}

// FlowGroup is a group of the catalogue: its name, what its flows have in common, and (filled
// by GroupedFlows) its flows.
type FlowGroup struct {
	Name, Plain string
	Flows       []FlowInfo
}

// GroupedFlows returns idx's groups with their flows, leaving out the Start flow and empty
// groups; flows of no known group come last, under "Other flows".
func (idx Index) GroupedFlows() []FlowGroup {
	out := make([]FlowGroup, 0, len(idx.Groups)+1)
	at := make(map[string]int, len(idx.Groups))
	for _, g := range idx.Groups {
		at[g.Name] = len(out)
		out = append(out, FlowGroup{Name: g.Name, Plain: g.Plain})
	}
	for _, f := range idx.Flows {
		if f.Name == idx.Start {
			continue
		}
		i, ok := at[f.Group]
		if !ok {
			i, ok = at[""]
			if !ok {
				i, at[""] = len(out), len(out)
				out = append(out, FlowGroup{Name: "Other flows"})
			}
		}
		out[i].Flows = append(out[i].Flows, f)
	}
	return slices.DeleteFunc(out, func(g FlowGroup) bool { return len(g.Flows) == 0 })
}

// StartFlow returns the Start flow, if the catalogue has it.
func (idx Index) StartFlow() (FlowInfo, bool) {
	for _, f := range idx.Flows {
		if f.Name == idx.Start && idx.Start != "" {
			return f, true
		}
	}
	return FlowInfo{}, false
}

// ModelInfo is a chat model a run may pick, as the index page offers it.
type ModelInfo struct {
	Spec    string // "scripted", "openai:gpt-4o-mini", "replay:t.json"
	Problem string // why runs cannot use it yet (what to set), "" when they can
	Flow    string // the only flow it runs (a replay), "" for any
}

// Index is what the index page draws: the flows one can start, the models they may run on, and one page of the runs the
// query selects, newest first (the caller's order is kept).
type Index struct {
	Flows []FlowInfo // as the server lists them; GroupedFlows groups them
	// Groups are the flows' groups in order, with what their flows have in common; Start names
	// the flow a newcomer should run first, shown on its own above them.
	Groups []FlowGroup
	Start  string
	Models []ModelInfo // the models a run may pick, the default first
	Runs   []RunRow
	// Query is the list's filters, as the form shows them.
	Query live.RunQuery
	// Next is the query string of the next page ("flow=...&after=..."), "" on the last one.
	Next string
}

// RunRow is one run of the index page's list.
type RunRow struct {
	live.RunSummary
	DurationText string // how long it ran, or has run so far: "00:04.2"
	TokensText   string // 950, 1.2k, 34k
	CostText     string // what the tokens cost (RunCost): "" when unknown
}

// NewRunRows returns the rows of runs as of now, priced as opts say.
func NewRunRows(runs []live.RunSummary, now time.Time, opts ...Option) []RunRow {
	rows := make([]RunRow, len(runs))
	for i, r := range runs {
		end := now
		if r.EndedAt != nil {
			end = *r.EndedAt
		}
		rows[i] = RunRow{RunSummary: r, DurationText: Clock(max(0, end.Sub(r.StartedAt))), TokensText: compact(r.Tokens)}
		_, rows[i].CostText, _ = RunCost(r, opts...)
	}
	return rows
}

// RunCost is what a listed run's model calls cost under opts' prices, each call by the model it
// named (see WithPrices): in dollars, and as the pages write it. ok is false, with no money,
// when a call's model has no price (the text names it: "no price for gpt-5"), or the run was
// stored before stores kept its usage.
func RunCost(r live.RunSummary, opts ...Option) (usd float64, text string, ok bool) {
	if r.Usage == nil {
		return 0, "", false
	}
	p := pricingOf(r.Run, opts)
	sum := p.Sum()
	for _, u := range r.Usage {
		sum.Add(p.Call(u.Model), u.Prompt, u.Completion)
	}
	if usd, ok = sum.Cost(); !ok {
		return 0, sum.Text(), false
	}
	return usd, sum.Text(), true
}
