package record

import (
	"sync"
	"sync/atomic"
)

// inflight counts outputs still being read. Unlike a sync.WaitGroup, it may gain new work while
// someone waits: wait returns the next time the count is zero.
type inflight struct {
	mu sync.Mutex
	// idle is closed when n drops to zero; made only when someone waits for that (see idled),
	// not for every output, which nearly always is read before anyone waits.
	idle chan struct{}
	// n is changed under mu, and read without it by wait: nearly every callback and event waits
	// for its visit's outputs, which are nearly always read already, and then returns at once,
	// where taking mu and receiving from a closed channel (a lock of its own) was ~100
	// instructions an event.
	n atomic.Int64
	// pending are reads counted here that a reader may not have begun (see streamRead): one who
	// waits runs them itself rather than park until a reader is scheduled, read and woke it up.
	// They stay here, run or not, until the count is zero.
	pending []*streamRead
}

// addRead counts j in, which whoever waits may run.
func (f *inflight) addRead(j *streamRead) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n.Add(1)
	f.pending = append(f.pending, j)
}

func (f *inflight) add() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n.Add(1)
}

func (f *inflight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n.Add(-1) == 0 {
		if f.idle != nil {
			close(f.idle)
			f.idle = nil
		}
		clear(f.pending) // all run
		f.pending = f.pending[:0]
	}
}

// idled returns a channel closed the next time the count is zero (already closed when it is).
func (f *inflight) idled() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n.Load() == 0 {
		return alwaysClosed
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	return f.idle
}

// alwaysClosed is what idled returns when nothing is in flight.
var alwaysClosed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// busy reports whether outputs are being read. An add under a lock its callers hold too is seen.
func (f *inflight) busy() bool { return f.n.Load() != 0 }

// wait returns the next time the count is zero: at once when it is (an add that has returned
// before wait is called is seen, as it was under mu).
func (f *inflight) wait() {
	if f.n.Load() != 0 {
		f.waitBusy() // out of line: wait stays small enough to inline at every callback
	}
}

// waitBusy runs the reads counted here that no reader has begun, then waits for the rest. They
// read what the waiter would wait for anyway, recorded as a reader would. A read already run
// returns at once (see streamRead.run).
func (f *inflight) waitBusy() {
	var some [4]*streamRead // nearly always one: no allocation
	f.mu.Lock()
	p := append(some[:0], f.pending...)
	f.mu.Unlock()
	for _, j := range p {
		j.run()
	}
	if f.n.Load() != 0 { // nearly always read now, by this waiter: no lock, no channel
		<-f.idled()
	}
}
