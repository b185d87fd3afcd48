package record

import (
	"testing"
	"time"

	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// A stream handed over while every reader is busy gets a reader of its own (one waiting on it is
// not blocked by the other), a stream handed over once one is idle reuses it, and the readers end
// with the run (goleak, in TestMain, fails the package otherwise).
func TestReadersNeverQueueBehindABusyOne(t *testing.T) {
	r := &Recorder{ended: make(chan struct{}), readers: make(chan reading)}
	second, first := make(chan struct{}), make(chan struct{})
	r.readStreamed(readFunc(func() {
		select {
		case <-second: // read by another reader meanwhile
		case <-time.After(10 * time.Second):
			t.Error("the second stream waited for the first one's reader")
		}
		close(first)
	}))
	r.readStreamed(readFunc(func() { close(second) }))
	<-first
	third := make(chan struct{})
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case r.readers <- readFunc(func() { close(third) }): // an idle reader took it
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

// readFunc is a reading that runs itself.
type readFunc func()

func (f readFunc) run() { f() }

// One who waits for a read no reader has begun runs it itself, once: a reader handed it later
// finds it done.
func TestWaiterRunsAPendingRead(t *testing.T) {
	rec := traces.NewRecording(traces.Run{ID: "r1", Flow: "f"}, nil)
	r := NewRecorder(rec, "f", nil)
	v := &visit{rec: r, agent: "a"}
	reply := &model.CallbackOutput{Message: schema.AssistantMessage("hi", nil)}
	f := &v.outputs
	j := &streamRead{of: modelReply, c: &call{v: v, modelID: "m1"}, work: f,
		out: schema.StreamReaderFromArray([]callbacks.CallbackOutput{reply})}
	f.addRead(j)
	r.streams.add()
	f.wait() // no reader: it returns only if it ran j
	j.run()  // the reader's turn, too late
	runs := 0
	for _, e := range rec.Snapshot().Events {
		if e.Kind == traces.KindModelFinished {
			runs++
		}
	}
	if runs != 1 {
		t.Fatalf("the reply was recorded %d times, want 1", runs)
	}
	if f.busy() || r.streams.busy() || len(f.pending) != 0 {
		t.Fatalf("still counted: busy %v, streams %v, %d pending", f.busy(), r.streams.busy(), len(f.pending))
	}
}
