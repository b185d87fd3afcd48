package record

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/baton-dev/baton/traces"
)

// fileRun is a Sink that keeps one run in memory and writes it as a trace file when it ends:
// Dir/<run id>.trace.json, written whole (to a temporary file, then renamed), so a reader never
// sees half a trace.
type fileRun struct {
	dir, conversation string
	log               *slog.Logger
	pending           *sync.WaitGroup // counts the run from its first event to its file

	mu     sync.Mutex
	rec    *traces.Recording // made by the first event, which names the run
	agents []traces.Agent    // tree changes before it
	// A resumed part continues the file of the run it resumes (see fileresume.go): prev is the
	// part before, when this process wrote it; base is that run as written, once looked for.
	prev   *fileRun
	looked bool
	base   *traces.Trace
	// path is the file the run was last written to, and written is closed once it is finished.
	path    string
	written chan struct{}
}

func newFileRun(dir, conversation string, log *slog.Logger, pending *sync.WaitGroup) *fileRun {
	return &fileRun{dir: dir, conversation: conversation, log: log, pending: pending, written: make(chan struct{})}
}

func (s *fileRun) Emit(e traces.Event) traces.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil {
		run := traces.Run{ID: traces.NewRunID(), Flow: e.Agent, Conversation: s.conversation, Model: "app"}
		switch {
		case e.Run != nil:
			run.Flow, run.Input = e.Run.Flow, e.Run.Input
		case e.Interrupt != nil && run.Conversation == "":
			// A resumed part: written as the run it continues (see fileresume.go), or, when that
			// run is not found, as a run of its own in the interrupt's conversation.
			run.Conversation = e.Interrupt.ID
		}
		s.rec = traces.NewRecording(run, s.agents)
		s.pending.Add(1)
	}
	return s.rec.Emit(e)
}

func (s *fileRun) PutAgent(a traces.Agent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec != nil {
		s.rec.PutAgent(a)
		return
	}
	s.agents = append(s.agents, a)
}

// FinishAt ends the run and writes its file; a failure to write is logged, never the app's
// problem.
func (s *fileRun) FinishAt(at time.Time, status traces.Status, errMsg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil || s.rec.Run().Status.Ended() {
		s.finishWriting()
		return
	}
	defer s.pending.Done()
	defer s.finishWriting()
	s.rec.FinishAt(at, status, errMsg)
	s.write(s.rec.Snapshot(), true)
}

// write writes t, joined to the run it resumes, if any (see joined); final says t is the run's
// real end. Callers hold s.mu.
func (s *fileRun) write(t traces.Trace, final bool) {
	t, ok := s.joined(t, final)
	if !ok {
		return
	}
	if err := writeTrace(s.dir, t); err != nil {
		s.log.Warn("baton could not write the run's trace", "error", err.Error())
		return
	}
	s.path = filepath.Join(s.dir, t.Run.ID+".trace.json")
}

// finishWriting tells a resume that follows s that s is written for good. Callers hold s.mu.
func (s *fileRun) finishWriting() {
	select {
	case <-s.written:
	default:
		close(s.written)
	}
}

// EmitForeseen records e, the first event of the ending last written, which stays as written.
func (s *fileRun) EmitForeseen(e traces.Event, _ ending) traces.Event { return s.Emit(e) }

// Ending writes the trace so far, ended with status, so an app that exits at once leaves its run
// on disk; the run's real end rewrites it.
func (s *fileRun) Ending(end ending) (await func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil {
		return func() {}
	}
	t := s.rec.Snapshot()
	if t.Run.Status.Ended() {
		return func() {}
	}
	t.Run.Status, t.Run.Error, t.Run.EndedAt = end.Status, end.Error, &end.Time
	for _, e := range end.Tail {
		e.Seq = int64(len(t.Events) + 1)
		t.Events = append(t.Events, e)
	}
	t.Events = append(t.Events, traces.Event{Seq: int64(len(t.Events) + 1), Time: end.Time, Kind: traces.KindRunFinished,
		Run: &traces.RunMark{Status: end.Status, Error: end.Error}})
	s.write(t, false)
	return func() {} // written: nothing to wait for
}

// writeTrace writes t to dir/<id>.trace.json, whole or not at all (see traces.WriteFile).
func writeTrace(dir string, t traces.Trace) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write trace %s: %w", t.Run.ID, err)
	}
	return traces.WriteFile(filepath.Join(dir, t.Run.ID+".trace.json"), t)
}
