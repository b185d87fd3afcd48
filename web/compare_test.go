package web_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// expected is what a row of the comparison must say, worked out here from the trace's events
// alone.
type expected struct {
	calls, prompt, largest int
	largestSeq             int64
	crossed                int
	byModel, byCode        int
	transfers              int
	wallMS                 int
}

func expect(t *testing.T, tr traces.Trace) expected {
	t.Helper()
	var x expected
	requests := map[string]string{} // callee -> its latest request
	var start, end traces.Event
	for _, e := range tr.Events {
		switch e.Kind {
		case traces.KindModelFinished:
			if e.Model.Usage == nil {
				t.Fatalf("#%d: the scripted model reported no usage", e.Seq)
			}
			x.calls++
			p := e.Model.Usage.PromptTokens
			x.prompt += p
			if p > x.largest {
				x.largest, x.largestSeq = p, e.Seq
			}
		case traces.KindAgentToolEnter:
			requests[e.AgentTool.Callee] = e.AgentTool.Request
			x.byModel++
		case traces.KindAgentToolExit:
			x.crossed++
		case traces.KindAgentStarted:
			for _, m := range e.AgentRun.Input {
				if strings.HasPrefix(m.Content, "For context: [") || m.Role == "user" && m.Content == requests[e.Agent] {
					x.crossed++
				}
			}
			if e.AgentRun.Via == "workflow" {
				x.byCode++
			}
		case traces.KindTransfer:
			x.transfers++
			if e.Transfer.Mode == traces.TransferLLM {
				x.byModel++
			} else {
				x.byCode++
			}
		case traces.KindRunStarted:
			start = e
		case traces.KindRunFinished:
			end = e
		}
	}
	x.wallMS = int(end.Time.Sub(start.Time).Milliseconds())
	return x
}

// TestComparisonFiguresComeFromTheTraces runs one task under four mechanisms and checks each
// figure of the table against the runs' events, and each cell's links against the events they
// name.
func TestComparisonFiguresComeFromTheTraces(t *testing.T) {
	flows := []string{"supervisor-agenttool", "supervisor", "transfer", "pipeline"}
	input := "Find US and NY GDP in 2024. What % of US GDP was NY?"
	var trs []traces.Trace
	for _, f := range flows {
		trs = append(trs, runFlow(t, f, input))
	}
	c := web.NewComparison(trs)
	if len(c.Rows) != len(flows) || !c.SameInput || c.Estimated {
		t.Fatalf("comparison: %d rows, same input %v, estimated %v", len(c.Rows), c.SameInput, c.Estimated)
	}
	for i, row := range c.Rows {
		tr := trs[i]
		t.Run(row.Flow, func(t *testing.T) {
			x := expect(t, tr)
			kinds := func(cell web.Cell, want ...traces.Kind) {
				t.Helper()
				for _, seq := range cell.Refs {
					if k := event(t, tr, seq).Kind; !slices.Contains(want, k) {
						t.Errorf("cell %q links #%d, a %s", cell.Text, seq, k)
					}
				}
			}
			if row.Flow != flows[i] || row.RunID != tr.Run.ID || row.Status != traces.StatusCompleted {
				t.Errorf("row %+v", row)
			}
			if row.ModelCalls.N != x.calls || len(row.ModelCalls.Refs) != x.calls {
				t.Errorf("model calls %d (%d links), want %d", row.ModelCalls.N, len(row.ModelCalls.Refs), x.calls)
			}
			kinds(row.ModelCalls, traces.KindModelFinished)
			if row.PromptTokens.N != x.prompt || row.PromptTokens.Text != strconv.Itoa(x.prompt) {
				t.Errorf("prompt tokens %d %q, want %d", row.PromptTokens.N, row.PromptTokens.Text, x.prompt)
			}
			if row.LargestPrompt.N != x.largest || len(row.LargestPrompt.Refs) != 1 || row.LargestPrompt.Refs[0] != x.largestSeq {
				t.Errorf("largest prompt %+v, want %d at #%d", row.LargestPrompt, x.largest, x.largestSeq)
			}
			if row.Crossed.N != x.crossed {
				t.Errorf("crossed %d, want %d", row.Crossed.N, x.crossed)
			}
			kinds(row.Crossed, traces.KindAgentStarted, traces.KindAgentToolExit)
			if row.ByModel != x.byModel || row.ByCode != x.byCode || len(row.Handoffs) != x.byModel+x.byCode {
				t.Errorf("routes by model %d, by code %d (%d), want %d and %d", row.ByModel, row.ByCode, len(row.Handoffs), x.byModel, x.byCode)
			}
			for _, r := range row.Handoffs {
				if k := event(t, tr, r.Seq).Kind; k != traces.KindTransfer && k != traces.KindAgentToolEnter && k != traces.KindAgentStarted {
					t.Errorf("route %+v links a %s", r, k)
				}
			}
			transfers := 0
			for _, a := range row.Actions {
				if a.Kind == traces.KindTransfer && a.Crossed {
					transfers++
				}
				if event(t, tr, a.Seq).Kind != a.Kind {
					t.Errorf("action %+v links a %s", a, event(t, tr, a.Seq).Kind)
				}
			}
			if transfers != x.transfers {
				t.Errorf("%d transfer actions crossed, want %d", transfers, x.transfers)
			}
			if row.Wall.N != x.wallMS || len(row.Wall.Refs) != 1 || event(t, tr, row.Wall.Refs[0]).Kind != traces.KindRunFinished {
				t.Errorf("wall %+v, want %d ms", row.Wall, x.wallMS)
			}
		})
	}
	// What the mechanisms are known to differ by: the AgentTool supervisor crosses no transfer
	// and feeds its specialists smaller prompts than the prebuilt supervisor.
	agentTool, prebuilt := c.Rows[0], c.Rows[1]
	if len(agentTool.Actions) != 0 || agentTool.ByModel != 2 || prebuilt.ByCode != 2 {
		t.Errorf("agenttool actions %v, routes by model %d; supervisor routes by code %d", agentTool.Actions, agentTool.ByModel, prebuilt.ByCode)
	}
	if agentTool.PromptTokens.N >= prebuilt.PromptTokens.N {
		t.Errorf("AgentTool supervisor's prompts (%d tokens) not smaller than the prebuilt supervisor's (%d)", agentTool.PromptTokens.N, prebuilt.PromptTokens.N)
	}
}

// TestComparisonEstimatesWhereNoUsage: a model that reports no usage has its prompt counted by
// the tokenizer, and the table says so.
func TestComparisonEstimatesWhereNoUsage(t *testing.T) {
	tr := runFlow(t, "supervisor", "")
	want := 0
	for i := range tr.Events {
		e := &tr.Events[i]
		if e.Kind == traces.KindModelFinished {
			e.Model.Usage = nil
		}
		if e.Kind == traces.KindModelStarted {
			for _, m := range e.Model.Input {
				want += web.CountTokens(m.Content)
				for _, c := range m.ToolCalls {
					want += web.CountTokens(c.Name) + web.CountTokens(c.Arguments)
				}
			}
		}
	}
	c := web.NewComparison([]traces.Trace{tr})
	row := c.Rows[0]
	if !c.Estimated || row.PromptTokens.N != want || !strings.Contains(row.PromptTokens.Text, web.Estimator) {
		t.Errorf("estimated %v, prompt %+v, want %d", c.Estimated, row.PromptTokens, want)
	}
}

// TestComparisonTellsAnExitThatEndedTheRun: on a plain eino app whose root calls an agent that
// exits (the exit stops at the AgentTool boundary) and then exits itself (ending the run), the
// table tells the two apart; the catalogue's flows, none of which ends by an exit, have no such
// action.
func TestComparisonTellsAnExitThatEndedTheRun(t *testing.T) {
	flow := agents.Flow{
		Name: "exits", DefaultInput: "Refund order 7.",
		Scripts: map[string]agents.Script{
			"desk":   agents.NewScript(agents.Do(agents.Ask("refund", "refund order 7")), agents.Do(agents.Exit("Refunded, case closed."))),
			"refund": agents.NewScript(agents.Do(agents.Exit("Refund R-7 done."))),
		},
		Build: func(ctx context.Context, models agents.ModelFor) (adk.Agent, error) {
			refund, err := agents.NewChatAgent(ctx, models, adk.ChatModelAgentConfig{Name: "refund", Description: "Refunds.", Instruction: "Refund, then exit.", Exit: adk.ExitTool{}})
			if err != nil {
				return nil, err
			}
			var conf adk.ToolsConfig
			conf.Tools = []tool.BaseTool{adk.NewAgentTool(ctx, refund)}
			return agents.NewChatAgent(ctx, models, adk.ChatModelAgentConfig{Name: "desk", Description: "Front desk.", Instruction: "Call refund, then exit.", ToolsConfig: conf, Exit: adk.ExitTool{}})
		},
	}
	rec := traces.NewRecording(traces.Run{ID: "r-exits", Flow: flow.Name, Input: flow.DefaultInput, Model: "scripted"}, nil)
	if status := agentsRun(flow, rec); status != traces.StatusCompleted {
		t.Fatalf("the exits app ended %s", status)
	}
	tr := rec.Snapshot()
	// From the trace alone: which exit has no start of any agent, model or tool after it.
	var exits []traces.Event
	lastStart := int64(0)
	for _, e := range tr.Events {
		switch e.Kind {
		case traces.KindExit:
			exits = append(exits, e)
		case traces.KindAgentStarted, traces.KindModelStarted, traces.KindToolStarted:
			lastStart = e.Seq
		}
	}
	if len(exits) != 2 || exits[0].Agent != "refund" || exits[1].Agent != "desk" || exits[0].Seq > lastStart || exits[1].Seq < lastStart {
		t.Fatalf("exits %+v, last start #%d: want refund's inside the run, desk's after all work", exits, lastStart)
	}
	row := web.NewComparison([]traces.Trace{tr}).Rows[0]
	want := []web.Action{
		{Kind: traces.KindExit, Agent: "refund", Crossed: false, Seq: exits[0].Seq},
		{Kind: traces.KindExit, Agent: "desk", Crossed: true, Ended: true, Seq: exits[1].Seq},
	}
	if !slices.Equal(row.Actions, want) {
		t.Errorf("actions %+v, want %+v", row.Actions, want)
	}

	for _, name := range []string{"supervisor", "agenttool-exit", "workflow"} {
		for _, a := range web.NewComparison([]traces.Trace{runFlow(t, name, "")}).Rows[0].Actions {
			if a.Ended {
				t.Errorf("%s: %s of %s (#%d) said to end the run", name, a.Kind, a.Agent, a.Seq)
			}
		}
	}
}
