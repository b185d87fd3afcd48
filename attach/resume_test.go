package attach_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/traces"
)

// TestInterruptThenResume records a run that interrupts for approval and its resumption, both
// through the option, to files: the interrupt is recorded as such (never as a failure), and the
// resumed part continues the run's file, starting with resumed, naming the same interrupt, and
// completes: one file, one run, whichever call was labelled.
func TestInterruptThenResume(t *testing.T) {
	for _, label := range []string{"start", "resume"} {
		t.Run("labelled "+label, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			dir := t.TempDir()
			b := attach.New(attach.Config{Dir: dir})
			runner, err := attachtest.Refunds(ctx, attachtest.NewStore())
			if err != nil {
				t.Fatal(err)
			}
			labels := map[string]attach.RunOption{label: attach.Conversation("case-7")}
			option := func(call string) adk.AgentRunOption {
				if o, ok := labels[call]; ok {
					return b.Option(o)
				}
				return b.Option()
			}
			events, _ := attachtest.Drain(t, runner.Query(ctx, attachtest.RefundsInput, adk.WithCheckPointID("cp-1"), option("start")))
			if last := events[len(events)-1]; !strings.HasSuffix(last, "interrupted") {
				t.Fatalf("the app did not interrupt: %q", events)
			}
			first := attachtest.ReadTraces(t, b, dir, 1)[0]
			if first.Run.Status != traces.StatusInterrupted || first.Run.Error != "" {
				t.Errorf("interrupted run = %+v, want status interrupted, no error", first.Run)
			}
			interrupt := checkInterrupt(t, first)

			b = attach.New(attach.Config{Dir: dir}) // ReadTraces closed the first
			resumed, err := runner.ResumeWithParams(ctx, "cp-1", &adk.ResumeParams{Targets: map[string]any{interrupt.ID: "approved"}}, option("resume"))
			if err != nil {
				t.Fatal(err)
			}
			attachtest.Drain(t, resumed)
			whole := attachtest.ReadTraces(t, b, dir, 1)[0]
			checkResumedRefund(t, whole, first, interrupt.ID)
		})
	}
}

// TestResumeUnderAWorkflowRoot records Refunds under a sequential, loop or parallel root and its
// resumption: the resumed part goes on in the same run, naming the interrupt it resumes. eino
// hands such a root, on resume, only the workflow's state, the interrupt nested in it; read at the
// top alone, the resumed part named no interrupt and was recorded as a run of its own.
func TestResumeUnderAWorkflowRoot(t *testing.T) {
	for _, kind := range []string{"sequential", "loop", "parallel"} {
		t.Run(kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			dir := t.TempDir()
			b := attach.New(attach.Config{Dir: dir})
			runner, err := attachtest.WorkflowRefunds(ctx, attachtest.NewStore(), kind)
			if err != nil {
				t.Fatal(err)
			}
			attachtest.Drain(t, runner.Query(ctx, attachtest.RefundsInput, adk.WithCheckPointID("cp-1"), b.Option()))
			first := attachtest.ReadTraces(t, b, dir, 1)[0]
			interrupt := checkInterrupt(t, first) // the workflow, too, stopped at the interrupt

			b = attach.New(attach.Config{Dir: dir})
			resumed, err := runner.ResumeWithParams(ctx, "cp-1", &adk.ResumeParams{Targets: map[string]any{interrupt.ID: "approved"}}, b.Option())
			if err != nil {
				t.Fatal(err)
			}
			attachtest.Drain(t, resumed)
			whole := attachtest.ReadTraces(t, b, dir, 1)[0]
			if whole.Run.ID != first.Run.ID || whole.Run.Status != traces.StatusCompleted {
				t.Errorf("resumed run = %+v, want run %s completed", whole.Run, first.Run.ID)
			}
			if n := len(first.Events); len(whole.Events) <= n || whole.Events[n].Kind != traces.KindResumed ||
				*whole.Events[n].Interrupt != *interrupt {
				t.Errorf("the resumed part does not go on from the interrupt %+v:\n%s", interrupt, attachtest.Story(whole))
			}
		})
	}
}

// checkInterrupt checks the interrupt of a Refunds run that stopped at it, and returns it.
func checkInterrupt(t *testing.T, tr traces.Trace) *traces.Interrupt {
	t.Helper()
	var interrupt *traces.Interrupt
	for _, e := range tr.Events {
		switch {
		case e.Kind == traces.KindInterrupted:
			interrupt = e.Interrupt
		case e.Kind == traces.KindToolFinished && (!e.Tool.Interrupted || e.Tool.Error != ""):
			t.Errorf("the interrupting tool call is recorded as %+v, want interrupted with no error", e.Tool)
		case e.Kind == traces.KindAgentFinished && (!e.AgentRun.Interrupted || e.AgentRun.Error != ""):
			t.Errorf("the interrupted agent's end is %+v, want interrupted with no error", e.AgentRun)
		case e.Kind == traces.KindError:
			t.Errorf("an interrupt recorded an error: %s", e.Error.Message)
		}
	}
	if interrupt == nil || interrupt.Info != attachtest.RefundsApproval || !strings.Contains(interrupt.Address, "refund") || interrupt.ID == "" {
		t.Fatalf("interrupt = %+v, want eino's root cause: the approval question at the refund tool", interrupt)
	}
	return interrupt
}

// checkResumedRefund checks whole, a Refunds run resumed at interrupt and approved, against first,
// its interrupted part: the same run, in conversation case-7, going on after first's events with
// resumed, to the refund done.
func checkResumedRefund(t *testing.T, whole, first traces.Trace, interrupt string) {
	t.Helper()
	if err := traces.Validate(whole); err != nil {
		t.Fatal(err)
	}
	if whole.Run.ID != first.Run.ID || whole.Run.Status != traces.StatusCompleted || whole.Run.Conversation != "case-7" {
		t.Errorf("resumed run = %+v, want run %s completed, in conversation case-7", whole.Run, first.Run.ID)
	}
	n := len(first.Events)
	if len(whole.Events) <= n || attachtest.Story(traces.Trace{Events: whole.Events[:n]}) != attachtest.Story(first) {
		t.Fatalf("the run does not go on from its interrupted part:\n%s", attachtest.Story(whole))
	}
	if e := whole.Events[n]; e.Kind != traces.KindResumed || e.Interrupt.ID != interrupt {
		t.Errorf("the resumed part starts with %s %+v, want resumed naming interrupt %s", e.Kind, e.Interrupt, interrupt)
	}
	final, models := "", map[string]bool{}
	for _, e := range whole.Events {
		if e.Kind == traces.KindMessage && e.Message.Role == "assistant" {
			final = e.Message.Content
		}
		if e.Kind == traces.KindModelStarted {
			if models[e.Model.ID] {
				t.Errorf("model call id %s used twice", e.Model.ID)
			}
			models[e.Model.ID] = true
		}
	}
	if final != "Done: refunded $12." {
		t.Errorf("resumed run's answer = %q, want the refund done", final)
	}
}

// resumeWait bounds how long an app's resume may take recorded: the scripted app takes
// milliseconds; a recorder that waits for a transfer that never comes took 5 s per agent on the
// interrupt's path.
const resumeWait = 2 * time.Second

// lastInterrupt returns the last interrupt tr records.
func lastInterrupt(t *testing.T, tr traces.Trace) *traces.Interrupt {
	t.Helper()
	for i := len(tr.Events) - 1; i >= 0; i-- {
		if e := tr.Events[i]; e.Kind == traces.KindInterrupted {
			return e.Interrupt
		}
	}
	t.Fatalf("no interrupt recorded:\n%s", attachtest.Story(tr))
	return nil
}

// TestResumeInsideSupervisor records SupervisedRefunds, whose approval is asked inside the
// supervisor's sub-agent, and its resume at once, into one recording as Baton's own flows do. eino
// starts every agent on the interrupt's address again: the resume costs the app nothing (it took
// 5 s, waiting for a transfer that never came), the re-entry is recorded as such (via resume, no
// transfer), and the tree, the model call ids and the session carry on from the interrupted part.
func TestResumeInsideSupervisor(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			runner, err := attachtest.SupervisedRefunds(ctx, attachtest.NewStore(), streaming)
			if err != nil {
				t.Fatal(err)
			}
			rec := traces.NewRecording(traces.Run{ID: "r-1"}, nil)
			first := record.NewRecorder(rec, "", nil)
			attachtest.Drain(t, first.Run(ctx, runner, []adk.Message{schema.UserMessage(attachtest.SupervisedRefundsInput)}, adk.WithCheckPointID("cp-1")))
			<-first.Done()
			rec.Finish(first.Outcome())
			interrupt := lastInterrupt(t, rec.Snapshot())
			if err := rec.Resume(); err != nil {
				t.Fatalf("the first part ended %s: %v", rec.Run().Status, err)
			}

			began := time.Now()
			sent := &agentsSent{Recording: rec}
			second := record.NewRecorder(sent, "", nil)
			events, err := second.Resume(ctx, runner, "cp-1", &adk.ResumeParams{Targets: map[string]any{interrupt.ID: "approved"}})
			if err != nil {
				t.Fatal(err)
			}
			lines, transfers := attachtest.Drain(t, events)
			if took := time.Since(began); took > resumeWait {
				t.Errorf("the app's resume took %s recorded, want well under %s", took, resumeWait)
			}
			<-second.Done()
			rec.Finish(second.Outcome())
			if !slices.Equal(transfers, []string{"clerk -> manager"}) || !strings.Contains(lines[len(lines)-1], attachtest.SupervisedRefundsAnswer) {
				t.Fatalf("the app's resumed part: %q", lines)
			}
			checkSupervisedResume(t, rec.Snapshot(), interrupt.ID)
			// The resumed part's own view of the tree, before the recording merges it into the run's,
			// is right side up too: a transfer back to the supervisor is not a sub-agent's.
			if a := sent.last["manager"]; a.Parent != "" {
				t.Errorf("the resumed part put manager below %q: %+v", a.Parent, a)
			}
		})
	}
}

// agentsSent is a Recording that keeps the latest agents put into it, as they were put.
type agentsSent struct {
	*traces.Recording
	last map[string]traces.Agent
}

func (s *agentsSent) PutAgent(a traces.Agent) {
	if s.last == nil {
		s.last = make(map[string]traces.Agent)
	}
	s.last[a.Name] = a
	s.Recording.PutAgent(a)
}

// checkSupervisedResume checks a recorded SupervisedRefunds run resumed once at interrupt, told
// as one story.
func checkSupervisedResume(t *testing.T, tr traces.Trace, interrupt string) {
	t.Helper()
	if err := traces.Validate(tr); err != nil {
		t.Fatalf("invalid trace: %v\n%s", err, attachtest.Story(tr))
	}
	if tr.Run.Status != traces.StatusCompleted {
		t.Errorf("run %s (%s), want completed:\n%s", tr.Run.Status, tr.Run.Error, storyWithIDs(tr))
	}
	resumedAt := slices.IndexFunc(tr.Events, func(e traces.Event) bool { return e.Kind == traces.KindResumed })
	if resumedAt < 0 || tr.Events[resumedAt].Interrupt.ID != interrupt {
		t.Fatalf("no resumed event naming %s:\n%s", interrupt, attachtest.Story(tr))
	}
	var starts, transfers, models []string
	sets := map[string]int{}
	for _, e := range tr.Events[resumedAt:] {
		switch {
		case e.Kind == traces.KindAgentStarted:
			starts = append(starts, fmt.Sprintf("%s via %s resumed=%v", e.Agent, e.AgentRun.Via, e.AgentRun.Resumed))
		case e.Kind == traces.KindTransfer:
			transfers = append(transfers, e.Transfer.From+" -> "+e.Transfer.To)
		case e.Kind == traces.KindSessionSet:
			sets[e.Session.Key]++
		}
	}
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelStarted {
			models = append(models, e.Agent+" "+e.Model.ID)
		}
	}
	wantStarts := []string{"manager via run resumed=true", "clerk via resume resumed=true", "manager via transfer resumed=false"}
	if !slices.Equal(starts, wantStarts) {
		t.Errorf("the resumed part's agent starts: %q, want %q", starts, wantStarts)
	}
	if !slices.Equal(transfers, []string{"clerk -> manager"}) {
		t.Errorf("the resumed part's transfers: %q, want only clerk's deterministic transfer back", transfers)
	}
	if want := []string{"manager m1", "clerk m2", "clerk m3", "clerk m4", "manager m5"}; !slices.Equal(models, want) {
		t.Errorf("model calls %q, want %q: numbered on from the interrupted part", models, want)
	}
	// (manager's answer, which eino stores under its OutputKey once manager has ended, may be lost
	// with an app that exits at once: not a resume's matter.)
	if sets["charge"] != 0 || sets["answer"] > 1 {
		t.Errorf("the resumed part set %v, want at most manager's answer: the session eino restored was recorded before", sets)
	}
	want := map[string]string{"manager": "", "clerk": "manager", "auditor": "manager"}
	for _, a := range tr.Agents {
		if p, ok := want[a.Name]; !ok || a.Parent != p {
			t.Errorf("agent %s below %q, want below %q", a.Name, a.Parent, p)
		}
	}
	if len(tr.Agents) != len(want) {
		t.Errorf("agents %+v, want %d", tr.Agents, len(want))
	}
}

// storyWithIDs is tr's events, one a line, with their model call ids and run marks: what a
// failure shows.
func storyWithIDs(tr traces.Trace) string {
	var b strings.Builder
	for _, e := range tr.Events {
		fmt.Fprintf(&b, "%d %s %s", e.Seq, e.Kind, e.Agent)
		if e.Model != nil {
			fmt.Fprintf(&b, " %s", e.Model.ID)
		}
		if e.Run != nil {
			fmt.Fprintf(&b, " %+v", *e.Run)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
