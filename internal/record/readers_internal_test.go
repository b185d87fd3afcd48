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

// One who waits for a read no reader has begun runs it itself, once: a reader handed it later
// finds it done.
func TestWaiterRunsAPendingRead(t *testing.T) {
	var f inflight
	runs := 0
	j := &streamRead{f: func() { runs++; f.done() }}
	f.addRead(j)
	f.wait() // no reader: it returns only if it ran j
	j.run()  // the reader's turn, too late
	if runs != 1 {
		t.Fatalf("the read ran %d times, want 1", runs)
	}
	if f.busy() || len(f.pending) != 0 {
		t.Fatalf("still counted: busy %v, %d pending", f.busy(), len(f.pending))
	}
}
