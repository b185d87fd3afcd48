package agents_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/cloudwego/eino/adk/prebuilt/deep"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// TestDeepFlow: the deep agent keeps its todo list in the session through write_todos, each
// write seen as it happens; its task tool runs each sub-agent as an AgentTool, in a frame of its
// own, fed only the task's description.
func TestDeepFlow(t *testing.T) {
	modes(t, func(t *testing.T, streaming bool) {
		f := recordFacts(t, "deep", streaming)
		f.requireStatus(traces.StatusCompleted)

		var statuses []string
		for _, e := range f.of(traces.KindSessionSet, "") {
			if e.Session.Key != deep.SessionKeyTodos {
				continue
			}
			var todos []deep.TODO
			if err := json.Unmarshal(e.Session.Value, &todos); err != nil || len(todos) != 2 {
				t.Fatalf("todo list %s: %v", e.Session.Value, err)
			}
			if e.Session.SetBy != "pricing_lead" {
				t.Errorf("todo list set by %q, want pricing_lead", e.Session.SetBy)
			}
			statuses = append(statuses, todos[0].Status+"/"+todos[1].Status)
		}
		assertEqual(t, "todo statuses, write after write", statuses,
			[]string{"in_progress/pending", "completed/in_progress", "completed/completed"})

		var frames []string
		for _, e := range f.of(traces.KindAgentToolEnter, "pricing_lead") {
			frames = append(frames, e.AgentTool.Callee)
			// The callee's model sees its instruction and the task's description, nothing of
			// the lead's history; the frame shows that description as the request it received.
			var task struct {
				Description  string `json:"description"`
				SubagentType string `json:"subagent_type"`
			}
			if err := json.Unmarshal([]byte(f.toolArgs(e.AgentTool.CallID)), &task); err != nil || task.SubagentType != e.AgentTool.Callee {
				t.Fatalf("the task call %s has arguments %q, want %s as its subagent_type", e.AgentTool.CallID, f.toolArgs(e.AgentTool.CallID), e.AgentTool.Callee)
			}
			if e.AgentTool.Request != task.Description || e.AgentTool.InputMode != traces.AgentToolInputRequest {
				t.Errorf("the frame of %s shows request %q (%s), want the task's description %q (request)",
					e.AgentTool.Callee, e.AgentTool.Request, e.AgentTool.InputMode, task.Description)
			}
			in := f.modelInputs(e.AgentTool.Callee)[0]
			if len(in) != 2 || in[1].Role != "user" || in[1].Content != task.Description || contextFrom(in, "pricing_lead") {
				t.Errorf("%s was fed %s, want only the task's description %q", e.AgentTool.Callee, joined(in), task.Description)
			}
		}
		assertEqual(t, "sub-agents run through task", frames, []string{"market_researcher", "pricing_analyst"})
		var tasks []string
		for _, e := range f.of(traces.KindToolStarted, "pricing_lead") {
			if e.Tool.Name == "task" {
				tasks = append(tasks, e.Tool.CallID)
			}
		}
		if len(tasks) != 2 || slices.ContainsFunc(f.of(traces.KindAgentToolEnter, ""), func(e traces.Event) bool { return !slices.Contains(tasks, e.AgentTool.CallID) }) {
			t.Errorf("the AgentTool frames are not the task calls %v", tasks)
		}
		if got := f.lastReply("pricing_lead"); got != agents.DeepAnswer {
			t.Errorf("pricing_lead answered %q", got)
		}
	})
}
