package record

import "strings"

// visits are the run's agent visits, in the order they started. Their callers hold the
// recorder's lock.
type visits struct {
	root  *visit // the run's first
	order []*visit
}

// add adds v, started last.
func (vs *visits) add(v *visit) {
	if vs.root == nil {
		vs.root = v
	}
	vs.order = append(vs.order, v)
}

// rootDrained reports whether the root visit's copy of events has been read to its end, so has
// the run's (true before any visit: a run that failed before any agent started).
func (vs *visits) rootDrained() bool { return vs.root == nil || vs.root.drained }

// inside returns the visits started directly inside outer so far.
func (vs *visits) inside(outer *visit) []*visit {
	var in []*visit
	for _, v := range vs.order {
		if v.parent == outer {
			in = append(in, v)
		}
	}
	return in
}

// openInside reports whether a visit started directly inside v has not finished.
func (vs *visits) openInside(v *visit) bool {
	for _, c := range vs.order {
		if c.parent == v && !c.closed {
			return true
		}
	}
	return false
}

// iteration returns which iteration of its loop v is (1 for the first), or 0 when no loop runs
// it: each iteration starts every step of the loop once more.
func (vs *visits) iteration(v *visit) int {
	if v.parent == nil || v.parent.kind != "Loop" {
		return 0
	}
	n := 0
	for _, o := range vs.order {
		if o.parent == v.parent && o.agent == v.agent {
			n++
		}
	}
	return n
}

// workingBesides reports whether a visit other than v has its runnable's work going on.
func (vs *visits) workingBesides(v *visit) bool {
	for _, o := range vs.order {
		if o != v && o.runnable && !o.runnableEnded {
			return true
		}
	}
	return false
}

// under returns the visits whose run path is path or goes on below it.
func (vs *visits) under(path []string) []*visit {
	prefix := pathKey(path)
	var in []*visit
	for _, v := range vs.order {
		if key := pathKey(v.path); key == prefix || strings.HasPrefix(key, prefix+">") {
			in = append(in, v)
		}
	}
	return in
}

// latest returns the latest visit of agent, or nil.
func (vs *visits) latest(agent string) *visit {
	for i := len(vs.order) - 1; i >= 0; i-- {
		if v := vs.order[i]; v.agent == agent {
			return v
		}
	}
	return nil
}

// latestAnswering returns the latest visit whose latest reply is the JSON value js, or nil.
func (vs *visits) latestAnswering(js string) *visit {
	for i := len(vs.order) - 1; i >= 0; i-- {
		if v := vs.order[i]; v.answered(js) {
			return v
		}
	}
	return nil
}
