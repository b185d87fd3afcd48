package agents

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/adk/prebuilt/planexecute"

	"github.com/baton-dev/baton/traces"
)

// usdPer is convert_currency's table: what one unit of each currency is worth in US dollars.
var usdPer = map[string]float64{"USD": 1, "EUR": 1.08, "GBP": 1.27, "CHF": 1.13, "JPY": 0.0066}

// currencySigns are the signs convert_currency writes amounts with; other currencies get their code.
var currencySigns = map[string]string{"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}

func init() {
	register(Flow{
		Name:  "plan-execute",
		Title: "Plan-execute: planner, then executor and replanner in a loop",
		Group: GroupWorkflow,
		Plain: "A planner writes a plan; an executor does one step at a time and a replanner revises the plan until it can answer.",
		Description: "eino's prebuilt plan-execute (adk/prebuilt/planexecute): a sequential agent runs the planner, " +
			"then a loop of executor and replanner. The planner's model calls a plan tool whose arguments eino " +
			"turns into the plan (the session's Plan); the executor carries out the plan's first step with its " +
			"own tools and its answer becomes ExecutedStep; the replanner either plans the remaining steps or " +
			"calls respond, which ends the loop with a BreakLoop action. Look at the session: Plan shrinks from " +
			"two steps to one, ExecutedSteps grows.",
		DefaultInput: "How much is the cheapest return flight Berlin-Lisbon, 14-16 March, in US dollars?",
		InputNote:    fixedAnswers,
		Agents: []traces.Agent{
			{Name: "plan_execute_replan", Kind: traces.AgentSequential},
			{Name: "planner", Description: "a planner agent", Kind: traces.AgentCustom, Parent: "plan_execute_replan",
				Relation: traces.RelationSubAgent, Tools: []string{"plan"}},
			{Name: "execute_replan", Kind: traces.AgentLoop, Parent: "plan_execute_replan", Relation: traces.RelationSubAgent},
			{Name: "executor", Description: "an executor agent", Kind: traces.AgentChatModel, Parent: "execute_replan",
				Relation: traces.RelationSubAgent, Tools: []string{"search_flights", "convert_currency"}, OutputKey: planexecute.ExecutedStepSessionKey},
			{Name: "replanner", Description: "a replanner agent", Kind: traces.AgentCustom, Parent: "execute_replan",
				Relation: traces.RelationSubAgent, Tools: []string{"plan", "respond"}},
		},
		Scripts: map[string]Script{
			"planner": NewScript(
				Do(Call("plan", map[string][]string{"steps": {
					"Find the cheapest return flight Berlin-Lisbon, 14-16 March.",
					"Convert its price from euros to US dollars.",
				}})),
			),
			"executor": NewScript(
				Do(Call("search_flights", tripArg{From: "Berlin", To: "Lisbon", Out: "14 March", Back: "16 March"})),
				QuoteToolResult("Cheapest: %s"),
				Do(Call("convert_currency", moneyArg{Amount: 186, From: "EUR", To: "USD"})),
				QuoteToolResult("€186 is %s."),
			),
			"replanner": NewScript(
				Do(Call("plan", map[string][]string{"steps": {"Convert €186 from euros to US dollars."}})),
				Do(Call("respond", map[string]string{"response": "The cheapest return flight Berlin-Lisbon, " +
					"14-16 March, costs €186, about $200.88."})),
			),
		},
		Build: buildPlanExecute,
	})
}

// buildPlanExecute builds the plan-execute flow anew.
func buildPlanExecute(ctx context.Context, models ModelFor) (adk.Agent, error) {
	var box toolBox
	addTool(&box, "search_flights", "Search return flights.", searchFlights)
	addTool(&box, "convert_currency", "Convert an amount of money between currencies.", convertCurrency)
	if box.err != nil {
		return nil, box.err
	}
	planModel, err := models("planner")
	if err != nil {
		return nil, fmt.Errorf("model for agent planner: %w", err)
	}
	execModel, err := models("executor")
	if err != nil {
		return nil, fmt.Errorf("model for agent executor: %w", err)
	}
	replanModel, err := models("replanner")
	if err != nil {
		return nil, fmt.Errorf("model for agent replanner: %w", err)
	}
	planner, err1 := planexecute.NewPlanner(ctx, &planexecute.PlannerConfig{ToolCallingChatModel: planModel})
	executor, err2 := planexecute.NewExecutor(ctx, &planexecute.ExecutorConfig{Model: execModel, ToolsConfig: box.toolsConfig()})
	replanner, err3 := planexecute.NewReplanner(ctx, &planexecute.ReplannerConfig{ChatModel: replanModel})
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("build plan-execute agents: %w", err)
	}
	root, err := planexecute.New(ctx, &planexecute.Config{Planner: planner, Executor: executor, Replanner: replanner, MaxIterations: 5})
	if err != nil {
		return nil, fmt.Errorf("build plan-execute: %w", err)
	}
	return root, nil
}

// moneyArg is convert_currency's argument.
type moneyArg struct {
	Amount float64 `json:"amount" jsonschema:"description=the amount"`
	From   string  `json:"from" jsonschema:"description=its currency, e.g. EUR"`
	To     string  `json:"to" jsonschema:"description=the currency wanted, e.g. USD"`
}

// convertCurrency converts between the currencies of usdPer.
func convertCurrency(_ context.Context, in moneyArg) (string, error) {
	from, to := strings.ToUpper(in.From), strings.ToUpper(in.To)
	rateFrom, ok1 := usdPer[from]
	rateTo, ok2 := usdPer[to]
	if !ok1 || !ok2 {
		return "", fmt.Errorf("convert_currency: cannot convert %s to %s; known currencies: USD, EUR, GBP, CHF, JPY", in.From, in.To)
	}
	sign, ok := currencySigns[to]
	if !ok {
		sign = to + " "
	}
	return sign + strconv.FormatFloat(in.Amount*rateFrom/rateTo, 'f', 2, 64), nil
}
