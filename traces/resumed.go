package traces

import (
	"slices"
	"strconv"
	"strings"
)

// A resumed part is recorded by whoever resumed the run (in the app's process or another one),
// knowing nothing of the part before but the interrupt it resumes: it numbers its model calls from
// m1 again and describes the agent tree as its part shows it. The recording holds the whole run,
// so it is where the resumed part joins it (see Recording.Resume):
//   - model call ids of the form m<N> go on from the highest one the run used before;
//   - an agent put again is merged into the one the run knows: what the run already says of it
//     stays, what it lacked is filled in, and a parent that would close a cycle is not taken.

// resumedPart is what a recording needs to join a resumed part to the run; the zero value joins
// nothing (a run that never resumed).
type resumedPart struct {
	joining bool // the run has resumed at least once: put agents are merged
	models  int  // the highest model call number before the latest resume
}

// startResumedPart prepares the join of the part that starts now. The caller holds r.mu.
func (r *Recording) startResumedPart() {
	r.resumed.joining = true
	r.resumed.models = 0
	for _, e := range r.events.all(r.events.locs) { // a run that ended: nothing is being emitted
		if m := e.Model; m != nil {
			r.resumed.models = max(r.resumed.models, modelNumber(m.ID))
		}
	}
}

// joinEvent makes e's model call id the run's. The caller holds r.mu.
func (r *Recording) joinEvent(e *Event) {
	if e.Model == nil || r.resumed.models == 0 {
		return
	}
	if n := modelNumber(e.Model.ID); n > 0 {
		m := *e.Model // e's payload is the caller's: never changed in place
		m.ID = "m" + strconv.Itoa(r.resumed.models+n)
		e.Model = &m
	}
}

// modelNumber is N of a model call id mN, or 0 for any other id.
func modelNumber(id string) int {
	digits, ok := strings.CutPrefix(id, "m")
	if !ok || digits == "" || digits[0] == '0' {
		return 0
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// joinAgent returns a as the run knows it once merged into known, the agent of its name the run
// knew; agents holds the whole tree, to refuse a parent that would make a cycle.
func joinAgent(known, a Agent, agents []Agent) Agent {
	out := known
	if out.Description == "" {
		out.Description = a.Description
	}
	if (out.Kind == "" || out.Kind == AgentCustom) && a.Kind != "" {
		out.Kind = a.Kind
	}
	if len(out.Tools) == 0 {
		out.Tools = a.Tools
	}
	if out.OutputKey == "" {
		out.OutputKey = a.OutputKey
	}
	if out.Parent == "" && a.Parent != "" && !isBelow(agents, a.Parent, a.Name) {
		out.Parent, out.Relation = a.Parent, a.Relation
	}
	return out
}

// isBelow reports whether agent name is ancestor or below it in agents: making name the parent
// of ancestor would close a cycle.
func isBelow(agents []Agent, name, ancestor string) bool {
	for seen := 0; seen <= len(agents); seen++ {
		if name == ancestor {
			return true
		}
		i := slices.IndexFunc(agents, func(a Agent) bool { return a.Name == name })
		if i < 0 || agents[i].Parent == "" {
			return false
		}
		name = agents[i].Parent
	}
	return true // a cycle already: take nothing more
}
