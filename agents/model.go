package agents

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cloudwego/eino-ext/components/model/openai"
	"github.com/cloudwego/eino/components/model"

	"github.com/baton-dev/baton/traces"
)

// Model spec prefixes, as ParseModel reads them.
const (
	// SpecScripted is the scripted stand-in model (each flow's scripts).
	SpecScripted = "scripted"
	specOpenAI   = "openai:"
	specReplay   = "replay:"
)

// DefaultModelTimeout bounds one request to a real model when ProviderEnv.Timeout is zero.
const DefaultModelTimeout = 2 * time.Minute

// ProviderEnv is what real models need from outside: OPENAI_API_KEY and OPENAI_BASE_URL.
type ProviderEnv struct {
	APIKey  string
	BaseURL string // empty: OpenAI's own endpoint
	// Timeout bounds one model request; DefaultModelTimeout when zero.
	Timeout time.Duration
}

// ProviderEnvFromOS reads OPENAI_API_KEY and OPENAI_BASE_URL from the environment.
func ProviderEnvFromOS() ProviderEnv {
	return ProviderEnv{APIKey: os.Getenv("OPENAI_API_KEY"), BaseURL: os.Getenv("OPENAI_BASE_URL")}
}

// Model is the chat model a flow runs on: the scripted stand-in, a real OpenAI-compatible model,
// or a replay of the model calls recorded in a trace. Make one with ParseModel (or Scripted,
// ReplayOf); it holds no per-run state, so one Model serves any number of runs at once.
type Model struct {
	spec   string
	name   string                  // the run metadata's model
	openai *openai.ChatModelConfig // set for a real model
	replay *recordedCalls          // set for a replay, and a fork
	fork   *fork                   // set for a fork (fork.go)
}

// Scripted returns the scripted stand-in model: each flow answers from its scripts.
func Scripted() *Model { return &Model{spec: SpecScripted, name: SpecScripted} }

// ParseModel reads a model spec: "scripted", "openai:NAME" (any OpenAI-compatible server: env
// says where and with which key) or "replay:FILE" (a trace file whose model calls are replayed).
// An unknown spec, an empty name or an unreadable trace is a traces.CodeInvalid error saying what
// to write instead. A real model without a key is accepted: Ready says what is missing, so a
// server can offer it and explain.
func ParseModel(spec string, env ProviderEnv) (*Model, error) {
	switch {
	case spec == SpecScripted || spec == "":
		return Scripted(), nil
	case strings.HasPrefix(spec, specOpenAI):
		name := strings.TrimSpace(strings.TrimPrefix(spec, specOpenAI))
		if name == "" {
			return nil, traces.Errorf(traces.CodeInvalid, "model %q names no model: write openai:MODEL, such as openai:gpt-4o-mini", spec)
		}
		timeout := env.Timeout
		if timeout <= 0 {
			timeout = DefaultModelTimeout
		}
		return &Model{spec: spec, name: spec, openai: &openai.ChatModelConfig{
			APIKey: env.APIKey, BaseURL: env.BaseURL, Model: name, Timeout: timeout,
		}}, nil
	case strings.HasPrefix(spec, specReplay):
		file := strings.TrimPrefix(spec, specReplay)
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, traces.Errorf(traces.CodeInvalid, "model %q: cannot read the trace: %v", spec, err)
		}
		tr, err := traces.Unmarshal(data)
		if err != nil {
			return nil, traces.Errorf(traces.CodeInvalid, "model %q: %s", spec, traces.ErrorMessage(err))
		}
		m, err := ReplayOf(tr)
		if err != nil {
			return nil, err
		}
		m.spec = spec
		return m, nil
	}
	return nil, traces.Errorf(traces.CodeInvalid, "unknown model %q: write scripted, openai:MODEL or replay:FILE", spec)
}

// Spec is the model as ParseModel read it ("replay:run r-x" for a replay of a run in memory).
func (m *Model) Spec() string { return m.spec }

// Name is the model's name for a run's metadata: "scripted", "openai:gpt-4o-mini", or for a
// replay "replay of <run> (<its model>)".
func (m *Model) Name() string { return m.name }

// Ready reports why runs cannot use the model yet, as a traces.CodeInvalid error naming what to
// set (a real model without OPENAI_API_KEY); nil when they can.
func (m *Model) Ready() error {
	if m != nil && m.openai != nil && m.openai.APIKey == "" {
		return traces.Errorf(traces.CodeInvalid, "model %s needs an API key: set OPENAI_API_KEY before starting Baton "+
			"(any non-empty value for a local server such as Ollama, with OPENAI_BASE_URL=http://localhost:11434/v1)", m.spec)
	}
	return nil
}

// CanRun reports why runs of flow cannot use m, as a traces.CodeInvalid error naming what to
// do: Ready's reason, or a flow without scripts (Flow.NoScript) on the scripted model, or forked
// onto it after the fork point; nil when they can.
func (m *Model) CanRun(flow Flow) error {
	if err := m.Ready(); err != nil {
		return err
	}
	if !flow.NoScript {
		return nil
	}
	switch {
	case m.scripted():
		return traces.Errorf(traces.CodeInvalid, "flow %s has no script for the scripted model: run it on a real model "+
			"(start Baton with --model openai:MODEL, or inprocess.Options.Models, and OPENAI_API_KEY set), or a replay of one of its runs; "+
			"or give the flow a Script", flow.Name)
	case m.fork != nil && m.fork.live.scripted():
		return traces.Errorf(traces.CodeInvalid, "flow %s has no script for the scripted model, which a fork of it would go on with "+
			"after the fork point: give the fork a real model (--model openai:MODEL), or give the flow a Script", flow.Name)
	}
	return nil
}

// scripted reports whether m is the scripted model (nil is).
func (m *Model) scripted() bool { return m == nil || (m.openai == nil && m.replay == nil) }

// Replays returns the flow and input of the run a replay model replays; ok is false for other
// models.
func (m *Model) Replays() (flow, input string, ok bool) {
	if m.replay == nil {
		return "", "", false
	}
	return m.replay.flow, m.replay.input, true
}

// forRun returns the ModelFor of one run of flow, and a check to make once the run has completed
// (a replay that left recorded calls unplayed diverged: the check says which). A nil Model is the
// scripted one.
func (m *Model) forRun(flow Flow, pace *Pace) (ModelFor, func() *Divergence) {
	switch {
	case m.scripted():
		return flow.ScriptedModels(pace), nil
	case m.fork != nil:
		return m.fork.modelFor(flow, pace), nil
	case m.replay != nil:
		p := newReplay(m.replay)
		return p.modelFor(pace), p.unplayed
	}
	conf := *m.openai
	return func(agent string) (model.ToolCallingChatModel, error) {
		if err := m.Ready(); err != nil {
			return nil, err
		}
		cm, err := openai.NewChatModel(context.Background(), &conf)
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", m.spec, err)
		}
		return cm, nil
	}, nil
}
