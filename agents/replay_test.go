package agents_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/traces"
)

// recordOnFake records the supervisor flow on the fake server, then closes the server.
func recordOnFake(t *testing.T, streaming bool) traces.Trace {
	t.Helper()
	fake := agentstest.NewFakeOpenAI(t, supervisorReplies()...)
	tr := runOn(t, "supervisor", "What share of US GDP was New York's?", fakeModel(t, fake, "k", 0), streaming)
	fake.Close()
	if tr.Run.Status != traces.StatusCompleted {
		t.Fatalf("recording ended %s: %s", tr.Run.Status, tr.Run.Error)
	}
	return tr
}

// replayFile writes tr as a trace file and returns the model replay:FILE.
func replayFile(t *testing.T, tr traces.Trace) *agents.Model {
	t.Helper()
	data, err := traces.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "recorded.trace.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := agents.ParseModel("replay:"+file, agents.ProviderEnv{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestReplayReproducesARealModelRun(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(map[bool]string{false: "generate", true: "stream"}[streaming], func(t *testing.T) {
			recorded := recordOnFake(t, streaming)
			m := replayFile(t, recorded)
			if flow, input, ok := m.Replays(); !ok || flow != "supervisor" || input != recorded.Run.Input {
				t.Fatalf("Replays() = %q, %q, %v", flow, input, ok)
			}
			replayed := runOn(t, "supervisor", recorded.Run.Input, m, streaming)
			if replayed.Run.Status != traces.StatusCompleted {
				t.Fatalf("replay ended %s: %s", replayed.Run.Status, replayed.Run.Error)
			}
			if got, want := traceStory(replayed), traceStory(recorded); got != want {
				t.Errorf("replayed story differs from the recorded one:\n%s\nwant:\n%s", got, want)
			}
			if got, want := outputs(replayed), outputs(recorded); !slices.Equal(got, want) {
				t.Errorf("replayed outputs = %q\nwant %q", got, want)
			}
		})
	}
}

// outputs lists each model reply's agent, text, calls and tokens.
func outputs(tr traces.Trace) []string {
	var out []string
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelFinished && e.Model.Output != nil {
			s := e.Agent + ": " + e.Model.Output.Content
			for _, c := range e.Model.Output.ToolCalls {
				s += " " + c.ID + " " + c.Name + c.Arguments
			}
			if u := e.Model.Usage; u != nil {
				s += " tokens " + strings.Repeat("|", u.TotalTokens)
			}
			out = append(out, s)
		}
	}
	return out
}

func TestReplayDivergence(t *testing.T) {
	recorded := recordOnFake(t, false)
	cases := []struct {
		name, flow string
		edit       func(tr *traces.Trace)
		agent      string
		want       string
	}{
		{"another agent asks", "transfer", nil, "router",
			"model call 1 (router): another agent asks: router made no model call in the recording; the recording's next call is 1, by supervisor"},
		{"tools differ", "supervisor-agenttool", nil, "supervisor",
			"model call 1 (supervisor): the tools offered differ from those of recorded call 1: no longer offered: transfer_to_agent; newly offered: research_agent, math_agent"},
		{"more calls than recorded", "supervisor", dropLastModelCall, "supervisor",
			"model call 7 (supervisor): more calls than recorded: supervisor made 2 in the recording"},
		{"fewer calls than recorded", "supervisor", repeatLastModelCall, "supervisor",
			"model call 8 (supervisor): fewer calls than recorded: the run ended after 7 of the recording's 8 calls; recorded call 8, by supervisor, was never asked for"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := recorded
			tr.Events = slices.Clone(recorded.Events)
			if c.edit != nil {
				c.edit(&tr)
			}
			replayed := runOn(t, c.flow, tr.Run.Input, replayFile(t, tr), false)
			msg := finalError(t, replayed)
			if !strings.Contains(msg, c.want) {
				t.Errorf("run error = %q\nwant it to say %q", msg, c.want)
			}
			var blamed []string
			for _, e := range replayed.Events {
				if e.Kind == traces.KindError {
					blamed = append(blamed, e.Agent)
				}
			}
			if !slices.Equal(blamed, []string{c.agent}) {
				t.Errorf("error events blame %q, want exactly %q (where the page marks the divergence)", blamed, c.agent)
			}
			// A call that diverged is itself marked failed; a run that ended early has no such call.
			failedCall := slices.ContainsFunc(replayed.Events, func(e traces.Event) bool {
				return e.Kind == traces.KindModelFinished && e.Agent == c.agent && strings.Contains(e.Model.Error, c.want)
			})
			if failedCall != !strings.HasPrefix(c.name, "fewer") {
				t.Errorf("a model.finished of %s failed with the divergence: %v", c.agent, failedCall)
			}
		})
	}
}

// dropLastModelCall removes the trace's last model call (the supervisor's answer).
func dropLastModelCall(tr *traces.Trace) {
	id := lastModelID(*tr)
	tr.Events = slices.DeleteFunc(tr.Events, func(e traces.Event) bool { return e.Model != nil && e.Model.ID == id })
	renumber(tr)
}

// repeatLastModelCall records the last model call twice, as if the supervisor had been asked again.
func repeatLastModelCall(tr *traces.Trace) {
	id := lastModelID(*tr)
	for _, e := range slices.Clone(tr.Events) {
		if e.Model != nil && e.Model.ID == id {
			m := *e.Model
			m.ID += "-again"
			e.Model = &m
			tr.Events = slices.Insert(tr.Events, len(tr.Events)-1, e)
		}
	}
	renumber(tr)
}

func lastModelID(tr traces.Trace) string {
	for i := len(tr.Events) - 1; i >= 0; i-- {
		if m := tr.Events[i].Model; m != nil {
			return m.ID
		}
	}
	return ""
}

func renumber(tr *traces.Trace) {
	for i := range tr.Events {
		tr.Events[i].Seq = int64(i + 1)
	}
}

func TestReplayOfATraceWithoutModelCalls(t *testing.T) {
	_, err := agents.ReplayOf(traces.Trace{Run: traces.Run{ID: "r-empty"}})
	if traces.ErrorCode(err) != traces.CodeInvalid || !strings.Contains(err.Error(), "nothing to replay") {
		t.Fatalf("ReplayOf(empty) = %v", err)
	}
}
