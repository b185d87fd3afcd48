package agents_test

import (
	"context"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
)

// modes runs f once without and once with streaming.
func modes(t *testing.T, f func(t *testing.T, streaming bool)) {
	for _, streaming := range []bool{false, true} {
		name := "generate"
		if streaming {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) { f(t, streaming) })
	}
}

// TestCatalogueFlowsAreWellFormed checks every flow of the catalogue: complete, its tree listed
// root first with each parent before its children, a script for every agent with a model, and
// the tree true to what runs: every agent whose model is called is in it, offered the tools it
// lists. (Which agents run depends on the input; each flow's own test checks they all do.)
func TestCatalogueFlowsAreWellFormed(t *testing.T) {
	for _, f := range agents.Catalogue() {
		t.Run(f.Name, func(t *testing.T) {
			if f.Title == "" || f.Description == "" || f.DefaultInput == "" || f.Build == nil || len(f.Agents) == 0 {
				t.Fatalf("incomplete flow: %+v", f)
			}
			// Every scripted flow answers from a script written for its default input: the
			// page must say so next to the input box.
			if f.InputNote == "" {
				t.Errorf("%s has no InputNote", f.Name)
			}
			if f.Agents[0].Parent != "" || f.Agents[0].Relation != "" {
				t.Errorf("root %s has a parent", f.Agents[0].Name)
			}
			known := map[string]bool{}
			for _, a := range f.Agents {
				if a.Parent != "" && !known[a.Parent] {
					t.Errorf("%s's parent %s is not listed before it", a.Name, a.Parent)
				}
				if a.Parent != "" && a.Relation == "" {
					t.Errorf("%s has a parent but no relation", a.Name)
				}
				known[a.Name] = true
				if !isWorkflow(a.Kind) && len(f.Scripts[a.Name].Steps) == 0 {
					t.Errorf("%s has no script", a.Name)
				}
			}
			var spy modelSpy
			runStory(t, f, f.DefaultInput, false, &spy)
			assertTreeIsTrue(t, f, &spy)
		})
	}
}

func TestSupervisorFlow(t *testing.T) {
	f := mustFlow(t, "supervisor")
	modes(t, func(t *testing.T, streaming bool) {
		var spy modelSpy
		s := runStory(t, f, f.DefaultInput, streaming, &spy)
		assertStory(t, s,
			"supervisor: calls transfer_to_agent",
			"supervisor: tool transfer_to_agent => research_agent",
			"research_agent: calls search, search",
			"research_agent: tool search",
			"research_agent: tool search",
			"research_agent: says",
			"research_agent: calls transfer_to_agent", // eino's deterministic transfer back
			"research_agent: tool transfer_to_agent => supervisor",
			"supervisor: calls transfer_to_agent",
			"supervisor: tool transfer_to_agent => math_agent",
			"math_agent: calls divide",
			"math_agent: tool divide",
			"math_agent: calls multiply",
			"math_agent: tool multiply",
			"math_agent: says",
			"math_agent: calls transfer_to_agent",
			"math_agent: tool transfer_to_agent => supervisor",
			"supervisor: says",
		)
		assertToolsMatchTree(t, f, &spy)
		// The synthetic transfer back is not a model's: bare agent name as arguments, not JSON.
		if back := s[6].Calls[0]; back.Function.Arguments != "supervisor" || strings.HasPrefix(back.ID, "research_agent_call") {
			t.Errorf("deterministic transfer call = %+v", back)
		}
		if got, _ := s.toolResult("divide"); got != "0.078718" {
			t.Errorf("divide returned %q", got)
		}
		if got, _ := s.toolResult("multiply"); got != "7.8718" {
			t.Errorf("multiply returned %q", got)
		}
		if got, _ := s.toolResult("search"); !strings.Contains(got, "29.18 trillion") {
			t.Errorf("first search returned %q", got)
		}
		if !strings.Contains(s.final(), "7.87%") {
			t.Errorf("final answer %q", s.final())
		}
		if last := s[len(s)-1]; last.Path != "supervisor>supervisor>research_agent>supervisor>math_agent>supervisor" {
			t.Errorf("final run path %q", last.Path)
		}
		for _, e := range s {
			// Model replies stream in a streaming run; eino's synthetic transfer calls never do.
			modelEvent := e.Role == schema.Assistant && (len(e.Calls) == 0 || strings.Contains(e.Calls[0].ID, "_call_"))
			if modelEvent && e.Stream != streaming {
				t.Errorf("%s: streaming %v in a run with streaming %v", e.line(), e.Stream, streaming)
			}
		}
	})
}

func TestTransferFlowRoutesOnInput(t *testing.T) {
	f := mustFlow(t, "transfer")
	cases := []struct {
		name, input, agent, tool, answer string
	}{
		{"default input", f.DefaultInput, "weather_agent", "get_weather", "Paris, tomorrow: 17°C"},
		{"rain, upper case", "Will it RAIN in Tokyo?", "weather_agent", "get_weather", "Tokyo, tomorrow"},
		{"temperature", "temperature in London please", "weather_agent", "get_weather", "London, tomorrow"},
		{"joke", "Tell me a joke", "chat_agent", "tell_joke", "light attracts bugs"},
		{"fact", "How tall is the Eiffel Tower?", "chat_agent", "lookup_fact", "330 m"},
	}
	modes(t, func(t *testing.T, streaming bool) {
		var spy modelSpy // shared by the cases, so every agent of the tree gets called
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				s := runStory(t, f, c.input, streaming, &spy)
				assertStory(t, s,
					"router: calls transfer_to_agent",
					"router: tool transfer_to_agent => "+c.agent,
					c.agent+": calls "+c.tool,
					c.agent+": tool "+c.tool,
					c.agent+": says",
				)
				if !strings.Contains(s.final(), c.answer) {
					t.Errorf("final answer %q lacks %q", s.final(), c.answer)
				}
				if s[len(s)-1].Path != "router>"+c.agent {
					t.Errorf("final run path %q", s[len(s)-1].Path)
				}
			})
		}
		assertToolsMatchTree(t, f, &spy)
	})
}

func TestAgentToolFlow(t *testing.T) {
	f := mustFlow(t, "agenttool")
	modes(t, func(t *testing.T, streaming bool) {
		var spy modelSpy
		s := runStory(t, f, f.DefaultInput, streaming, &spy)
		assertStory(t, s,
			"project_manager: calls research_agent",
			"research_agent: calls web_search",
			"research_agent: tool web_search",
			"research_agent: says",
			"project_manager: tool research_agent",
			"project_manager: calls code_agent",
			"code_agent: calls write_file",
			"code_agent: tool write_file",
			"code_agent: says",
			"project_manager: tool code_agent",
			"project_manager: calls review_agent",
			"review_agent: calls run_tests",
			"review_agent: tool run_tests",
			"review_agent: says",
			"project_manager: tool review_agent",
			"project_manager: says",
		)
		assertToolsMatchTree(t, f, &spy)
		if s[1].Path != "project_manager>research_agent" {
			t.Errorf("inner event path %q, want the caller's path as prefix", s[1].Path)
		}
		notes := s[3].Text
		if got := s[4].Text; got != notes {
			t.Errorf("research_agent tool result %q, want its final answer %q", got, notes)
		}
		// research_agent's answer went into the session (OutputKey) and eino's prompt builder put
		// it into code_agent's instruction.
		spy.mu.Lock()
		system := spy.inputs["code_agent"][0][0]
		spy.mu.Unlock()
		if system.Role != schema.System || !strings.Contains(system.Content, notes) || strings.Contains(system.Content, "{research_notes}") {
			t.Errorf("code_agent's system prompt lacks the research notes: %q", system.Content)
		}
		// write_file stored the file in the session, where review_agent's run_tests read it.
		if got, _ := s.toolResult("run_tests"); !strings.HasPrefix(got, "ok ") {
			t.Errorf("run_tests returned %q", got)
		}
	})
}

// Without the research notes in the session, code_agent writes a different file and the tests
// fail: the session values really decide what happens.
func TestAgentToolFlowWithoutNotes(t *testing.T) {
	f := mustFlow(t, "agenttool")
	f.Scripts = maps.Clone(f.Scripts)
	f.Scripts["research_agent"] = agents.NewScript(agents.Say("Nothing useful found."))
	s := runStory(t, f, f.DefaultInput, false, nil)
	if got, _ := s.toolResult("run_tests"); !strings.HasPrefix(got, "FAIL") {
		t.Errorf("run_tests returned %q, want a failure", got)
	}
}

// Handlers may read streamed chunks whole while the run goes on: ADK writes its message id into
// the first chunk it receives, and the scripted model hands handlers other copies. Meaningful
// under -race.
func TestStreamedChunksInCallbacksAreNotShared(t *testing.T) {
	f := mustFlow(t, "supervisor")
	var wg sync.WaitGroup
	handler := callbacks.NewHandlerBuilder().
		OnEndWithStreamOutputFn(func(ctx context.Context, info *callbacks.RunInfo, sr *schema.StreamReader[callbacks.CallbackOutput]) context.Context {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer sr.Close()
				var chunks []*schema.Message
				for {
					out, err := sr.Recv()
					if err != nil {
						break
					}
					if co := model.ConvCallbackOutput(out); co != nil && co.Message != nil {
						chunks = append(chunks, co.Message)
					}
				}
				time.Sleep(time.Millisecond) // let ADK get at its copies meanwhile
				if len(chunks) > 0 {
					if _, err := schema.ConcatMessages(chunks); err != nil {
						t.Error(err)
					}
				}
			}()
			return ctx
		}).Build()
	s := runStory(t, f, f.DefaultInput, true, nil, adk.WithCallbacks(handler))
	wg.Wait()
	if !strings.Contains(s.final(), "7.87%") {
		t.Fatalf("final answer %q", s.final())
	}
}

// TestEveryFlowIsGrouped: each flow of the catalogue is in one of Groups and says what it shows
// in plain words, without eino's API names, and the flow to start with is in the catalogue.
func TestEveryFlowIsGrouped(t *testing.T) {
	groups := map[string]bool{}
	for _, g := range agents.Groups {
		groups[g.Name] = true
	}
	start := false
	for _, f := range agents.Catalogue() {
		start = start || f.Name == agents.StartHere
		if !groups[f.Group] {
			t.Errorf("%s: group %q is not one of agents.Groups", f.Name, f.Group)
		}
		if f.Plain == "" || strings.Contains(f.Plain, "adk.") || strings.Contains(f.Plain, "eino") {
			t.Errorf("%s: plain description %q", f.Name, f.Plain)
		}
	}
	if !start {
		t.Errorf("the flow to start with, %q, is not in the catalogue", agents.StartHere)
	}
}
