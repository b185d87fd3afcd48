package agentstest

import (
	"context"
	"fmt"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/adk/prebuilt/supervisor"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// specialistNames are the specialists of Specialists, long names included: the views must keep
// them whole or reachable.
var specialistNames = []string{
	"billing_specialist", "network_specialist", "security_specialist", "database_specialist",
	"frontend_specialist", "compliance_and_legal_specialist", "storage_specialist", "scheduling_specialist",
}

// Specialists returns a flow for views of many handoffs: eino's prebuilt supervisor, hub, with n
// specialists (at most 8), each with a lookup tool. hub hands work to the specialists in turn,
// handoffs times, and each hands back deterministically after one lookup: 2 × handoffs transfers
// in all. Specialists(8, 11) is 8 specialists and 22 transfers.
func Specialists(n, handoffs int) agents.Flow {
	n = max(1, min(n, len(specialistNames)))
	names := specialistNames[:n]
	decl := []traces.Agent{{Name: "hub", Description: "Routes each question to a specialist.",
		Kind: traces.AgentSupervisor, Tools: []string{"transfer_to_agent"}}}
	var hub []agents.Step
	visits := make(map[string][]agents.Step, n)
	for _, name := range names {
		decl = append(decl, traces.Agent{Name: name, Description: "Answers " + name + " questions.",
			Kind: traces.AgentChatModel, Parent: "hub", Relation: traces.RelationSubAgent, Tools: []string{"lookup"}})
	}
	for i := range handoffs {
		name := names[i%n]
		hub = append(hub, agents.SayAndDo(fmt.Sprintf("Question %d goes to %s.", i+1, name), agents.Transfer(name)))
		visits[name] = append(visits[name],
			agents.Do(agents.Call("lookup", lookupArg{Topic: fmt.Sprintf("question %d", i+1)})),
			agents.Say(fmt.Sprintf("%s answered question %d.", name, i+1)))
	}
	hub = append(hub, agents.Say(fmt.Sprintf("All %d questions answered.", handoffs)))
	scripts := map[string]agents.Script{"hub": agents.NewScript(hub...)}
	for name, steps := range visits {
		scripts[name] = agents.NewScript(steps...)
	}
	return agents.Flow{
		Name:         "specialists",
		Title:        fmt.Sprintf("%d specialists, %d transfers", n, 2*handoffs),
		Description:  "A supervisor that hands questions to many specialists in turn, for views of many handoffs.",
		DefaultInput: "Answer the questions",
		Agents:       decl,
		Scripts:      scripts,
		Build: func(ctx context.Context, models agents.ModelFor) (adk.Agent, error) {
			return buildSpecialists(ctx, models, names, handoffs)
		},
	}
}

// lookupArg is the argument of a specialist's lookup tool.
type lookupArg struct {
	Topic string `json:"topic"`
}

func buildSpecialists(ctx context.Context, models agents.ModelFor, names []string, handoffs int) (adk.Agent, error) {
	hub, err := agents.NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
		Name: "hub", Description: "Routes each question to a specialist.",
		Instruction:   "Hand each question to the right specialist, one at a time.",
		MaxIterations: handoffs + 2,
	})
	if err != nil {
		return nil, err
	}
	subs := make([]adk.Agent, len(names))
	for i, name := range names {
		lookup, err := utils.InferTool("lookup", "Look a topic up.", func(_ context.Context, in lookupArg) (string, error) {
			return name + " knows about " + in.Topic, nil
		})
		if err != nil {
			return nil, err
		}
		var conf adk.ToolsConfig
		conf.Tools = []tool.BaseTool{lookup}
		if subs[i], err = agents.NewChatAgent(ctx, models, adk.ChatModelAgentConfig{
			Name: name, Description: "Answers " + name + " questions.",
			Instruction: "Answer with your lookup tool.", ToolsConfig: conf,
		}); err != nil {
			return nil, err
		}
	}
	root, err := supervisor.New(ctx, &supervisor.Config{Supervisor: hub, SubAgents: subs})
	if err != nil {
		return nil, fmt.Errorf("build specialists: %w", err)
	}
	return root, nil
}
