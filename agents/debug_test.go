package agents_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// debugged is a catalogue run held at breakpoints: each stop arrives on stops while the run
// waits for Continue.
type debugged struct {
	d      *agents.Debugger
	rec    *traces.Recording
	stops  chan agents.Stop
	status chan traces.Status
}

func debugRun(t *testing.T, name string, streaming bool, points ...string) *debugged {
	t.Helper()
	flow, err := agents.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	var bps []agents.Breakpoint
	for _, p := range points {
		b, err := agents.ParseBreakpoint(p)
		if err != nil {
			t.Fatal(err)
		}
		bps = append(bps, b)
	}
	r := &debugged{stops: make(chan agents.Stop, 16), status: make(chan traces.Status, 1)}
	r.d = agents.NewDebugger(bps, func(s agents.Stop) { r.stops <- s })
	r.rec = traces.NewRecording(traces.Run{ID: traces.NewRunID(), Flow: flow.Name, Input: flow.DefaultInput, Status: traces.StatusRunning, StartedAt: time.Now()}, flow.Agents)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	go func() {
		defer cancel()
		r.status <- agents.RunFlow(ctx, flow, flow.DefaultInput, agents.Options{Streaming: streaming, Debugger: r.d}, r.rec)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.rec.Done()
	})
	return r
}

// next waits for the run to be held, and checks that the trace's last event says so.
func (r *debugged) next(t *testing.T) (agents.Stop, traces.Trace) {
	t.Helper()
	select {
	case s := <-r.stops:
		// Other goroutines of the run (the copies of agents' events) may record on while it is
		// held: the trace is cut at the paused event.
		tr := r.rec.Snapshot()
		p := kinds(tr, traces.KindPaused)
		if len(p) == 0 || p[len(p)-1].Pause.Break != s.Break || p[len(p)-1].Pause.Target != s.Target {
			t.Fatalf("held at %+v, but the trace's last paused event is %+v", s, p)
		}
		tr.Events = tr.Events[:p[len(p)-1].Seq]
		return s, tr
	case st := <-r.status:
		t.Fatalf("the run ended %s without being held", st)
	case <-time.After(30 * time.Second):
		t.Fatal("the run was not held within 30s")
	}
	panic("unreachable")
}

func (r *debugged) resume(t *testing.T, res agents.Resume) {
	t.Helper()
	if err := r.d.Continue(res); err != nil {
		t.Fatal(err)
	}
}

// end waits for the run's end and returns its status and trace; no stop must be left.
func (r *debugged) end(t *testing.T) (traces.Status, traces.Trace) {
	t.Helper()
	select {
	case st := <-r.status:
		tr := r.rec.Snapshot()
		if err := traces.Validate(tr); err != nil {
			t.Fatal(err)
		}
		select {
		case s := <-r.stops:
			t.Fatalf("held again at %+v", s)
		default:
		}
		return st, tr
	case s := <-r.stops:
		t.Fatalf("held again at %+v", s)
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not end within 30s")
	}
	panic("unreachable")
}

func kinds(tr traces.Trace, k traces.Kind) []traces.Event {
	var out []traces.Event
	for _, e := range tr.Events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// TestBreakpointTransferHoldsBeforeTheTargetStarts: a transfer breakpoint holds the supervisor
// flow at the reply that hands over to math_agent, which has not started then; the paused event
// points at the deciding model.finished; continuing records continued and the run completes as
// it would have.
func TestBreakpointTransferHoldsBeforeTheTargetStarts(t *testing.T) {
	modes(t, func(t *testing.T, streaming bool) {
		r := debugRun(t, "supervisor", streaming, "transfer:math_agent")
		s, tr := r.next(t)
		if s.Break != traces.BreakTransfer || s.Agent != "supervisor" || s.Target != "math_agent" || s.Reply == nil {
			t.Fatalf("stop = %+v; want supervisor's transfer to math_agent, with its reply", s)
		}
		if s.At == 0 || tr.Events[s.At-1].Kind != traces.KindModelFinished || tr.Events[s.At-1].Agent != "supervisor" {
			t.Fatalf("paused at = %d; want the seq of supervisor's model.finished", s.At)
		}
		for _, e := range kinds(tr, traces.KindAgentStarted) {
			if e.Agent == "math_agent" {
				t.Fatalf("math_agent started (#%d) before the transfer took effect", e.Seq)
			}
		}
		r.resume(t, agents.Resume{Action: traces.ActionContinue, By: "test"})
		st, tr := r.end(t)
		if st != traces.StatusCompleted {
			t.Fatalf("status %s", st)
		}
		c := kinds(tr, traces.KindContinued)
		if len(c) != 1 || c[0].Pause.Action != traces.ActionContinue || c[0].Pause.By != "test" || c[0].Pause.Edited != "" {
			t.Fatalf("continued = %+v", c)
		}
		var started []string
		for _, e := range kinds(tr, traces.KindAgentStarted) {
			started = append(started, e.Agent)
		}
		if !slices.Contains(started, "math_agent") {
			t.Fatalf("math_agent never ran: %v", started)
		}
	})
}

// TestBreakpointEditTransferTarget: the deciding reply edited to transfer elsewhere sends the
// run there, and continued says what was changed.
func TestBreakpointEditTransferTarget(t *testing.T) {
	r := debugRun(t, "supervisor", false, "transfer:research_agent")
	s, _ := r.next(t)
	edited := *s.Reply
	edited.Content = "Straight to the maths."
	edited.ToolCalls = slices.Clone(edited.ToolCalls)
	edited.ToolCalls[0].Arguments = `{"agent_name":"math_agent"}`
	r.resume(t, agents.Resume{Action: traces.ActionContinue, By: "test", Reply: &edited})
	_, tr := r.end(t)
	transfers := kinds(tr, traces.KindTransfer)
	if len(transfers) == 0 || transfers[0].Transfer.To != "math_agent" {
		t.Fatalf("first transfer = %+v; want to math_agent, as edited", transfers)
	}
	c := kinds(tr, traces.KindContinued)[0]
	if c.Pause.Edited != "transfer target: research_agent → math_agent; reply text" || c.Pause.Reply == nil || c.Pause.Reply.Content != "Straight to the maths." {
		t.Fatalf("continued = %+v", c.Pause)
	}
	for _, e := range kinds(tr, traces.KindAgentStarted) {
		if e.Agent == "research_agent" && e.Seq < transfers[0].Seq {
			t.Fatal("research_agent started before the edited transfer")
		}
	}

	// A replay of the edited run plays the edit, and so does not diverge.
	model, err := agents.ReplayOf(tr)
	if err != nil {
		t.Fatal(err)
	}
	flow, _ := agents.Lookup("supervisor")
	replayed := traces.NewRecording(traces.Run{ID: traces.NewRunID(), Flow: flow.Name, Input: flow.DefaultInput, Status: traces.StatusRunning, StartedAt: time.Now()}, flow.Agents)
	if st := agents.RunFlow(context.Background(), flow, flow.DefaultInput, agents.Options{Model: model}, replayed); st != traces.StatusCompleted {
		t.Fatalf("the replay of the edited run ended %s: %+v", st, kinds(replayed.Snapshot(), traces.KindError))
	}
	if got := kinds(replayed.Snapshot(), traces.KindTransfer); len(got) == 0 || got[0].Transfer.To != "math_agent" {
		t.Errorf("the replay's first transfer = %+v; want math_agent, as edited", got)
	}
}

// TestBreakpointEditModelInput: a model breakpoint holds the call before it is made; the input
// it is continued with is what the model receives, as model.started records.
func TestBreakpointEditModelInput(t *testing.T) {
	modes(t, func(t *testing.T, streaming bool) {
		r := debugRun(t, "supervisor", streaming, "model@math_agent")
		s, tr := r.next(t)
		if s.Break != traces.BreakModel || s.Agent != "math_agent" || len(s.Input) < 2 {
			t.Fatalf("stop = %+v", s)
		}
		held := len(tr.Events)
		r.d.SetBreakpoints(nil)
		in := []traces.Message{{Role: "user", Content: "What is 2.297 / 29.18?"}}
		r.resume(t, agents.Resume{Action: traces.ActionContinue, By: "test", Input: in})
		_, tr = r.end(t)
		var next traces.Event
		for _, e := range tr.Events[held:] {
			if e.Kind == traces.KindModelStarted {
				next = e
				break
			}
		}
		if next.Agent != "math_agent" || len(next.Model.Input) != 1 || next.Model.Input[0].Content != in[0].Content {
			t.Fatalf("next model call = %+v; want math_agent's with the edited input", next)
		}
		if c := kinds(tr, traces.KindContinued)[0]; len(c.Pause.Input) != 1 || c.Pause.Edited == "" {
			t.Fatalf("continued = %+v", c.Pause)
		}
	})
}

// TestBreakpointStepAndAbort: a step holds the run at the next handoff whatever the
// breakpoints; an abort ends it canceled, recorded.
func TestBreakpointStepAndAbort(t *testing.T) {
	r := debugRun(t, "supervisor", false, "transfer:research_agent")
	r.next(t)
	r.resume(t, agents.Resume{Action: traces.ActionStep, By: "test"})
	s, _ := r.next(t)
	if s.Break != traces.BreakStep || s.Agent != "research_agent" || s.Target != "supervisor" {
		t.Fatalf("step held at %+v; want research_agent's deterministic handover to supervisor", s)
	}
	r.resume(t, agents.Resume{Action: traces.ActionStep, By: "test"})
	s, _ = r.next(t)
	if s.Break != traces.BreakStep || s.Target != "math_agent" {
		t.Fatalf("step held at %+v; want the transfer to math_agent", s)
	}
	r.resume(t, agents.Resume{Action: traces.ActionAbort, By: "test"})
	st, tr := r.end(t)
	if st != traces.StatusCanceled {
		t.Fatalf("status %s; want canceled", st)
	}
	c := kinds(tr, traces.KindContinued)
	if len(c) != 3 || c[0].Pause.Action != traces.ActionStep || c[2].Pause.Action != traces.ActionAbort {
		t.Fatalf("continued = %+v", c)
	}
	for _, e := range kinds(tr, traces.KindAgentStarted) {
		if e.Agent == "math_agent" {
			t.Fatal("math_agent started after the abort")
		}
	}
}

// TestBreakpointKinds: each kind holds a real catalogue run where it says, and the run goes on.
func TestBreakpointKinds(t *testing.T) {
	cases := []struct {
		flow, point   string
		agent, target string
		before        func(tr traces.Trace) string // "" when the run is held at the right point
		wantStatus    traces.Status
	}{
		{"supervisor", "transfer:supervisor", "research_agent", "supervisor", func(tr traces.Trace) string {
			ts := kinds(tr, traces.KindTransfer)
			last := ts[len(ts)-1]
			if last.Transfer.Mode != traces.TransferDeterministic || last.Transfer.To != "supervisor" {
				return "the last transfer before it is no deterministic one to supervisor"
			}
			for _, e := range tr.Events[last.Seq:] {
				if e.Kind == traces.KindAgentStarted || e.Kind == traces.KindModelStarted {
					return "supervisor started before it: " + string(e.Kind)
				}
			}
			return ""
		}, traces.StatusCompleted},
		{"agenttool", "agenttool:research_agent", "project_manager", "research_agent", func(tr traces.Trace) string {
			if len(kinds(tr, traces.KindAgentToolEnter)) > 0 {
				return "the callee was entered"
			}
			return ""
		}, traces.StatusCompleted},
		{"supervisor", "tool:multiply", "math_agent", "multiply", func(tr traces.Trace) string {
			for _, e := range kinds(tr, traces.KindToolFinished) {
				if e.Tool.Name == "multiply" {
					return "multiply already ran"
				}
			}
			return ""
		}, traces.StatusCompleted},
		{"agenttool", "session:research_notes", "research_agent", "research_notes", func(tr traces.Trace) string {
			for _, e := range kinds(tr, traces.KindSessionSet) {
				if e.Session.Key == "research_notes" {
					return ""
				}
			}
			var ks []string
			for _, e := range tr.Events {
				ks = append(ks, string(e.Kind))
			}
			return "no session.set of research_notes before it: " + strings.Join(ks, " ")
		}, traces.StatusCompleted},
		{"failing", "error", "", "", func(tr traces.Trace) string {
			for _, e := range kinds(tr, traces.KindToolFinished) {
				if e.Tool.Error != "" {
					return ""
				}
			}
			return "no failed call before it"
		}, traces.StatusFailed},
		{"approval", "interrupt", "billing_agent", "issue_refund", func(tr traces.Trace) string {
			if len(kinds(tr, traces.KindInterrupted)) > 0 {
				return "the interrupt was already recorded"
			}
			return ""
		}, traces.StatusInterrupted},
	}
	for _, c := range cases {
		t.Run(c.point, func(t *testing.T) {
			r := debugRun(t, c.flow, false, c.point)
			s, tr := r.next(t)
			if (c.agent != "" && s.Agent != c.agent) || (c.target != "" && s.Target != c.target) {
				t.Fatalf("held at %+v; want agent %q, target %q", s, c.agent, c.target)
			}
			if why := c.before(tr); why != "" {
				t.Fatalf("held at the wrong point: %s", why)
			}
			r.d.SetBreakpoints(nil)
			r.resume(t, agents.Resume{Action: traces.ActionContinue, By: "test"})
			st, tr := r.end(t)
			if st != c.wantStatus {
				t.Fatalf("status %s; want %s", st, c.wantStatus)
			}
			if p, q := kinds(tr, traces.KindPaused), kinds(tr, traces.KindContinued); len(p) != 1 || len(q) != 1 || q[0].Seq < p[0].Seq {
				t.Fatalf("paused %v, continued %v", p, q)
			}
		})
	}
}

// TestBreakpointRefusesWhatItCannotEdit: a held run refuses an edit its stop has nothing for,
// and a run not held refuses to continue.
func TestBreakpointRefusesWhatItCannotEdit(t *testing.T) {
	r := debugRun(t, "supervisor", false, "tool:search")
	r.next(t)
	err := r.d.Continue(agents.Resume{Reply: &traces.Message{Content: "x"}})
	if traces.ErrorCode(err) != traces.CodeInvalid {
		t.Fatalf("reply edit at a tool breakpoint: %v; want invalid", err)
	}
	r.d.SetBreakpoints(nil)
	r.resume(t, agents.Resume{})
	r.end(t)
	if err := r.d.Continue(agents.Resume{}); traces.ErrorCode(err) != traces.CodeConflict {
		t.Fatalf("continue of a run not held: %v; want conflict", err)
	}
}

// TestBreakpointStepToAKind: a step with a kind goes on to the next moment of that kind, not the
// next handoff: from the transfer to research_agent, "model" holds before research_agent's
// model call, "tool" at its tool call; the paused events say what a step held at (on); a kind
// with another action, or an unknown one, is refused.
func TestBreakpointStepToAKind(t *testing.T) {
	r := debugRun(t, "supervisor", false, "transfer:research_agent")
	r.next(t)
	if err := r.d.Continue(agents.Resume{Action: traces.ActionContinue, Step: traces.BreakModel}); traces.ErrorCode(err) != traces.CodeInvalid {
		t.Fatalf("continue with a step kind: %v; want invalid", err)
	}
	if err := r.d.Continue(agents.Resume{Action: traces.ActionStep, Step: "handoff"}); traces.ErrorCode(err) != traces.CodeInvalid {
		t.Fatalf("step to an unknown kind: %v; want invalid", err)
	}
	r.resume(t, agents.Resume{Action: traces.ActionStep, Step: traces.BreakModel, By: "test"})
	s, tr := r.next(t)
	if s.Break != traces.BreakStep || s.Agent != "research_agent" || s.Input == nil {
		t.Fatalf("step to model held at %+v; want before research_agent's model call", s)
	}
	if p := kinds(tr, traces.KindPaused); p[len(p)-1].Pause.On != traces.BreakModel {
		t.Fatalf("paused = %+v; want on model", p[len(p)-1].Pause)
	}
	r.resume(t, agents.Resume{Action: traces.ActionStep, Step: traces.BreakTool, By: "test"})
	s, _ = r.next(t)
	if s.Break != traces.BreakStep || s.Agent != "research_agent" || s.Target == "" || s.Target == "transfer_to_agent" {
		t.Fatalf("step to tool held at %+v; want research_agent's tool call", s)
	}
	r.resume(t, agents.Resume{Action: traces.ActionContinue, By: "test"})
	if st, _ := r.end(t); st != traces.StatusCompleted {
		t.Fatalf("status %s", st)
	}
}
