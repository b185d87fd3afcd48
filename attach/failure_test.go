package attach_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// TestTransferToAnUnknownAgent has a model transfer to an agent that does not exist. eino says so
// only on the Runner's stream; the wrapper records its error, and the option, which sees only
// callbacks, records what it saw (see TestRefusedTransferSaysWhoseWords). Either way the transfer is recorded failed,
// with the reason, then the run's error, then the end of the agent that transferred, in that
// order every time.
func TestTransferToAnUnknownAgent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	build := func() *adk.Runner {
		router, err := agents.NewChatAgent(ctx, attachtest.Scripted("router", nil, agents.Do(agents.Transfer("ghost_agent"))),
			adk.ChatModelAgentConfig{Name: "router", Description: "Routes.", Instruction: "Route."})
		if err != nil {
			t.Fatal(err)
		}
		helper, err := agents.NewChatAgent(ctx, attachtest.Scripted("helper", nil, agents.Say("hi")),
			adk.ChatModelAgentConfig{Name: "helper", Description: "Helps.", Instruction: "Help."})
		if err != nil {
			t.Fatal(err)
		}
		root, err := adk.SetSubAgents(ctx, router, []adk.Agent{helper})
		if err != nil {
			t.Fatal(err)
		}
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root})
	}
	dir := t.TempDir()
	b := attach.New(attach.Config{Dir: dir})
	const wrapped = 5 // the wrapper's order used to depend on timing
	attachtest.Drain(t, build().Query(ctx, "help me", b.Option()))
	for range wrapped {
		attachtest.Drain(t, b.Run(ctx, build(), []adk.Message{schema.UserMessage("help me")}))
	}
	for i, tr := range attachtest.ReadTraces(t, b, dir, 1+wrapped) {
		var errs, tail []string
		var transfer *traces.Transfer
		for _, e := range tr.Events {
			switch e.Kind {
			case traces.KindError:
				errs = append(errs, e.Agent+": "+e.Error.Message)
			case traces.KindTransfer:
				transfer = e.Transfer
			}
		}
		for _, e := range tr.Events[len(tr.Events)-4:] {
			tail = append(tail, string(e.Kind)+" "+e.Agent)
		}
		if tr.Run.Status != traces.StatusFailed || len(errs) != 1 || !strings.Contains(errs[0], "ghost_agent") || !strings.HasPrefix(errs[0], "router: ") {
			t.Errorf("run %s: status %s, errors %q: want failed, with one error of router naming ghost_agent", tr.Run.ID, tr.Run.Status, errs)
		}
		if transfer == nil || transfer.Outcome != traces.TransferFailed || "router: "+transfer.Error != errs[0] {
			t.Errorf("run %s: transfer %+v, want failed with the run's error", tr.Run.ID, transfer)
		}
		if i > 0 && !strings.HasPrefix(transfer.Error, "transfer failed: agent 'ghost_agent' not found") {
			t.Errorf("run %s: the wrapper did not record eino's own words: %q", tr.Run.ID, transfer.Error)
		}
		if want := []string{"transfer router", "error router", "agent.finished router", "run.finished "}; !slices.Equal(tail, want) {
			t.Errorf("run %s ends %q, want %q", tr.Run.ID, tail, want)
		}
	}
}

// TestPanickingToolEndsBeforeItsAgent has a model call two tools at once: ping answers, boom
// panics. eino recovers the panic in its graph and fails the agent; boom gets a start callback and
// never an end. Its call is closed where its agent's work ended, as never returned, before the
// error and the agent's end, not at the end of the run; ping's end is its own.
func TestPanickingToolEndsBeforeItsAgent(t *testing.T) {
	root := func(t *testing.T) adk.Agent {
		ctx := context.Background()
		boom, err := utils.InferTool("boom", "Blows up.", func(context.Context, struct{}) (string, error) { panic("kaboom") })
		if err != nil {
			t.Fatal(err)
		}
		ping, err := utils.InferTool("ping", "Answers.", func(context.Context, struct{}) (string, error) { return "pong", nil })
		if err != nil {
			t.Fatal(err)
		}
		a, err := agents.NewChatAgent(ctx, attachtest.Scripted("worker", nil, agents.Do(agents.Call("ping", struct{}{}), agents.Call("boom", struct{}{}))),
			adk.ChatModelAgentConfig{Name: "worker", Description: "Works.", Instruction: "Work.",
				ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{ping, boom}}}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	recordEachWay(t, root, "Work.", func(t *testing.T, tr traces.Trace, _ []string) {
		if tr.Run.Status != traces.StatusFailed {
			t.Fatalf("run %s, want failed", tr.Run.Status)
		}
		var tail []string
		ends := map[string]*traces.ToolCall{}
		for _, e := range tr.Events {
			if e.Kind == traces.KindToolFinished {
				ends[e.Tool.Name] = e.Tool
			}
			if e.Kind == traces.KindToolFinished && e.Tool.Name == "boom" || len(tail) > 0 {
				tail = append(tail, string(e.Kind)+" "+e.Agent)
			}
		}
		want := []string{"tool.finished worker", "error worker", "agent.finished worker", "run.finished "}
		if !slices.Equal(tail, want) {
			t.Errorf("from boom's end on: %q, want %q:\n%s", tail, want, attachtest.Story(tr))
		}
		if b := ends["boom"]; b == nil || !strings.Contains(b.Error, "never returned") {
			t.Errorf("boom's end %+v, want an error saying it never returned", b)
		}
		if p := ends["ping"]; p == nil || p.Error != "" || p.Result != "pong" {
			t.Errorf("ping's end %+v, want its own result", p)
		}
	})
}

// TestRefusedTransferSaysWhoseWords has sales transfer to support, an agent eino cannot reach
// from it, in three shapes: sales as the root, as a step of a sequence, and as an AgentTool that
// boss calls. eino says why in its own words (transfer failed: agent 'support' not found...), on
// the Runner's event stream; a workflow's copy of events passes it on, and so does an AgentTool
// call, which fails with it. Only at the root under the run option does no callback see it: the
// recorder then says what it saw, and that eino's words were out of its reach. The transfer's
// error_by says whose words its error is; the run's error repeats them.
func TestRefusedTransferSaysWhoseWords(t *testing.T) {
	const einoWords = "transfer failed: agent 'support' not found when transferring from 'sales'"
	sales := func(t *testing.T) adk.Agent {
		a, err := adk.SetSubAgents(context.Background(), chat(t, "sales", agents.Do(agents.Transfer("support"))),
			[]adk.Agent{chat(t, "billing", agents.Say("Billed."))})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, tc := range []struct {
		name     string
		root     func(t *testing.T) adk.Agent
		optionBy string // whose words the option records; the wrapper always has eino's
	}{
		{"root", sales, traces.ErrorByRecorder},
		{"sequence step", func(t *testing.T) adk.Agent {
			seq, err := adk.NewSequentialAgent(context.Background(), &adk.SequentialAgentConfig{Name: "desk", Description: "Sells.",
				SubAgents: []adk.Agent{sales(t), chat(t, "closer", agents.Say("Closed."))}})
			if err != nil {
				t.Fatal(err)
			}
			return seq
		}, traces.ErrorByEino},
		{"agenttool", func(t *testing.T) adk.Agent {
			boss, err := agents.NewChatAgent(context.Background(), attachtest.Scripted("boss", nil, agents.Do(agents.Ask("sales", "Sell."))),
				adk.ChatModelAgentConfig{Name: "boss", Description: "Bosses.", Instruction: "Delegate.",
					ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{adk.NewAgentTool(context.Background(), sales(t))}}}})
			if err != nil {
				t.Fatal(err)
			}
			return boss
		}, traces.ErrorByEino},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recordEachWay(t, tc.root, "Sell it.", func(t *testing.T, tr traces.Trace, stream []string) {
				if !strings.Contains(strings.Join(stream, "\n"), einoWords) {
					t.Fatalf("the Runner's stream lacks eino's words: %q", stream)
				}
				wantBy := tc.optionBy
				if strings.HasPrefix(t.Name(), t.Name()[:strings.LastIndex(t.Name(), "/")]+"/wrapper") {
					wantBy = traces.ErrorByEino
				}
				var transfer *traces.Transfer
				var transferSeq int64
				var salesErrors []string
				for _, e := range tr.Events {
					switch {
					case e.Kind == traces.KindTransfer:
						transfer, transferSeq = e.Transfer, e.Seq
					case e.Kind == traces.KindError && e.Agent == "sales":
						salesErrors = append(salesErrors, e.Error.Message)
					}
				}
				if transfer == nil || transfer.Outcome != traces.TransferFailed || transfer.ErrorBy != wantBy {
					t.Fatalf("transfer %+v, want failed, in the words of %s:\n%s", transfer, wantBy, attachtest.Story(tr))
				}
				switch wantBy {
				case traces.ErrorByEino:
					if transfer.Error != einoWords {
						t.Errorf("transfer error %q, want eino's words %q", transfer.Error, einoWords)
					}
				case traces.ErrorByRecorder:
					if !strings.Contains(transfer.Error, `"support"`) || !strings.Contains(transfer.Error, `"sales"`) ||
						!strings.Contains(transfer.Error, "only on the Runner's event stream") {
						t.Errorf("transfer error %q: want the recorder to name both agents and say where eino's words went", transfer.Error)
					}
				}
				if len(salesErrors) != 1 || salesErrors[0] != transfer.Error {
					t.Errorf("sales' errors %q, want the transfer's error once", salesErrors)
				}
				in, err := web.NewInspection(tr, transferSeq)
				if err != nil {
					t.Fatal(err)
				}
				words := ""
				for _, f := range in.Facts {
					if f.Label == web.ErrorWordsLabel {
						words = f.Value
					}
				}
				if wantWords := map[string]string{traces.ErrorByEino: "eino: ", traces.ErrorByRecorder: "Baton: "}[wantBy]; !strings.HasPrefix(words, wantWords) {
					t.Errorf("the page says the error is in the words of %q, want %q...", words, wantWords)
				}
			})
		})
	}
}
