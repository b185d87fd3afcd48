package record

import (
	"testing"
	"time"
)

// A stream handed over while every reader is busy gets a reader of its own (one waiting on it is
// not blocked by the other), a stream handed over once one is idle reuses it, and the readers end
// with the run (goleak, in TestMain, fails the package otherwise).
func TestReadersNeverQueueBehindABusyOne(t *testing.T) {
	r := &Recorder{ended: make(chan struct{}), readers: make(chan func())}
	second, first := make(chan struct{}), make(chan struct{})
	r.readStreamed(func() {
		select {
		case <-second: // read by another reader meanwhile
		case <-time.After(10 * time.Second):
			t.Error("the second stream waited for the first one's reader")
		}
		close(first)
	})
	r.readStreamed(func() { close(second) })
	<-first
	third := make(chan struct{})
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case r.readers <- func() { close(third) }: // an idle reader took it
		default:
			if time.Now().After(deadline) {
				t.Fatal("no reader went idle after its stream")
			}
			time.Sleep(time.Millisecond)
			continue
		}
		break
	}
	<-third
	close(r.ended)
}
