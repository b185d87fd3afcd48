package web

import (
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// FlowInfo is one flow of the catalogue as the index page shows it: the server fills it from
// agents.Flow so that web does not import eino.
type FlowInfo struct {
	Name         string
	Title        string
	Description  string
	DefaultInput string
	// InputNote, when set, says next to the input box that the answers do not (fully) follow it.
	InputNote string
	Agents    []traces.Agent
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
	Flows  []FlowInfo
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
}

// NewRunRows returns the rows of runs as of now.
func NewRunRows(runs []live.RunSummary, now time.Time) []RunRow {
	rows := make([]RunRow, len(runs))
	for i, r := range runs {
		end := now
		if r.EndedAt != nil {
			end = *r.EndedAt
		}
		rows[i] = RunRow{RunSummary: r, DurationText: Clock(max(0, end.Sub(r.StartedAt))), TokensText: compact(r.Tokens)}
	}
	return rows
}
