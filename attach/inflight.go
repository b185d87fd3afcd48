package attach

import "sync"

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

func (f *inflight) wait() {
	f.mu.Lock()
	if f.n == 0 {
		f.mu.Unlock()
		return
	}
	idle := f.idle
	f.mu.Unlock()
	<-idle
}
