package cli

import (
	"errors"
	"fmt"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/traces"
)

// modelHelp describes the --model flag of serve and run.
const modelHelp = "chat model `M`: scripted, openai:NAME (with OPENAI_API_KEY, OPENAI_BASE_URL) or replay:TRACE_FILE"

// modelNote says what a model M is, below the usage of every command.
const modelNote = `A model M is scripted (the default), openai:NAME (reads OPENAI_API_KEY and OPENAI_BASE_URL)
or replay:TRACE_FILE (answers with the model replies recorded in a trace).`

// modelFlags collects the --model flags of serve and run, which may repeat.
type modelFlags []*agents.Model

func (f *modelFlags) String() string { return fmt.Sprint(len(*f)) }

func (f *modelFlags) Set(spec string) error {
	m, err := agents.ParseModel(spec, agents.ProviderEnvFromOS())
	if err != nil {
		return errors.New(traces.ErrorMessage(err))
	}
	*f = append(*f, m)
	return nil
}
