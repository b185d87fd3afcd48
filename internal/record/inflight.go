package record

import (
	"sync"
)

// inflight counts outputs still being read. Unlike a sync.WaitGroup, it may gain new work while
// someone waits: wait returns the next time the count is zero.
type inflight struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to zero
}

func (f *inflight) add() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		f.idle = make(chan struct{})
	}
	f.n++
}

func (f *inflight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.n == 0 {
		close(f.idle)
	}
}

// idled returns a channel closed the next time the count is zero (already closed when it is).
func (f *inflight) idled() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		return alwaysClosed
	}
	return f.idle
}

// alwaysClosed is what idled returns when nothing is in flight.
var alwaysClosed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (f *inflight) wait() { <-f.idled() }
