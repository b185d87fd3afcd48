package agents

import (
	"sync/atomic"
	"time"
)

// Pace is the delay the scripted model waits before each reply, so a person can follow a demo. It
// may be changed while a run goes on; a nil *Pace means no delay. Safe for concurrent use.
type Pace struct{ ns atomic.Int64 }

// NewPace returns a pace of d.
func NewPace(d time.Duration) *Pace {
	p := &Pace{}
	p.Set(d)
	return p
}

// Set changes the pace; negative durations count as zero.
func (p *Pace) Set(d time.Duration) { p.ns.Store(int64(max(d, 0))) }

// Get returns the current pace; zero for a nil *Pace.
func (p *Pace) Get() time.Duration {
	if p == nil {
		return 0
	}
	return time.Duration(p.ns.Load())
}
