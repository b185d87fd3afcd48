package attach

import (
	"context"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/traces"
)

// A resume is the rest of a run that stopped at an interrupt, and Baton tells it as one story with
// the part before: whatever the timing, in this process or another.
//
// The recorder of the resumed part knows only what eino shows it: the interrupt's id, in the
// ResumeInfo of every agent eino starts again. So it records its part on its own (model calls
// numbered from m1, the tree as its part shows it), and the destination, which holds the part
// before, joins the two: the run's Recording numbers the resumed part's model calls on and merges
// its tree into the run's (see traces.Recording.Resume), and the server reopens the run that
// stopped at that interrupt (POST /api/ingest with "resumes"). That is exact in any process,
// because the destination has the whole run.
//
// Two things only the recorder can do:
//   - eino starts every agent on the interrupt's address again (flowAgent.Resume), each with
//     ResumeInfo: these are pass-through re-entries, recorded via "resume", placed in the tree as
//     a transfer along that address would place them, and nothing waits for a transfer that will
//     not come (see agentStarted);
//   - the session eino restored from the checkpoint is what the part before recorded last: it is
//     taken as seen, not recorded again (see resumes). Values the app adds with
//     adk.WithSessionValues on the resume itself are taken as seen too: nothing tells them apart.

// viaResume is the via of an agent eino starts again on the way to the interrupt it resumes.
const viaResume = "resume"

// resumes records the start of a resumed part: the resumed event, and the restored session as
// seen. Callers hold r.mu.
func (r *Recorder) resumes(ctx context.Context, rootAgent string, info *adk.ResumeInfo) {
	for k, v := range adk.GetSessionValues(ctx) {
		r.session[k] = seenOf(v)
	}
	r.emit(traces.Event{Kind: traces.KindResumed, Agent: rootAgent, Interrupt: interruptOf(info.InterruptInfo)})
}

// seenOf is v as the session remembers a value seen (see session).
func seenOf(v any) seenValue {
	seen := seenValue{json: jsonValue(v)}
	switch v.(type) {
	case string, bool, int, int64, float64:
		seen.plain = v
	}
	return seen
}

// reenter places v, an agent eino started again on the way to the interrupt, in the tree: below
// the agent before it on the interrupt's address, unless that one is below it (a transfer back
// up), as the transfer that first brought control there placed it. Callers hold r.mu.
func (r *Recorder) reenter(v *visit, at place) {
	path := collapse(at.path)
	if len(path) < 2 {
		return
	}
	r.tree.transfer(path[len(path)-2], v.agent)
}
