package traces_test

import (
	"strings"
	"testing"

	"github.com/baton-dev/baton/traces"
)

// TestValidateAgentsAdded: agents an app's recorder sends while its run goes on may name a
// parent it sent before; one that names a parent sent neither before nor with it, or that makes
// the tree loop, is refused with what to fix.
func TestValidateAgentsAdded(t *testing.T) {
	have := []traces.Agent{{Name: "root", Kind: traces.AgentChatModel}, {Name: "team", Kind: traces.AgentChatModel, Parent: "root", Relation: traces.RelationSubAgent}}
	sub := func(name, parent string) traces.Agent {
		return traces.Agent{Name: name, Kind: traces.AgentChatModel, Parent: parent, Relation: traces.RelationSubAgent}
	}
	for _, c := range []struct {
		name  string
		added []traces.Agent
		want  string // "" for accepted
	}{
		{"a parent sent before", []traces.Agent{sub("member", "team")}, ""},
		{"a parent sent with it, after it", []traces.Agent{sub("member", "lead"), sub("lead", "root")}, ""},
		{"an unknown parent", []traces.Agent{sub("member", "teem")}, `agents[0]: agent "member" names parent "teem", which is not among the agents`},
		{"a loop through the tree before", []traces.Agent{sub("root", "team")}, `agents[0]: agent "root" is its own ancestor (parents root -> team -> root)`},
	} {
		err := traces.ValidateAgentsAdded(have, c.added)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := traces.ValidateAgents([]traces.Agent{sub("member", "team")}); err == nil || !strings.Contains(err.Error(), `names parent "team"`) {
		t.Errorf("a whole tree naming a parent it lacks: %v", err)
	}
}
