package attach_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// TestOutputKeyIsSetInItsStepsVisit runs a sequence whose first step, writer, answers into the
// session key draft: eino stores the answer during writer's own run, so the value is recorded
// inside writer's visit, before its agent.finished, not in the next step's.
func TestOutputKeyIsSetInItsStepsVisit(t *testing.T) {
	recordEachWay(t, writingDesk, "Write a tagline.", func(t *testing.T, tr traces.Trace, _ []string) {
		checkSetInVisit(t, tr, "draft", "writer", `"A tagline: ship it."`)
	})
}

// writingDesk builds desk (see newWritingDesk) for t.
func writingDesk(t *testing.T) adk.Agent {
	desk, err := newWritingDesk(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return desk
}

// newWritingDesk builds desk, a sequence of writer, which answers into the session key draft, and
// editor.
func newWritingDesk(ctx context.Context) (adk.Agent, error) {
	writer, err1 := agents.NewChatAgent(ctx, attachtest.Scripted("writer", nil, agents.Say("A tagline: ship it.")),
		adk.ChatModelAgentConfig{Name: "writer", Description: "Writes.", Instruction: "Write.", OutputKey: "draft"})
	editor, err2 := agents.NewChatAgent(ctx, attachtest.Scripted("editor", nil, agents.Say("Edited.")),
		adk.ChatModelAgentConfig{Name: "editor", Description: "Edits.", Instruction: "Edit."})
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	return adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "desk", Description: "Writes, then edits.",
		SubAgents: []adk.Agent{writer, editor}})
}

// checkSetInVisit checks that key is set once, to value, by agent, inside agent's visit: after its
// agent.started and before its agent.finished.
func checkSetInVisit(t *testing.T, tr traces.Trace, key, agent, value string) {
	t.Helper()
	open, sets := false, 0
	for _, e := range tr.Events {
		switch {
		case e.Agent == agent && e.Kind == traces.KindAgentStarted:
			open = true
		case e.Agent == agent && e.Kind == traces.KindAgentFinished:
			open = false
		case e.Kind == traces.KindSessionSet && e.Session.Key == key:
			sets++
			if !open || e.Session.SetBy != agent || e.Agent != agent || string(e.Session.Value) != value {
				t.Errorf("event %d sets %s to %s by %s (recorded under %s), inside %s's visit: %v; want %s by %s inside its visit:\n%s",
					e.Seq, key, e.Session.Value, e.Session.SetBy, e.Agent, agent, open, value, agent, attachtest.Story(tr))
			}
		}
	}
	if sets != 1 {
		t.Errorf("%s set %d times, want once:\n%s", key, sets, attachtest.Story(tr))
	}
}

// outputAppEnv makes the test binary the app of TestOutputKeyReachesBatonInItsVisit, streaming to
// its value.
const outputAppEnv = "BATON_TEST_OUTPUT_APP"

// outputApp runs boss, which calls desk (the sequence of TestOutputKeyIsSetInItsStepsVisit) as an
// AgentTool and then answers, recorded to url, and exits the moment its last event is read.
func outputApp(url string) {
	ctx := context.Background()
	desk, err := newWritingDesk(ctx)
	if err != nil {
		os.Exit(2)
	}
	boss, err := agents.NewChatAgent(ctx, attachtest.Scripted("boss", nil, agents.Do(agents.Ask("desk", "A tagline, please.")), agents.Say("Shipped.")),
		adk.ChatModelAgentConfig{Name: "boss", Description: "Delegates.", Instruction: "Delegate.",
			ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{adk.NewAgentTool(ctx, desk)}}}})
	if err != nil {
		os.Exit(2)
	}
	events := adk.NewRunner(ctx, adk.RunnerConfig{Agent: boss}).Query(ctx, "Write a tagline.", attach.New(attach.Config{URL: url}).Option())
	for {
		if _, ok := events.Next(); !ok {
			os.Exit(0)
		}
	}
}

// TestOutputKeyReachesBatonInItsVisit runs outputApp in a process of its own against a real
// server: the OutputKey value reaches the server inside writer's visit.
func TestOutputKeyReachesBatonInItsVisit(t *testing.T) {
	ln := listen(t)
	s, err := server.New(server.Config{Addr: ln.Addr().String(), Flows: []agents.Flow{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	base := "http://" + ln.Addr().String()

	app := exec.Command(os.Args[0], "-test.run=^$")
	app.Env = append(os.Environ(), outputAppEnv+"="+base)
	if out, err := app.CombinedOutput(); err != nil {
		t.Fatalf("app: %v\n%s", err, out)
	}
	tr := trace(t, base, awaitRun(t, base))
	if tr.Run.Status != traces.StatusCompleted {
		t.Fatalf("the run ended %s (%s), want completed", tr.Run.Status, tr.Run.Error)
	}
	checkSetInVisit(t, tr, "draft", "writer", `"A tagline: ship it."`)
}
