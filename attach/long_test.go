package attach_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/traces"
)

// TestLongConversationIsIngestedWhole: an app whose one agent calls its model 4,800 times, each
// call fed the whole history before it (a growing conversation that, written out whole, takes
// gigabytes), streams its run to Baton live: the run is accepted to the end, completed with
// every event, and its trace, imported again, is accepted whole.
func TestLongConversationIsIngestedWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("a run of 5,000 model calls")
	}
	const calls = 4800 // its trace within the import limit (8 MiB), each call naming its model
	base := startBaton(t, listen(t))
	b := attach.New(attach.Config{URL: base})
	defer b.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	flow := agentstest.LongTurns(calls-1, 1) // a call per tick, and one to answer
	root, err := flow.Build(ctx, func(agent string) (model.ToolCallingChatModel, error) {
		return agents.NewScriptedModel(agent, flow.Scripts[agent], nil), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root})
	attachtest.Drain(t, runner.Query(ctx, flow.DefaultInput, b.Option()))
	if err := b.Close(ctx); err != nil {
		t.Fatalf("the app's run did not reach Baton whole: %v", err)
	}
	tr := trace(t, base, awaitRun(t, base))
	if tr.Run.Status != traces.StatusCompleted {
		t.Fatalf("the run ended %s (%s), want completed", tr.Run.Status, tr.Run.Error)
	}
	models := 0
	var whole int64
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelStarted {
			models++
			whole += traces.InputSize(e.Model.Input)
		}
	}
	if models != calls {
		t.Fatalf("the trace holds %d model calls, want %d", models, calls)
	}
	if whole < traces.MaxExpandedInput {
		t.Fatalf("its inputs written out whole take %d bytes, within the budget: not the case of a conversation the budget used to refuse", whole)
	}
	data, err := traces.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(base+"/api/traces", "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("importing its %d-byte trace: %s", len(data), res.Status)
	}
}
