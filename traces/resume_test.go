package traces_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/traces"
)

// These tests cover what changes a recording after it started or ended: Resume, PutAgent,
// FinishAt, and recordings of traces read from files.

// interruptedRecording returns a recording of 2 messages, an interrupt and run.finished
// {interrupted}: events 1 to 4.
func interruptedRecording(tb testing.TB) *traces.Recording {
	tb.Helper()
	rec := newRecording(tb)
	emit(tb, rec, 2)
	rec.Emit(traces.Event{Kind: traces.KindInterrupted, Agent: "root", Interrupt: &traces.Interrupt{ID: "int-1", Info: "approve?"}})
	rec.Finish(traces.StatusInterrupted, "")
	return rec
}

func TestResumeGoesOnInTheSameTrace(t *testing.T) {
	rec := newRecording(t)
	early := rec.Subscribe(0) // made while the first part runs; read only once the run resumed
	emit(t, rec, 2)
	rec.Emit(traces.Event{Kind: traces.KindInterrupted, Agent: "root", Interrupt: &traces.Interrupt{ID: "int-1", Info: "approve?"}})
	rec.Finish(traces.StatusInterrupted, "")
	before := rec.Subscribe(0)
	assertSeqs(t, readAll(t, before, 8), 1, 4) // subscribed while ended: ends after the backlog
	oldDone := rec.Done()

	if err := rec.Resume(); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if run := rec.Run(); run.Status != traces.StatusRunning || run.EndedAt != nil || run.Error != "" {
		t.Errorf("run after Resume = %+v, want running with no end", run)
	}
	select {
	case <-oldDone:
	default:
		t.Error("the Done channel of the first part is open again")
	}
	select {
	case <-rec.Done():
		t.Fatal("Done is closed after Resume")
	default:
	}

	// A new subscriber gets everything so far, then follows live.
	after := rec.Subscribe(0)
	assertSeqs(t, readN(t, after, 4, 3), 1, 4)
	if e := rec.Emit(traces.Event{Kind: traces.KindResumed, Agent: "root", Interrupt: &traces.Interrupt{ID: "int-1"}}); e.Seq != 5 {
		t.Fatalf("Emit after Resume gave seq %d, want 5", e.Seq)
	}
	emit(t, rec, 1)
	assertSeqs(t, readN(t, after, 2, 8), 5, 6)
	// The first part's subscriptions end at its run.finished, however late they read.
	assertSeqs(t, readAll(t, early, 8), 1, 4)
	assertSeqs(t, readAll(t, before, 8), 1, 0)
	rec.Finish(traces.StatusCompleted, "")
	assertSeqs(t, readAll(t, after, 8), 7, 7)
	<-rec.Done()

	tr := rec.Snapshot()
	if err := traces.Validate(tr); err != nil {
		t.Fatalf("the resumed trace is not valid: %v", err)
	}
	var kinds []traces.Kind
	for _, e := range tr.Events[2:] {
		kinds = append(kinds, e.Kind)
	}
	want := []traces.Kind{traces.KindInterrupted, traces.KindRunFinished, traces.KindResumed, traces.KindMessage, traces.KindRunFinished}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("events 3.. = %v, want %v", kinds, want)
	}
	if tr.Run.Status != traces.StatusCompleted || tr.Run.EndedAt == nil {
		t.Errorf("run = %+v, want completed with an end", tr.Run)
	}
}

func TestResumeRefusesRunsThatDidNotEndInterrupted(t *testing.T) {
	running := newRecording(t)
	completed := newRecording(t)
	completed.Finish(traces.StatusCompleted, "")
	resumedTwice := interruptedRecording(t)
	if err := resumedTwice.Resume(); err != nil {
		t.Fatal(err)
	}
	for name, rec := range map[string]*traces.Recording{"running": running, "completed": completed, "resumed twice": resumedTwice} {
		t.Run(name, func(t *testing.T) {
			before := len(rec.Snapshot().Events)
			err := rec.Resume()
			if traces.ErrorCode(err) != traces.CodeConflict {
				t.Fatalf("Resume = %v, want a conflict", err)
			}
			if got := len(rec.Snapshot().Events); got != before {
				t.Errorf("a refused Resume changed the events: %d, was %d", got, before)
			}
		})
	}
}

func TestFinishAtKeepsTheTime(t *testing.T) {
	rec := newRecording(t)
	at := t0.Add(time.Minute)
	rec.FinishAt(at, traces.StatusFailed, "boom")
	tr := rec.Snapshot()
	if last := tr.Events[len(tr.Events)-1]; !last.Time.Equal(at) || last.Run.Status != traces.StatusFailed || last.Run.Error != "boom" {
		t.Errorf("run.finished = %+v %+v, want failed at %v", last, last.Run, at)
	}
	if tr.Run.EndedAt == nil || !tr.Run.EndedAt.Equal(at) {
		t.Errorf("run.ended_at = %v, want %v", tr.Run.EndedAt, at)
	}
}

func TestPutAgentAddsOrReplaces(t *testing.T) {
	rec := newRecording(t)
	tools := []string{"search"}
	rec.PutAgent(traces.Agent{Name: "helper", Kind: traces.AgentChatModel, Parent: "root", Relation: traces.RelationSubAgent, Tools: tools})
	tools[0] = "changed by the caller"
	rec.PutAgent(traces.Agent{Name: "root", Kind: traces.AgentCustom, Description: "replaced"})
	agents := rec.Snapshot().Agents
	if len(agents) != 2 || agents[0].Name != "root" || agents[0].Kind != traces.AgentCustom || agents[0].Description != "replaced" {
		t.Fatalf("agents = %+v, want root replaced in place and helper added", agents)
	}
	if agents[1].Name != "helper" || agents[1].Tools[0] != "search" {
		t.Errorf("helper = %+v, want its own copy of the tools", agents[1])
	}
}

func TestPutAgentConcurrentWithSnapshots(t *testing.T) {
	rec := newRecording(t)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				rec.PutAgent(traces.Agent{Name: fmt.Sprintf("a%d-%d", w, i%10), Kind: traces.AgentChatModel})
				_ = rec.Snapshot()
			}
		})
	}
	wg.Wait()
	if n := len(rec.Snapshot().Agents); n != 1+4*10 {
		t.Errorf("%d agents, want 41 (root and 10 names per writer)", n)
	}
}

func TestNewRecordingOfServesAFinishedTrace(t *testing.T) {
	tr := richTrace()
	rec := traces.NewRecordingOf(tr)
	<-rec.Done()
	assertEqualTraces(t, rec.Snapshot(), tr)
	sub := rec.Subscribe(10)
	assertSeqs(t, readAll(t, sub, 8), 11, int64(len(tr.Events)))
	if e := rec.Emit(traces.Event{Kind: traces.KindLost, Lost: &traces.Lost{Count: 1}}); e.Seq != 0 {
		t.Errorf("Emit into a loaded trace recorded seq %d", e.Seq)
	}
	if rec.Resume() == nil {
		t.Error("a failed run read from a file was resumed")
	}
}

func TestNewRecordingOfATraceSavedMidRun(t *testing.T) {
	tr := richTrace()
	tr.Events = tr.Events[:5]
	tr.Run.Status, tr.Run.EndedAt, tr.Run.Error = traces.StatusRunning, nil, ""
	run := traces.NewRecordingOf(tr).Run()
	if run.Status != traces.StatusCanceled || run.Error == "" || run.EndedAt == nil || !run.EndedAt.Equal(tr.Events[4].Time) {
		t.Errorf("run = %+v, want canceled, saying why, ended at its last event", run)
	}
}
