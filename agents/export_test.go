package agents

import (
	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/flow/agent/multiagent/host"
)

// BuildHost lets the tests build the host flow with host's own per-run options.
var BuildHost = buildHost

// HostAgent runs ma, a host multi-agent of the test's own, as the host flow runs its own.
func HostAgent(name string, ma *host.MultiAgent) adk.Agent {
	return &hostAgent{name: name, description: "a host multi-agent", ma: ma}
}
