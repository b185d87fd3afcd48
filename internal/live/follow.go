package live

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-dev/baton/traces"
)

// Tailer is a Store that other servers write too (internal/postgres): a broker follows the runs
// they record in it by reading, each time one of their commits is announced (Broker.Committed)
// or a while has passed, the events after the ones it has.
type Tailer interface {
	// Tail returns run id as one snapshot of the store shows it: its metadata and agents, and
	// its events with Seq > after, in order, decoded by dec, which has decoded the run's events
	// through after (a new decoder for after 0). Nothing is decoded when it fails.
	Tail(id string, dec *traces.EventDecoder, after int64) (traces.Trace, error)
}

// DefaultFollowCheck is how often a followed run is read again without an announcement: the
// delay of its viewers when an announcement was missed (a lost connection to the database).
const DefaultFollowCheck = 2 * time.Second

// waitingChecks is how many times less often a followed run that ended interrupted is read
// without an announcement, while it waits to be resumed (by a person's decision, or its app):
// perhaps never, and the broker may hold hundreds of them.
const waitingChecks = 15

// following is a run another server records, which this broker follows: its recording is fed
// from the store, in order, each event once.
type following struct {
	rec  *traces.Recording
	dec  *traces.EventDecoder // has decoded the events through last
	last atomic.Int64         // the seq of the last event fed
	wake chan struct{}        // an announcement of events after last; buffered, never closed
	quit chan struct{}        // closed when the broker takes the run over (see TakeOver)
	done chan struct{}        // closed when its goroutine has returned
}

// follower is what a broker needs to follow runs: see Follow.
type follower struct {
	tail  Tailer
	every time.Duration
	stop  chan struct{} // closed by Close
	once  sync.Once
	runs  sync.WaitGroup
	// by run id, guarded by the broker's mu
	followed map[string]*following
}

// Follow makes b follow the runs that other servers are recording in its store, which t reads
// (t is usually that store): from then on Get returns, for such a run, a recording that goes on
// as they commit its events, until its end is committed, fed in order and each event once.
// Call Committed for each commit announced (a missed one delays the run's viewers by every at
// most; DefaultFollowCheck when every <= 0). Close stops following. Call it before Get.
func (b *Broker) Follow(t Tailer, every time.Duration) {
	if every <= 0 {
		every = DefaultFollowCheck
	}
	b.follow = &follower{tail: t, every: every, stop: make(chan struct{}), followed: make(map[string]*following)}
}

// Committed tells b that another server has committed run id's events through seq: a run it
// follows reads them. It never blocks, and ignores runs b does not follow.
func (b *Broker) Committed(id string, seq int64) {
	if b.follow == nil {
		return
	}
	b.mu.RLock()
	f := b.follow.followed[id]
	b.mu.RUnlock()
	if f == nil || seq <= f.last.Load() {
		return
	}
	select {
	case f.wake <- struct{}{}:
	default: // a read is due already: it reads this commit too
	}
}

// Follows reports whether b follows run id: another server sharing its store is recording it
// (see Follow), and b has not seen its end yet, or has seen it end interrupted (it may go on).
func (b *Broker) Follows(id string) bool {
	if b.follow == nil {
		return false
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.follow.followed[id] != nil
}

// getFollowed is Get of a run the broker does not hold, with Follow: the run as stored, followed
// when it is still going on.
func (b *Broker) getFollowed(id string) (*traces.Recording, error) {
	dec := traces.NewEventDecoder()
	tr, err := b.follow.tail.Tail(id, dec, 0)
	if err != nil {
		return nil, err
	}
	if st := tr.Run.Status; st.Ended() && st != traces.StatusInterrupted {
		return b.hold(traces.NewRecordingOf(tr)), nil
	}
	// Running, or interrupted: followed, so that its viewers here see it go on when it is
	// resumed, wherever it is.
	f := newFollowing(tr.Run, dec)
	if _, err := f.feed(tr); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if rec, ok := b.runs[id]; ok { // got meanwhile
		return rec, nil
	}
	select {
	case <-b.follow.stop: // closed: what is committed so far, as a run loaded from a file
		return traces.NewRecordingOf(f.rec.Snapshot()), nil
	default:
	}
	b.runs[id] = f.rec
	b.added = append(b.added, id)
	b.follow.followed[id] = f
	// What was committed since tr was read was announced to no follower: read it at once.
	f.wake <- struct{}{}
	b.follow.runs.Add(1)
	go b.followRun(f)
	return f.rec, nil
}

func newFollowing(run traces.Run, dec *traces.EventDecoder) *following {
	return &following{rec: traces.NewRecording(run, nil), dec: dec, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// hold keeps rec, a run loaded from the store that has ended, unless the broker got the run
// meanwhile, and returns the one it holds.
func (b *Broker) hold(rec *traces.Recording) *traces.Recording {
	b.mu.Lock()
	defer b.mu.Unlock()
	if held, ok := b.runs[rec.ID()]; ok {
		return held
	}
	b.runs[rec.ID()] = rec
	b.added = append(b.added, rec.ID())
	b.forget()
	return rec
}

// followRun feeds f's recording from the store on each announcement and every follow.every
// until the run's end is fed or the broker closes. A run that ends interrupted goes on being
// followed, checked every waitingChecks times follow.every, while the broker holds it: when it is
// resumed (by its server or by another one), its recording reopens and goes on, and its viewers
// here with it.
func (b *Broker) followRun(f *following) {
	defer b.follow.runs.Done()
	defer close(f.done)
	id := f.rec.ID()
	t := time.NewTicker(b.follow.every)
	defer t.Stop()
	failing, waiting := false, false
	for {
		select {
		case <-b.follow.stop:
			return
		case <-f.quit:
			return
		case <-f.wake:
		case <-t.C:
		}
		if waiting && b.forgotten(f) { // while it waited: Get reads it anew
			return
		}
		tr, err := b.follow.tail.Tail(id, f.dec, f.last.Load())
		ended := false
		if err == nil {
			ended, err = f.feed(tr)
		}
		switch {
		case err != nil && traces.ErrorCode(err) == traces.CodeUnavailable:
			if !failing {
				b.log.Warn("cannot follow a run another server records; trying again", "run", id, "cause", traces.ErrorMessage(err))
			}
			failing = true
			continue
		case err != nil: // deleted, or damaged: read it anew on the next Get
			b.log.Error("stopped following a run another server records", "run", id, "err", err)
		case ended && f.rec.Run().Status == traces.StatusInterrupted:
			failing = false
			if !waiting {
				waiting = true
				t.Reset(b.follow.every * waitingChecks)
			}
			continue
		case !ended:
			failing = false
			if waiting {
				waiting = false
				t.Reset(b.follow.every)
			}
			continue
		}
		b.mu.Lock()
		b.unfollowLocked(f)
		if b.runs[id] == f.rec && err != nil {
			b.unholdLocked(id)
		}
		b.forget()
		b.mu.Unlock()
		return
	}
}

// forgotten reports whether b no longer holds f's recording (see forget), and then stops
// following it.
func (b *Broker) forgotten(f *following) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.runs[f.rec.ID()] == f.rec {
		return false
	}
	b.unfollowLocked(f)
	return true
}

// unfollowLocked forgets f, unless the run is followed anew already. The caller holds b.mu.
func (b *Broker) unfollowLocked(f *following) {
	if id := f.rec.ID(); b.follow.followed[id] == f {
		delete(b.follow.followed, id)
	}
}

// unfollowRun stops following run id, when b follows it with the recording rec, and waits for
// its follower to end: b records the run from now on (Resume). The caller does not hold b.mu.
func (b *Broker) unfollowRun(id string, rec *traces.Recording) {
	if b.follow == nil {
		return
	}
	b.mu.Lock()
	f := b.follow.followed[id]
	if f == nil || f.rec != rec {
		b.mu.Unlock()
		return
	}
	delete(b.follow.followed, id)
	b.mu.Unlock()
	close(f.quit)
	<-f.done
}

// feed records tr's agents, then its events, which follow the ones fed so far: a run.finished
// that is the last of them ends the recording (one before a resumed is recorded as it is), and
// events after the end of a run that ended interrupted reopen it (it was resumed). It reports
// whether the run has ended.
func (f *following) feed(tr traces.Trace) (bool, error) {
	if len(tr.Events) > 0 && f.rec.Run().Status == traces.StatusInterrupted {
		if err := f.rec.Reopen(); err != nil {
			return false, err
		}
	}
	for _, a := range tr.Agents {
		f.rec.PutAgent(a)
	}
	for i, e := range tr.Events {
		if e.Seq != f.last.Load()+1 {
			return false, traces.Errorf(traces.CodeInternal, "run %s: the store gave event %d after %d", tr.Run.ID, e.Seq, f.last.Load())
		}
		if e.Kind == traces.KindRunFinished && e.Run != nil && i == len(tr.Events)-1 {
			f.rec.FinishAt(e.Time, e.Run.Status, e.Run.Error)
			f.last.Store(e.Seq)
			return true, nil
		}
		f.rec.Emit(e)
		f.last.Store(e.Seq)
	}
	return false, nil
}

// unfollow stops following runs and waits for the followers to end. The caller does not hold
// b.mu.
func (b *Broker) unfollow() {
	if b.follow == nil {
		return
	}
	b.follow.once.Do(func() { close(b.follow.stop) })
	b.follow.runs.Wait()
}
