package agents

import (
	"regexp"
	"slices"

	"github.com/baton-dev/baton/flows"
	"github.com/baton-dev/baton/traces"
)

// GroupRegistered is the group of the flows a program registered with Baton (flows.Flow); the
// index lists it before Groups.
const GroupRegistered = "Your flows"

// flowName is what a registered flow's name may be: it shows in URLs, file names and commands.
var flowName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,60}$`)

// Registered returns fs as flows Baton runs, in their order: the one place a flows.Flow becomes
// a Flow. It fails with a traces.CodeInvalid error naming the flow for a name that is empty, not
// letters, digits, '-' and '_', given twice or one of the catalogue's, for a flow without
// Build, and for declared Agents that traces.ValidateAgents refuses.
func Registered(fs []flows.Flow) ([]Flow, error) {
	out := make([]Flow, 0, len(fs))
	seen := make(map[string]bool, len(fs))
	for i, f := range fs {
		switch {
		case !flowName.MatchString(f.Name):
			return nil, traces.Errorf(traces.CodeInvalid, "register flow #%d: name %q must be 1 to 60 letters, digits, '-' or '_'", i+1, f.Name)
		case seen[f.Name]:
			return nil, traces.Errorf(traces.CodeInvalid, "register flow %q: the name is registered twice; give each flow its own", f.Name)
		case f.Build == nil:
			return nil, traces.Errorf(traces.CodeInvalid, "register flow %q: Build is nil; it must return the flow's root agent", f.Name)
		}
		if err := traces.ValidateAgents(f.Agents); err != nil {
			return nil, traces.Errorf(traces.CodeInvalid, "register flow %q: its Agents: %s", f.Name, traces.ErrorMessage(err))
		}
		if _, err := Lookup(f.Name); err == nil {
			return nil, traces.Errorf(traces.CodeInvalid, "register flow %q: a built-in flow has that name; pick another", f.Name)
		}
		seen[f.Name] = true
		out = append(out, registered(f))
	}
	return out, nil
}

// registered is f as a Flow: its script the scripted model's, one step per reply.
func registered(f flows.Flow) Flow {
	out := Flow{Name: f.Name, Group: GroupRegistered, Description: f.Description, DefaultInput: f.DefaultInput,
		Build: f.Build, NoScript: f.Script == nil, Agents: slices.Clone(f.Agents),
		RunOptions: slices.Clone(f.RunOptions)}
	if f.Script != nil {
		out.InputNote = fixedAnswers
		out.Scripts = make(map[string]Script, len(f.Script))
		for agent, replies := range f.Script {
			steps := make([]Step, len(replies))
			for i, r := range replies {
				steps[i] = Step{Reply: r}
			}
			out.Scripts[agent] = Script{Steps: steps}
		}
	}
	return out
}
