package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/flows"
	"github.com/baton-dev/baton/internal/cli"
	"github.com/baton-dev/baton/traces"
)

// helpdesk is a flow registered as a program registers its own (package flows): a desk agent
// that its script makes transfer to billing; tech is the other choice.
func helpdesk(t *testing.T) []agents.Flow {
	t.Helper()
	f := flows.Flow{
		Name:         "helpdesk",
		Description:  "A desk agent hands each request to billing or tech.",
		DefaultInput: "My invoice is wrong.",
		Build: func(ctx context.Context, models flows.Models) (adk.Agent, error) {
			var team []adk.Agent
			for _, name := range []string{"desk", "billing", "tech"} {
				m, err := models(name)
				if err != nil {
					return nil, err
				}
				a, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: name, Description: name + " work.",
					Instruction: "You are " + name + ".", Model: m})
				if err != nil {
					return nil, err
				}
				team = append(team, a)
			}
			return adk.SetSubAgents(ctx, team[0], team[1:])
		},
		Script: map[string][]flows.Reply{
			"desk":    {{ToolCalls: []flows.ToolCall{flows.Transfer("billing")}}},
			"billing": {{Text: "Your invoice is fixed."}},
			"tech":    {{Text: "Restart the router."}},
		},
	}
	registered, err := agents.Registered([]flows.Flow{f})
	if err != nil {
		t.Fatal(err)
	}
	return registered
}

// TestRunBreaksARegisteredFlow: `run FLOW --break transfer` holds a registered flow where its
// desk transfers, and e FILE sends the run to tech instead; `flows` lists it first.
func TestRunBreaksARegisteredFlow(t *testing.T) {
	ctx := cli.WithFlows(context.Background(), helpdesk(t))
	var stdout, stderr bytes.Buffer
	if code := cli.Run(ctx, []string{"flows"}, &stdout, &stderr); code != 0 ||
		!strings.HasPrefix(stdout.String(), "helpdesk     A desk agent hands each request to billing or tech.\n") {
		t.Errorf("flows: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}

	dir := t.TempDir()
	edit, out := filepath.Join(dir, "edit.json"), filepath.Join(dir, "t.json")
	if err := os.WriteFile(edit, []byte(`{"reply":{"tool_calls":[{"name":"transfer_to_agent","arguments":"{\"agent_name\":\"tech\"}"}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cli.SetStdin(strings.NewReader("e " + edit + "\n")))
	stdout.Reset()
	code := cli.Run(ctx, []string{"run", "helpdesk", "--break", "transfer", "--out", out}, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "paused at a transfer breakpoint: desk transfers to billing") {
		t.Fatalf("run: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	var route []string
	for _, e := range tr.Events {
		switch e.Kind {
		case traces.KindTransfer:
			route = append(route, "to "+e.Transfer.To)
		case traces.KindPaused, traces.KindContinued:
			route = append(route, string(e.Kind))
		}
	}
	if tr.Run.Status != traces.StatusCompleted || strings.Join(route, ",") != "paused,continued,to tech" {
		t.Errorf("the run is %s, its route %v; want paused, continued, to tech", tr.Run.Status, route)
	}
}
