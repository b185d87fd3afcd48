package agents_test

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/traces"
)

// TestPipelineFlow checks what the trace of the pipeline says: deterministic hand-offs between
// the stages, the review team cut off from the earlier stages' messages but not from their
// session values.
func TestPipelineFlow(t *testing.T) {
	modes(t, func(t *testing.T, streaming bool) {
		f := recordFacts(t, "pipeline", streaming)
		f.requireStatus(traces.StatusCompleted)
		assertEqual(t, "transfers", f.transfers(), []string{
			"collector -> writer (deterministic)",
			"writer -> editor (deterministic)",
			"editor -> fact_checker (llm)",
			"fact_checker -> editor (llm)",
		})
		// A plain stage is fed the stage before it as "For context:" messages.
		writer := f.modelInputs("writer")[0]
		if !contextFrom(writer, "collector") {
			t.Errorf("writer was not fed collector's messages:%s", joined(writer))
		}
		// The wrapped team runs in a session of its own: its agents see the user's request and
		// each other, never the earlier stages.
		for i, in := range append(f.modelInputs("editor"), f.modelInputs("fact_checker")...) {
			if contextFrom(in, "collector") || contextFrom(in, "writer") || !hasContent(in, mustFlow(t, "pipeline").DefaultInput) {
				t.Errorf("team model call %d was fed the earlier stages or lacks the request:%s", i, joined(in))
			}
		}
		// editor's first agent.started shows what eino fed the team: the request alone.
		if start := f.of(traces.KindAgentStarted, "editor")[0].AgentRun.Input; len(start) != 1 || !hasContent(start, mustFlow(t, "pipeline").DefaultInput) {
			t.Errorf("editor's agent.started input is not the team's own (the request alone):%s", joined(start))
		}
		if in := f.modelInputs("editor")[1]; !contextFrom(in, "fact_checker") {
			t.Errorf("editor's second call was not fed fact_checker's work:%s", joined(in))
		}
		// Session values cross the boundary both ways.
		for key, setter := range map[string]string{"changes": "collector", "draft": "writer", "verified_changes": "fact_checker"} {
			if got := f.session(key).SetBy; got != setter {
				t.Errorf("%s set by %q, want %s", key, got, setter)
			}
		}
		if system := f.modelInputs("editor")[0][0]; !strings.Contains(system.Content, f.sessionText("draft")) {
			t.Errorf("editor's instruction lacks writer's draft from the session: %q", system.Content)
		}
		if got := f.toolResult("publish_notes"); !strings.Contains(got, "(3 verified changes)") {
			t.Errorf("publish_notes did not read fact_checker's verified_changes: %q", got)
		}
	})
}
