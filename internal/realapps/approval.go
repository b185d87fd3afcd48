package realapps

import (
	"context"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/adk/prebuilt/supervisor"
	"github.com/cloudwego/eino/components/tool"

	"github.com/baton-dev/baton/agents"
)

// approved is what a person answers the apps' approval questions with.
const approved = "approved"

// approvalGate returns a tool named name that asks for approval the first time it is called and
// does its work once resumed with approved.
func approvalGate(t *tally, name, desc, question, done string) tool.InvokableTool {
	return mustTool(t, name, desc, func(ctx context.Context, in args) (string, error) {
		wasTarget, hasData, answer := tool.GetResumeContext[string](ctx)
		if !wasTarget {
			return "", tool.Interrupt(ctx, question+" ("+in.Query+")")
		}
		if !hasData || answer != approved {
			return "refused by the reviewer", nil
		}
		return done + " (" + in.Query + ")", nil
	})
}

// supervisorApproval is a prebuilt supervisor, streaming, whose transaction agent's tool asks for
// approval; the app resumes at once with ResumeWithParams, on an in-memory checkpoint store.
var supervisorApproval = App{
	Name:     "supervisor-approval",
	Queries:  []string{"Check my checking balance, then move $500 from checking to savings."},
	Approval: approved,
	Build: func(ctx context.Context, t *tally) (*adk.Runner, error) {
		balance := mustTool(t, "check_balance", "Balance of an account.", func(_ context.Context, in args) (string, error) {
			return in.Query + ": $5,000.00", nil
		})
		accounts := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "account_agent", Description: "Checks balances.", Instruction: "Check balances.",
			Model: scripted(t, "account_agent",
				agents.Do(agents.Call("check_balance", args{Query: "checking"})),
				agents.QuoteToolResult("Balance of %s"),
			),
			ToolsConfig: toolsOf(balance),
		})
		transactions := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "transaction_agent", Description: "Moves money.", Instruction: "Move money when asked.",
			Model: scripted(t, "transaction_agent",
				agents.Do(agents.Call("transfer_funds", args{Query: "$500 checking to savings"})),
				agents.QuoteToolResult("Transfer: %s."),
			),
			ToolsConfig: toolsOf(approvalGate(t, "transfer_funds", "Moves money between accounts, once approved.",
				"Move the money?", "moved")),
		})
		boss := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "bank_supervisor", Description: "Coordinates banking tasks.", Instruction: "Delegate; summarize at the end.",
			Model: scripted(t, "bank_supervisor",
				agents.Do(agents.Transfer("account_agent")),
				agents.Do(agents.Transfer("transaction_agent")),
				agents.Do(agents.Exit("Checking had $5,000.00; $500 moved to savings.")),
			),
			Exit: &adk.ExitTool{},
		})
		root, err := supervisor.New(ctx, &supervisor.Config{Supervisor: boss, SubAgents: []adk.Agent{accounts, transactions}})
		if err != nil {
			return nil, err
		}
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: true, CheckPointStore: newMemoryStore()}), nil
	},
}

// sequentialApproval is a Sequential root of two streaming chat agents whose second one's tool
// asks for approval; the app resumes at once. eino hands a resumed workflow root only its state,
// the interrupt nested inside it.
var sequentialApproval = App{
	Name:     "sequential-approval",
	Queries:  []string{"Draft the release note for 1.4 and publish it."},
	Approval: approved,
	Build: func(ctx context.Context, t *tally) (*adk.Runner, error) {
		drafter := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "drafter", Description: "Drafts release notes.", Instruction: "Draft the note.",
			Model:     scripted(t, "drafter", agents.Say("1.4: faster imports, a new sequence view.")),
			OutputKey: "note",
		})
		publisher := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "publisher", Description: "Publishes notes, once approved.", Instruction: "Publish the note.",
			Model: scripted(t, "publisher",
				agents.Do(agents.Call("publish", args{Query: "release note 1.4"})),
				agents.QuoteToolResult("Done: %s."),
			),
			ToolsConfig: toolsOf(approvalGate(t, "publish", "Publishes a note, once approved.", "Publish it?", "published")),
		})
		root, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{
			Name: "release", Description: "Drafts, then publishes a release note.", SubAgents: []adk.Agent{drafter, publisher},
		})
		if err != nil {
			return nil, err
		}
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: true, CheckPointStore: newMemoryStore()}), nil
	},
}

// agentToolApproval is a non-streaming root that calls an agent as a tool (AgentTool) whose own
// tool asks for approval; the app resumes at once, twice on one Runner.
var agentToolApproval = App{
	Name:     "agenttool-approval",
	Queries:  []string{"Deploy version 1.4 to staging.", "Now deploy version 1.4 to production."},
	Approval: approved,
	Build: func(ctx context.Context, t *tally) (*adk.Runner, error) {
		deployer := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "deployer", Description: "Deploys releases.", Instruction: "Deploy what you are asked to.",
			Model: scripted(t, "deployer",
				agents.Do(agents.Call("deploy", args{Query: "1.4 to staging"})),
				agents.QuoteToolResult("Deploy: %s."),
				agents.Do(agents.Call("deploy", args{Query: "1.4 to production"})),
				agents.QuoteToolResult("Deploy: %s."),
			),
			ToolsConfig: toolsOf(approvalGate(t, "deploy", "Deploys a release, once approved.", "Deploy?", "deployed")),
		})
		ops := mustChatAgent(ctx, &adk.ChatModelAgentConfig{
			Name: "ops", Description: "Runs operations.", Instruction: "Use the deployer for deployments.",
			Model: scripted(t, "ops",
				agents.Do(agents.Ask("deployer", "Deploy 1.4 to staging.")),
				agents.QuoteToolResult("Staging: %s"),
				agents.Do(agents.Ask("deployer", "Deploy 1.4 to production.")),
				agents.QuoteToolResult("Production: %s"),
			),
			ToolsConfig: toolsOf(adk.NewAgentTool(ctx, deployer)),
		})
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: ops, CheckPointStore: newMemoryStore()}), nil
	},
}
