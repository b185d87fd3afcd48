package traces_test

import (
	"fmt"
	"os"

	"github.com/baton-dev/baton/traces"
)

// A trace file says who handed work to whom, and how: here a supervisor's run, read back and
// its transfers listed in order ("llm" when a model chose transfer_to_agent, "deterministic"
// when the flow's wiring sent control back).
func ExampleUnmarshal() {
	data, err := os.ReadFile("testdata/v2/supervisor.trace.json")
	if err != nil {
		panic(err)
	}
	tr, err := traces.Unmarshal(data) // any version up to the current one, checked
	if err != nil {
		panic(err)
	}
	fmt.Println(tr.Run.Flow, tr.Run.Status, len(tr.Agents), "agents")
	for _, e := range tr.Events {
		if e.Kind == traces.KindTransfer {
			fmt.Printf("%s -> %s (%s)\n", e.Transfer.From, e.Transfer.To, e.Transfer.Mode)
		}
	}
	// Output:
	// supervisor completed 3 agents
	// supervisor -> research_agent (llm)
	// research_agent -> supervisor (deterministic)
	// supervisor -> math_agent (llm)
	// math_agent -> supervisor (deterministic)
}

// A trace can be written as well as read: Marshal writes the current version of the format, the
// same bytes for the same trace, and every later reader reads it.
func ExampleMarshal() {
	tr := traces.Trace{
		Run:    traces.Run{ID: "run-1", Flow: "greeting", Input: "Hi", Status: traces.StatusCompleted},
		Agents: []traces.Agent{{Name: "greeter", Kind: traces.AgentChatModel}},
		Events: []traces.Event{
			{Seq: 1, Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: "greeting", Input: "Hi", Status: traces.StatusRunning}},
			{Seq: 2, Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: traces.StatusCompleted}},
		},
	}
	data, err := traces.Marshal(tr)
	if err != nil {
		panic(err)
	}
	back, err := traces.Unmarshal(data)
	fmt.Println(back.Run.ID, back.Run.Status, len(back.Events), "events", err)
	// Output:
	// run-1 completed 2 events <nil>
}
