package live

import (
	"encoding/json"
	"fmt"

	"github.com/baton-dev/baton/traces"
)

// What a database store (internal/sqlite, internal/postgres) keeps of a run besides its events,
// and how it ends a run a stopped server left running: one form for every store, so that a run
// reads back alike from each.

// StoredMeta returns the stored forms of run and agents (nil for nil agents).
func StoredMeta(run traces.Run, agents []traces.Agent) (meta, tree []byte, err error) {
	if meta, err = json.Marshal(run); err != nil {
		return nil, nil, fmt.Errorf("save run %s: %w", run.ID, err)
	}
	if agents != nil {
		if tree, err = json.Marshal(agents); err != nil {
			return nil, nil, fmt.Errorf("save run %s: %w", run.ID, err)
		}
	}
	return meta, tree, nil
}

// StoredEnd is run's end as stored: Unix nanoseconds, or NULL (nil) while it runs.
func StoredEnd(run traces.Run) any {
	if run.EndedAt == nil {
		return nil
	}
	return run.EndedAt.UnixNano()
}

// InterruptedByStop is the error of a run that was going on when Baton stopped.
const InterruptedByStop = "Baton stopped while this run was going on; the trace ends with the last event it had saved"

// StoppedEnd is what a store saves to end tr, a run a stopped server left running, at its last
// saved event: the run.finished, interrupted with InterruptedByStop, and the run with its tally
// after it.
func StoppedEnd(tr traces.Trace) (run traces.Run, tally Tally, end traces.Event) {
	for _, e := range tr.Events {
		tally.Add(e)
	}
	at := tr.Run.StartedAt
	if n := len(tr.Events); n > 0 {
		at = tr.Events[n-1].Time
	}
	end = traces.Event{Seq: tally.Events + 1, Time: at, Kind: traces.KindRunFinished,
		Run: &traces.RunMark{Status: traces.StatusInterrupted, Error: InterruptedByStop}}
	tally.Add(end)
	return tally.Apply(tr.Run), tally, end
}

// StoredUsage is a tally's Usage as a database stores it: JSON.
func StoredUsage(t Tally) []byte {
	u := t.Usage
	if u == nil {
		u = []ModelTokens{}
	}
	b, _ := json.Marshal(u) // a slice of plain structs always marshals
	return b
}

// ParseUsage reads what StoredUsage wrote; nil (a row stored before Usage was) is nil.
func ParseUsage(b []byte) ([]ModelTokens, error) {
	if b == nil {
		return nil, nil
	}
	u := []ModelTokens{}
	if err := json.Unmarshal(b, &u); err != nil {
		return nil, fmt.Errorf("read a run's usage: %w", err)
	}
	return u, nil
}
