package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/cli"
	"github.com/baton-dev/baton/traces"
)

// runHeld runs `baton run` with args, answering where it is held with the lines of answers, and
// returns its exit code, its output and its trace.
func runHeld(t *testing.T, answers string, args ...string) (int, string, traces.Trace) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "t.json")
	t.Cleanup(cli.SetStdin(strings.NewReader(answers)))
	var stdout, stderr bytes.Buffer
	code := cli.Run(context.Background(), append(append([]string{"run"}, args...), "--out", out), &stdout, &stderr)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("exit %d, stderr %s: %v", code, stderr.String(), err)
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), tr
}

// TestRunBreakStepsAndQuits: `baton run --break` prints where the run is held and reads what to
// do: a line it cannot use is said and asked again, s steps to the next handoff, s model to the
// next model call, q aborts.
func TestRunBreakStepsAndQuits(t *testing.T) {
	code, out, tr := runHeld(t, "x\ns\ns model\nq\n", "supervisor", "--break", "transfer:research_agent")
	if code == 0 || tr.Run.Status != traces.StatusCanceled {
		t.Errorf("exit %d, status %s; want a failure exit and a canceled run", code, tr.Run.Status)
	}
	for _, want := range []string{
		// Where it is held, what the target will be fed (research_agent's instruction is not in
		// the trace yet: it has not called its model), and the question.
		"paused at a transfer breakpoint: supervisor transfers to research_agent\n  What research_agent will be fed after its instruction (",
		"\n    user      [user input]     Find US and NY GDP in 2024.",
		"[c]ontinue, [s]tep [KIND], [q]uit, e FILE (edit)> ",
		`"x": answer c, s, s KIND (transfer, agenttool, model, tool...), q or e FILE`,
		"paused at a step breakpoint: research_agent hands over to supervisor (deterministic)",
		"\n    system    [instruction]    You are a supervisor",        // supervisor's, from its earlier calls
		"paused at a step breakpoint: supervisor calls its model with", // s model: the next model call, not the next handoff
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var actions []string
	for _, e := range tr.Events {
		if e.Kind == traces.KindContinued && e.Pause.By == "cli" {
			actions = append(actions, e.Pause.Action)
		}
	}
	if strings.Join(actions, ",") != "step,step,abort" {
		t.Errorf("continued actions = %v; want step, step, abort", actions)
	}
}

// TestRunBreakEditsFromAFile: e FILE continues with the edit the file holds.
func TestRunBreakEditsFromAFile(t *testing.T) {
	edit := filepath.Join(t.TempDir(), "edit.json")
	if err := os.WriteFile(edit, []byte(`{"reply":{"content":"maths first","tool_calls":[{"name":"transfer_to_agent","arguments":"{\"agent_name\":\"math_agent\"}"}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, tr := runHeld(t, "e "+edit+"\n", "supervisor", "--break", "transfer:research_agent")
	if code != 0 || tr.Run.Status != traces.StatusCompleted {
		t.Fatalf("exit %d, status %s:\n%s", code, tr.Run.Status, out)
	}
	for _, e := range tr.Events {
		if e.Kind == traces.KindTransfer {
			if e.Transfer.To != "math_agent" {
				t.Errorf("first transfer to %s; want math_agent, as edited", e.Transfer.To)
			}
			break
		}
	}
	if !strings.Contains(out, "edited: transfer target: research_agent → math_agent") {
		t.Errorf("the printed continued event does not say what was edited:\n%s", out)
	}
}

// TestRunBreakGivesAToolResult: e FILE with a result, held before multiply, continues with that
// result in the tool's place, and the printed continued event says the tool was not run.
func TestRunBreakGivesAToolResult(t *testing.T) {
	edit := filepath.Join(t.TempDir(), "edit.json")
	if err := os.WriteFile(edit, []byte(`{"result": "7"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, tr := runHeld(t, "e "+edit+"\n", "supervisor", "--break", "tool:multiply")
	if code != 0 || tr.Run.Status != traces.StatusCompleted {
		t.Fatalf("exit %d, status %s:\n%s", code, tr.Run.Status, out)
	}
	if !strings.Contains(out, "edited: tool result given: multiply was not run") {
		t.Errorf("the printed continued event does not say the result was given:\n%s", out)
	}
	for _, e := range tr.Events {
		if e.Kind == traces.KindToolFinished && e.Tool.Name == "multiply" && e.Tool.Result != "7" {
			t.Errorf("multiply finished with %q; want the result given", e.Tool.Result)
		}
	}
}
