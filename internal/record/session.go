package record

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/traces"
)

// session is what the recorder last saw of the run's session values, and where it looks at them
// at the run's end. Its callers hold the recorder's lock.
type session struct {
	// seen holds each value last seen, as JSON, with the value itself when it is a plain string,
	// number or bool: equal to it, a value needs no encoding to tell it has not changed.
	seen map[string]seenValue
	ctx  context.Context // a context that carries the run's session: its first visit's
}

type seenValue struct {
	json  string
	plain any
}

func newSession() session { return session{seen: make(map[string]seenValue)} }

// seenOf is v as the session remembers a value seen.
func seenOf(v any) seenValue {
	seen := seenValue{json: jsonValue(v)}
	switch v.(type) {
	case string, bool, int, int64, float64:
		seen.plain = v
	}
	return seen
}

// restore takes values as seen: a resume's session, which the part before recorded.
func (s *session) restore(values map[string]any) {
	for k, v := range values {
		s.seen[k] = seenOf(v)
	}
}

// unchanged reports whether v is the plain value last seen under key.
func (s *session) unchanged(key string, v any) bool {
	seen, ok := s.seen[key]
	if !ok || seen.plain == nil {
		return false
	}
	switch v.(type) {
	case string, bool, int, int64, float64:
		return v == seen.plain
	}
	return false
}

// sessionRef is where eino keeps the session values a visit's callbacks read, and their lock.
type sessionRef struct {
	values map[string]any
	lock   *sync.Mutex
}

// empty reports whether s is known, and holds no values.
func (s sessionRef) empty() bool {
	if s.lock == nil {
		return false // not known yet
	}
	s.lock.Lock()
	n := len(s.values)
	s.lock.Unlock()
	return n == 0
}

// sessionOf is sessionValues for a callback of visit v (nil for none), which finds the session
// in its context at its first read: an agent's run context, and so its session, is the same
// for all its work (inside an AgentTool, eino's session of the callee shares the caller's values
// and lock), and the walk up a tool's context to eino's run context was a tenth of the
// recorder's own work. Callers hold r.mu.
func sessionOf(ctx context.Context, v *visit) (map[string]any, *sync.Mutex) {
	if v == nil {
		return sessionValues(ctx)
	}
	if v.session.lock == nil {
		values, lock := sessionValues(ctx)
		if lock == nil {
			return values, nil // a copy: read again next time
		}
		v.session = sessionRef{values, lock}
	}
	return v.session.values, v.session.lock
}

// diffSession records every session value that changed since the last look, noticed from a
// callback of visit v (nil at the run's end). Callers hold r.mu.
//
// No event announces a change, so the value is credited to whoever set it, not to whoever
// noticed: an agent whose OutputKey it is (declared, or learned before); else, when byWork, v,
// whose work just ended and made the change; else an agent whose latest reply is exactly the
// value (eino stores a reply under OutputKey after the agent's work, so only a later callback
// sees it: that agent's OutputKey is then learned); else v, whose callback saw it first.
func (r *Recorder) diffSession(ctx context.Context, v *visit, byWork bool) {
	if v != nil && v.session.empty() {
		return // the common case, after every tool call: no walk to the values, nothing to compare
	}
	r.recordSets(r.sessionChanges(ctx, v, byWork))
}

// sessionSet is a change of a session value to the JSON value js, set by setter (nil: unknown).
type sessionSet struct {
	key, js string
	setter  *visit
}

// sessionChanges returns, as diffSession records them, the values changed since the last look,
// and notes them as seen. Callers hold r.mu.
func (r *Recorder) sessionChanges(ctx context.Context, v *visit, byWork bool) []sessionSet {
	if ctx == nil {
		return nil
	}
	sets := r.session.changes(sessionOf(ctx, v))
	for i := range sets {
		sets[i].setter = r.setterOf(sets[i].key, sets[i].js, v, byWork)
	}
	return sets
}

// changes returns the session values, as eino keeps them under lock (nil: values are a copy),
// that changed since the last look, in the order of their keys and without their setters, and
// notes them as seen.
func (s *session) changes(values map[string]any, lock *sync.Mutex) []sessionSet {
	if lock != nil {
		lock.Lock()
	}
	if len(values) == 0 { // no values yet (most runs, at most callbacks): nothing to walk
		if lock != nil {
			lock.Unlock()
		}
		return nil
	}
	changed := false
	for k, v := range values {
		if changed = !s.unchanged(k, v); changed {
			break
		}
	}
	if lock != nil {
		if changed {
			values = maps.Clone(values) // what changed is read after eino's lock is let go
		}
		lock.Unlock()
	}
	if !changed {
		return nil // the common case, spared copying the values and sorting the keys
	}
	var sets []sessionSet
	for _, k := range slices.Sorted(maps.Keys(values)) {
		js, changed := s.changedValue(k, values[k])
		if !changed {
			continue
		}
		sets = append(sets, sessionSet{key: k, js: js})
	}
	return sets
}

// recordSets records sets, in order. Callers hold r.mu.
func (r *Recorder) recordSets(sets []sessionSet) {
	for _, s := range sets {
		r.recordSet(s.key, s.js, s.setter)
	}
}

// noticeOutput records the value eino stored under v's OutputKey, if it did, as set by v: eino
// stores an agent's answer (setOutputToSession in adk/chatmodel.go) after its runnable has
// returned and before its events end, where no callback fires. It is called where that is over and
// nothing after v has begun: at the end of v's events, or, when v transferred, as the target
// starts. Only v's own output is recorded: a parallel branch may be setting other values at this
// very moment, which the next callback that looks records. Callers hold r.mu.
func (r *Recorder) noticeOutput(v *visit) {
	if v.startCtx == nil {
		return
	}
	values := adk.GetSessionValues(v.startCtx)
	for _, k := range slices.Sorted(maps.Keys(values)) {
		if r.session.unchanged(k, values[k]) {
			continue
		}
		js := jsonValue(values[k])
		owner := r.tree.outputKeyOwner(k)
		if owner != v.agent && (owner != "" || !v.answered(js)) {
			continue
		}
		if _, changed := r.session.changedValue(k, values[k]); changed {
			r.learnOutputKey(v, k)
			r.recordSet(k, js, v)
		}
	}
}

// changedValue notes the value under key as seen and returns it as JSON, with whether it changed
// since the last look.
func (s *session) changedValue(key string, value any) (string, bool) {
	if s.unchanged(key, value) {
		return "", false
	}
	seen := seenOf(value)
	changed := s.seen[key].json != seen.json
	s.seen[key] = seen
	return seen.json, changed
}

// recordSet records that setter (nil: unknown, then whoever acted last) set key to the JSON value
// js. Callers hold r.mu.
func (r *Recorder) recordSet(key, js string, setter *visit) {
	agent, path := r.out.lastAgent, r.out.lastPath
	if setter != nil {
		agent, path = setter.agent, setter.path
	}
	r.out.emit(&traces.Event{Kind: traces.KindSessionSet, Agent: agent, RunPath: path,
		Session: &traces.SessionSet{Key: key, Value: json.RawMessage(js), SetBy: agent}})
	r.queueStop(Stop{Break: traces.BreakSession, Agent: agent, Target: key, Value: json.RawMessage(js), Detail: agent + " set the session value " + key + " to " + clip(js, 200)})
}

// setterOf returns the visit that set key to the JSON value js, as diffSession explains.
// Callers hold r.mu.
func (r *Recorder) setterOf(key, js string, noticer *visit, byWork bool) *visit {
	if owner := r.tree.outputKeyOwner(key); owner != "" {
		if v := r.visits.latest(owner); v != nil {
			return v
		}
		return noticer
	}
	if byWork && noticer != nil {
		return noticer
	}
	if v := r.visits.latestAnswering(js); v != nil {
		r.learnOutputKey(v, key)
		return v
	}
	return noticer
}

// answered reports whether v's latest reply is the JSON value js, as eino stores an answer under
// an OutputKey.
func (v *visit) answered(js string) bool { return v.lastReply != "" && jsonValue(v.lastReply) == js }

// learnOutputKey notes in the tree that v's agent answers into key. Callers hold r.mu.
func (r *Recorder) learnOutputKey(v *visit, key string) {
	if r.tree.outputKeyOwner(key) == "" {
		r.tree.setOutputKey(v.agent, key)
		r.putAgents()
	}
}
