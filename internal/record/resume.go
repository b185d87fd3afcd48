package record

import (
	"context"
	"slices"
	"sync"
	"time"
	"weak"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/compose"

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
//
// Within one process the part before may still be on its way to the destination when the resumed
// part starts (an app that resumes the moment it sees the interrupt): the resumed part's sink then
// follows that part's, and reaches the destination only after it (see stops and follower).

// viaResume is the via of an agent eino starts again on the way to the interrupt it resumes.
const viaResume = "resume"

// resumes records the start of a resumed part: the resumed event, the restored session as seen,
// and, when the part that stopped at the interrupt was recorded in this process, that this part's
// sink follows that part's. Callers hold r.mu.
func (r *Recorder) resumes(ctx context.Context, rootAgent string, info *adk.ResumeInfo) {
	interrupt := interruptOf(info.InterruptInfo)
	if prev := stops.claim(interrupt.ID); prev != nil {
		if f, ok := r.out.sink.(follower); ok {
			f.follow(prev)
		}
	}
	r.session.restore(adk.GetSessionValues(ctx))
	r.out.emit(&traces.Event{Kind: traces.KindResumed, Agent: rootAgent, Interrupt: interrupt})
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

// stopped notes that the run stopped at the interrupt err carries, when it is one: a resume of
// it in this process then follows this run's sink. It is called where the interrupt surfaces in
// callbacks, at the end of the interrupted agent's runnable, before eino hands the interrupt to
// the app (which may resume at once). Callers hold r.mu.
func (r *Recorder) stopped(err error) {
	info, ok := compose.ExtractInterruptInfo(err)
	if !ok || info == nil {
		return
	}
	for _, c := range info.InterruptContexts {
		if c != nil && c.IsRootCause {
			r.stoppedAt(c.ID)
		}
	}
}

// stoppedAt notes that the run stopped at interrupt id: from its runnable's end (see stopped), or
// from the interrupted event, for an agent that interrupts without a runnable. Callers hold r.mu.
func (r *Recorder) stoppedAt(id string) { stops.put(id, r.out.sink) }

// follower is a Sink that can record the resumed part of a run whose part before went to prev,
// reaching its destination after it.
type follower interface {
	follow(prev Sink)
}

// stopRegistry holds, by interrupt id, the sinks of this process's runs that stopped at an
// interrupt, for a resume in this process to follow while they are still on their way. It holds
// them weakly: once a part is delivered and its recorder done with it, nothing is left to follow
// (the resume finds that part at the destination), and the process keeps no trace of it. It
// remembers the newest maxStops ids.
type stopRegistry struct {
	mu    sync.Mutex
	sinks map[string]func() Sink // the sink, while it is alive
	order []string               // ids, oldest first
}

// maxStops bounds the interrupt ids stops remembers.
const maxStops = 1024

var stops = &stopRegistry{sinks: make(map[string]func() Sink)}

// put remembers that the run recorded to sink stopped at interrupt id, when sink is one that a
// resumed part can follow.
func (s *stopRegistry) put(id string, sink Sink) {
	var alive func() Sink
	switch k := sink.(type) {
	case *remoteRun:
		alive = weakly(k)
	case *fileRun:
		alive = weakly(k)
	}
	if id == "" || alive == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sinks[id]; !ok {
		s.order = append(s.order, id)
	}
	s.sinks[id] = alive
	for len(s.order) > maxStops {
		delete(s.sinks, s.order[0])
		s.order = s.order[1:]
	}
}

// weakly returns a function that returns sink while something else holds it, then nil.
func weakly[T any, PT interface {
	*T
	Sink
}](sink PT) func() Sink {
	p := weak.Make((*T)(sink))
	return func() Sink {
		if v := p.Value(); v != nil {
			return PT(v)
		}
		return nil
	}
}

// claim returns and forgets the sink of the run that stopped at interrupt id, or nil when there
// is none in this process or it is no longer on its way.
func (s *stopRegistry) claim(id string) Sink {
	s.mu.Lock()
	defer s.mu.Unlock()
	alive, ok := s.sinks[id]
	if !ok {
		return nil
	}
	delete(s.sinks, id)
	s.order = slices.DeleteFunc(s.order, func(o string) bool { return o == id })
	return alive()
}

// followWait bounds how long a resumed part's sender waits for the part before to be delivered:
// normally milliseconds, as long as Baton takes to answer; more means that part is stuck, and the
// resumed part goes on without it.
const followWait = 10 * time.Second

// follow makes s, a resumed part's run, register with the server only once prev, the part before
// sent by the same client, has been delivered to its end: the server joins a resume to the run
// that ended at its interrupt, and that end must be there first.
func (s *remoteRun) follow(prev Sink) {
	p, ok := prev.(*remoteRun)
	if !ok || p.c != s.c {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.after = p.senderDone
}

// awaitPredecessor waits until the run s follows, if any, has been delivered, or followWait has
// passed; it reports false when the client stops meanwhile.
func (s *remoteRun) awaitPredecessor() bool {
	s.mu.Lock()
	after := s.after
	s.mu.Unlock()
	if after == nil {
		return true
	}
	t := time.NewTimer(followWait)
	defer t.Stop()
	select {
	case <-after:
	case <-t.C:
	case <-s.c.stop.Done():
		return false
	}
	return true
}
