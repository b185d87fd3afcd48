package traces_test

import (
	"fmt"
	"slices"
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

// modelEvents returns a model call id's started and finished events, by agent.
func modelEvents(agent, id string) []traces.Event {
	return []traces.Event{
		{Kind: traces.KindModelStarted, Agent: agent, Model: &traces.ModelCall{ID: id}},
		{Kind: traces.KindModelFinished, Agent: agent, Model: &traces.ModelCall{ID: id, Usage: &traces.Usage{TotalTokens: 7}}},
	}
}

// modelIDs returns the model call ids of tr's model.started events, in order.
func modelIDs(tr traces.Trace) []string {
	var ids []string
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelStarted {
			ids = append(ids, e.Model.ID)
		}
	}
	return ids
}

// TestResumedPartNumbersModelCallsOn: a resumed part's recorder numbers its model calls from m1
// again, knowing nothing of the part before; the recording, which holds the whole run, numbers
// them on from the run's highest, at every resume, and leaves ids of other forms alone.
func TestResumedPartNumbersModelCallsOn(t *testing.T) {
	rec := newRecording(t)
	for _, id := range []string{"m1", "call-x", "m2"} {
		for _, e := range modelEvents("root", id) {
			rec.Emit(e)
		}
	}
	rec.Emit(traces.Event{Kind: traces.KindInterrupted, Agent: "root", Interrupt: &traces.Interrupt{ID: "int-1"}})
	rec.Finish(traces.StatusInterrupted, "")

	part := func(interrupt string, ids ...string) {
		if err := rec.Resume(); err != nil {
			t.Fatal(err)
		}
		rec.Emit(traces.Event{Kind: traces.KindResumed, Agent: "root", Interrupt: &traces.Interrupt{ID: interrupt}})
		for _, id := range ids {
			for _, e := range modelEvents("root", id) {
				given := e.Model
				if got := rec.Emit(e); got.Kind == traces.KindModelFinished && got.Model.Usage == nil {
					t.Errorf("the model call %s lost its usage", got.Model.ID)
				}
				if given.ID != id {
					t.Errorf("the caller's event was changed: id %s, was %s", given.ID, id)
				}
			}
		}
	}
	part("int-1", "m1", "m2", "other")
	rec.Emit(traces.Event{Kind: traces.KindInterrupted, Agent: "root", Interrupt: &traces.Interrupt{ID: "int-2"}})
	rec.Finish(traces.StatusInterrupted, "")
	part("int-2", "m1")
	rec.Finish(traces.StatusCompleted, "")

	tr := rec.Snapshot()
	if got, want := modelIDs(tr), []string{"m1", "call-x", "m2", "m3", "m4", "other", "m5"}; !slices.Equal(got, want) {
		t.Errorf("model call ids %v, want %v", got, want)
	}
	if err := traces.Validate(tr); err != nil {
		t.Fatal(err)
	}
}

// TestResumedPartMergesItsAgents: the agents a resumed part puts are merged into the run's tree:
// what the run knew stays (a description, tools, an output key, the root without a parent), what
// it lacked is filled in, and no parent closes a cycle. Before any resume, PutAgent replaces.
func TestResumedPartMergesItsAgents(t *testing.T) {
	rec := interruptedRecording(t)
	rec.PutAgent(traces.Agent{Name: "clerk", Kind: traces.AgentChatModel, Description: "Handles refunds.", Parent: "root",
		Relation: traces.RelationSubAgent, Tools: []string{"refund"}})
	rec.PutAgent(traces.Agent{Name: "auditor", Kind: traces.AgentCustom, Parent: "root", Relation: traces.RelationSubAgent})
	if err := rec.Resume(); err != nil {
		t.Fatal(err)
	}
	// What the resumed part's own view of the tree says: less of clerk, the root below clerk
	// (as a transfer back up looks with nothing before it), and more of auditor and a newcomer.
	rec.PutAgent(traces.Agent{Name: "clerk", Kind: traces.AgentChatModel})
	rec.PutAgent(traces.Agent{Name: "root", Kind: traces.AgentSupervisor, Parent: "clerk", Relation: traces.RelationSubAgent, OutputKey: "answer"})
	rec.PutAgent(traces.Agent{Name: "auditor", Kind: traces.AgentChatModel, Description: "Audits.", Tools: []string{"audit"}})
	rec.PutAgent(traces.Agent{Name: "scribe", Kind: traces.AgentChatModel, Parent: "auditor", Relation: traces.RelationAgentTool})

	want := map[string]traces.Agent{
		"root":    {Name: "root", Kind: traces.AgentSupervisor, Tools: []string{"transfer_to_agent"}, OutputKey: "answer"},
		"clerk":   {Name: "clerk", Kind: traces.AgentChatModel, Description: "Handles refunds.", Parent: "root", Relation: traces.RelationSubAgent, Tools: []string{"refund"}},
		"auditor": {Name: "auditor", Kind: traces.AgentChatModel, Description: "Audits.", Parent: "root", Relation: traces.RelationSubAgent, Tools: []string{"audit"}},
		"scribe":  {Name: "scribe", Kind: traces.AgentChatModel, Parent: "auditor", Relation: traces.RelationAgentTool},
	}
	agents := rec.Snapshot().Agents
	if len(agents) != len(want) {
		t.Errorf("agents %+v, want %d", agents, len(want))
	}
	for _, a := range agents {
		if w := want[a.Name]; fmt.Sprintf("%+v", a) != fmt.Sprintf("%+v", w) {
			t.Errorf("agent %+v\nwant  %+v", a, w)
		}
	}
}
