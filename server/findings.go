package server

import (
	"context"
	"reflect"
	"slices"
	"time"

	"github.com/baton-dev/baton/internal/lint"
	"github.com/baton-dev/baton/templates"
)

// lintEvery is how often, at most, a running run is linted again: the linter reads the whole run,
// so a fast run is not linted at every render. A run that has ended is linted at once.
const lintEvery = time.Second

// findings returns the handoff findings of the feed's run as it stands, linting it when it has
// news since the last time.
func (f *feed) findings() []lint.Finding {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lintLocked(true)
	return f.linted
}

// lintLocked lints the run when it has news since the last time, and, unless now, when a second
// has passed or the run has ended. It reports whether the findings changed. The caller holds f.mu.
func (f *feed) lintLocked(now bool) bool {
	head := f.view.Seq()
	if head == f.lintedAt || !now && !f.view.Status().Ended() && time.Since(f.lintTime) < lintEvery {
		return false
	}
	found := lint.Check(f.view.Trace(), lint.Config{})
	f.lintTime, f.lintedAt = time.Now(), head
	if slices.EqualFunc(found, f.linted, func(a, b lint.Finding) bool { return reflect.DeepEqual(a, b) }) {
		return false
	}
	f.linted = found
	return true
}

// findingsPartLocked adds the findings' fragment to the parts the live page gets when the run's
// findings changed. The caller holds f.mu.
func (f *feed) findingsPartLocked(ctx context.Context) error {
	if !f.lintLocked(false) {
		return nil
	}
	data, err := templates.EncodeFindings(ctx, f.linted)
	if err != nil {
		return err
	}
	p := part{target: templates.FindingsTarget, json: data, at: f.view.Seq()}
	if i := slices.IndexFunc(f.parts, func(q part) bool { return q.target == p.target }); i >= 0 {
		f.parts[i] = p
	} else {
		f.parts = append(f.parts, p)
	}
	return nil
}
