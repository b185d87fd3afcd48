package record

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/baton-dev/baton/traces"
)

// A resumed part written to files continues the run's file: Dir/<run id>.trace.json then holds
// the whole run, interrupted, resumed and on to its end, as the server would show it, and no file
// of its own is written. The run is the one that stopped at the interrupt the part resumes: in
// this process, the one whose sink the resumed part follows (see follow); from another process,
// the newest trace in Dir that ended interrupted there (at most maxScan files are read). Found
// neither, the part is written as a run of its own, in the interrupt's conversation.

// maxScan bounds the trace files of Dir read to find the run a resumed part continues, newest
// first: the run stopped there recently, as a rule.
const maxScan = 200

// follow makes s, a resumed part written to files, continue the file of prev, the part before,
// written by this process to the same directory.
func (s *fileRun) follow(prev Sink) {
	p, ok := prev.(*fileRun)
	if !ok || filepath.Clean(p.dir) != filepath.Clean(s.dir) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prev = p
}

// joined returns t, the trace of s's run as it stands (ended), joined to the run it continues
// when it is a resumed part: the whole run, to be written under that run's id. final says t is
// the run's real end, not an ending written in case the app exits at once. ok is false when the
// part before, in this process, is not written yet and t should not be written either. Callers
// hold s.mu.
func (s *fileRun) joined(t traces.Trace, final bool) (traces.Trace, bool) {
	if len(t.Events) == 0 || t.Events[0].Kind != traces.KindResumed || t.Events[0].Interrupt == nil {
		return t, true
	}
	if !s.looked {
		before, ok := s.before(t.Events[0].Interrupt.ID, final)
		if !ok {
			return t, false
		}
		s.looked, s.base = true, before
	}
	if s.base == nil {
		return t, true
	}
	return joinRun(*s.base, t), true
}

// before returns the trace of the run that stopped at interrupt, as written, or nil when there
// is none. The part before, when in this process, is waited for until written for good (its
// recorder is done with it, which takes milliseconds once its run ended in eino): at most
// endingWait for an ending, which runs in eino's goroutine as remote endings wait for their
// delivery, and followWait for the real end. ok is false when an ending waited in vain: the real
// end writes the whole run, or, waiting in vain too, the part as a run of its own.
func (s *fileRun) before(interrupt string, final bool) (*traces.Trace, bool) {
	if s.prev == nil {
		return findStopped(s.dir, interrupt), true
	}
	wait := endingWait
	if final {
		wait = followWait
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-s.prev.written:
	case <-t.C:
		return nil, final
	}
	s.prev.mu.Lock()
	path := s.prev.path
	s.prev.mu.Unlock()
	return readStopped(path, interrupt), true
}

// findStopped returns the newest trace of dir that ended interrupted at interrupt, or nil.
func findStopped(dir, interrupt string) *traces.Trace {
	entries, err := os.ReadDir(dir)
	if err != nil || interrupt == "" {
		return nil
	}
	type file struct {
		path string
		mod  time.Time
	}
	var files []file
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".trace.json") {
			continue
		}
		if info, err := e.Info(); err == nil {
			files = append(files, file{filepath.Join(dir, e.Name()), info.ModTime()})
		}
	}
	slices.SortFunc(files, func(a, b file) int { return b.mod.Compare(a.mod) })
	for _, f := range files[:min(len(files), maxScan)] {
		if t := readStopped(f.path, interrupt); t != nil {
			return t
		}
	}
	return nil
}

// readStopped returns the trace of file path when it ended interrupted at interrupt, else nil.
func readStopped(path, interrupt string) *traces.Trace {
	data, err := os.ReadFile(path)
	if err != nil || path == "" || !bytes.Contains(data, []byte(interrupt)) {
		return nil
	}
	t, err := traces.Unmarshal(data)
	if err != nil || t.Run.Status != traces.StatusInterrupted || lastInterrupt(t) != interrupt {
		return nil
	}
	return &t
}

// lastInterrupt returns the id of t's last interrupted event, or "".
func lastInterrupt(t traces.Trace) string {
	for i := len(t.Events) - 1; i >= 0; i-- {
		if e := t.Events[i]; e.Kind == traces.KindInterrupted && e.Interrupt != nil {
			return e.Interrupt.ID
		}
	}
	return ""
}

// joinRun returns the run before, which ended interrupted, resumed with part, a resumed part that
// ended: through a recording, which joins them as the server does (see traces.Recording.Resume).
func joinRun(before, part traces.Trace) traces.Trace {
	if before.Run.Conversation == "" && part.Run.Conversation != lastInterrupt(before) {
		before.Run.Conversation = part.Run.Conversation // the resume was labelled, not the start
	}
	rec := traces.NewRecordingOf(before)
	if rec.Resume() != nil {
		return part
	}
	for _, a := range part.Agents {
		rec.PutAgent(a)
	}
	for _, e := range part.Events {
		if e.Kind == traces.KindRunFinished {
			rec.FinishAt(e.Time, e.Run.Status, e.Run.Error)
			break
		}
		e.Seq = 0
		rec.Emit(e)
	}
	return rec.Snapshot()
}
