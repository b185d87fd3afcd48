package agents_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/traces"
)

// runOn runs the flow named name on input with model and returns the trace.
func runOn(t *testing.T, name, input string, model *agents.Model, streaming bool) traces.Trace {
	t.Helper()
	flow, err := agents.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec := traces.NewRecording(traces.Run{ID: "r-" + name, Flow: name, Input: input, Model: model.Name()}, flow.Agents)
	agents.RunFlow(ctx, flow, input, agents.Options{Model: model, Streaming: streaming}, rec)
	return rec.Snapshot()
}

// fakeModel is openai:fake-model pointed at fake.
func fakeModel(t *testing.T, fake *agentstest.FakeOpenAI, key string, timeout time.Duration) *agents.Model {
	t.Helper()
	m, err := agents.ParseModel("openai:fake-model", agents.ProviderEnv{APIKey: key, BaseURL: fake.BaseURL(), Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func call(name, args string) agentstest.FakeToolCall {
	return agentstest.FakeToolCall{Name: name, Arguments: args}
}

// supervisorReplies drive the supervisor flow: research, then math, then the answer.
func supervisorReplies() []agentstest.FakeReply {
	return []agentstest.FakeReply{
		{Text: "Research first.", ToolCalls: []agentstest.FakeToolCall{call("transfer_to_agent", `{"agent_name":"research_agent"}`)}},
		{ToolCalls: []agentstest.FakeToolCall{call("search", `{"query":"US GDP 2024"}`), call("search", `{"query":"New York GDP 2024"}`),
			call("search", `{"query":"population of California"}`)}},
		{Text: "US: 29.18 trillion USD. New York: 2.297 trillion USD."},
		{ToolCalls: []agentstest.FakeToolCall{call("transfer_to_agent", `{"agent_name":"math_agent"}`)}},
		{ToolCalls: []agentstest.FakeToolCall{call("divide", `{"a":2.297,"b":29.18}`)}},
		{Text: "2.297 / 29.18 = 0.078718, about 7.87%."},
		{Text: "New York produced about 7.87% of US GDP in 2024."},
	}
}

// transfers lists a trace's transfers as "from>to (mode)".
func transfers(tr traces.Trace) []string {
	var out []string
	for _, e := range tr.Events {
		if e.Transfer != nil {
			out = append(out, e.Transfer.From+">"+e.Transfer.To+" ("+e.Transfer.Mode+")")
		}
	}
	return out
}

// finalError is the run's error, checked to end failed.
func finalError(t *testing.T, tr traces.Trace) string {
	t.Helper()
	if tr.Run.Status != traces.StatusFailed {
		t.Fatalf("run ended %s, want failed", tr.Run.Status)
	}
	return tr.Run.Error
}

func TestRealModelRunsSupervisor(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(map[bool]string{false: "generate", true: "stream"}[streaming], func(t *testing.T) {
			fake := agentstest.NewFakeOpenAI(t, supervisorReplies()...)
			tr := runOn(t, "supervisor", "What share of US GDP was New York's in 2024?", fakeModel(t, fake, "k", 0), streaming)
			if tr.Run.Status != traces.StatusCompleted {
				t.Fatalf("run ended %s: %s", tr.Run.Status, tr.Run.Error)
			}
			want := []string{"supervisor>research_agent (llm)", "research_agent>supervisor (deterministic)",
				"supervisor>math_agent (llm)", "math_agent>supervisor (deterministic)"}
			if got := transfers(tr); !slices.Equal(got, want) {
				t.Errorf("transfers = %q, want %q", got, want)
			}
			reqs := fake.Requests()
			if len(reqs) != 7 || reqs[0].Model != "fake-model" || reqs[0].Stream != streaming ||
				!slices.Contains(reqs[0].Tools, "transfer_to_agent") || !slices.Contains(reqs[4].Tools, "divide") {
				t.Errorf("requests = %+v", reqs)
			}
			var divided string
			var found []string
			var tokens int
			for _, e := range tr.Events {
				if e.Kind == traces.KindToolFinished && e.Tool.Name == "divide" {
					divided = e.Tool.Result
				}
				if e.Kind == traces.KindToolFinished && e.Tool.Name == "search" {
					found = append(found, strings.Fields(e.Tool.Result)[0]+" "+strings.Fields(e.Tool.Result)[1])
				}
				if e.Kind == traces.KindModelFinished && e.Model.Usage != nil {
					tokens += e.Model.Usage.TotalTokens
				}
			}
			// The search answers each query from its corpus (which has no population of
			// California: its best match is California's GDP).
			if want := []string{"United States", "New York", "California GDP"}; !slices.Equal(found, want) {
				t.Errorf("search found %q, want %q", found, want)
			}
			if divided != "0.078718" {
				t.Errorf("divide returned %q, want the real quotient 0.078718", divided)
			}
			if tokens < 70 { // 10 prompt tokens a call, reported by the server
				t.Errorf("the trace counts %d tokens: the provider's usage was lost", tokens)
			}
		})
	}
}

func TestRealModelRunsTransfer(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(map[bool]string{false: "generate", true: "stream"}[streaming], func(t *testing.T) {
			fake := agentstest.NewFakeOpenAI(t,
				agentstest.FakeReply{ToolCalls: []agentstest.FakeToolCall{call("transfer_to_agent", `{"agent_name":"chat_agent"}`)}},
				agentstest.FakeReply{ToolCalls: []agentstest.FakeToolCall{call("tell_joke", `{"topic":"cats"}`)}},
				agentstest.FakeReply{Text: "Here is one about cats: why did the cat sit on the computer? To keep an eye on the mouse."},
			)
			tr := runOn(t, "transfer", "Tell me a joke about cats", fakeModel(t, fake, "k", 0), streaming)
			if tr.Run.Status != traces.StatusCompleted {
				t.Fatalf("run ended %s: %s", tr.Run.Status, tr.Run.Error)
			}
			if got := transfers(tr); !slices.Equal(got, []string{"router>chat_agent (llm)"}) {
				t.Errorf("transfers = %q", got)
			}
			last := lastAssistant(tr)
			if last.Agent != "chat_agent" || !strings.Contains(last.Message.Content, "keep an eye on the mouse") {
				t.Errorf("last message = %s %+v", last.Agent, last.Message)
			}
			if joke := toolResult(tr, "tell_joke"); !strings.Contains(joke, "mouse") {
				t.Errorf("tell_joke about cats answered %q", joke)
			}
		})
	}
}

// toolResult is the result of the trace's first call of tool.
func toolResult(tr traces.Trace, tool string) string {
	for _, e := range tr.Events {
		if e.Kind == traces.KindToolFinished && e.Tool.Name == tool {
			return e.Tool.Result
		}
	}
	return ""
}

// lastAssistant is the trace's last assistant message event.
func lastAssistant(tr traces.Trace) traces.Event {
	for i := len(tr.Events) - 1; i >= 0; i-- {
		if e := tr.Events[i]; e.Message != nil && e.Message.Role == "assistant" {
			return e
		}
	}
	return traces.Event{}
}

func TestRealModelFailures(t *testing.T) {
	cases := []struct {
		name  string
		reply agentstest.FakeReply
		key   string
		want  string
	}{
		{"401", agentstest.FakeReply{}, "bad-key", "Incorrect API key provided"},
		{"429", agentstest.FakeReply{Status: http.StatusTooManyRequests, Message: "Rate limit reached for fake-model"}, "k", "Rate limit reached for fake-model"},
		{"500", agentstest.FakeReply{Status: http.StatusInternalServerError, Message: "The server had an error"}, "k", "The server had an error"},
		{"malformed", agentstest.FakeReply{Malformed: true}, "k", "failed to create chat completion: unexpected EOF"},
		{"timeout", agentstest.FakeReply{Hang: true}, "k", "Client.Timeout exceeded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := agentstest.NewFakeOpenAI(t, c.reply)
			tr := runOn(t, "transfer", "Tell me a joke", fakeModel(t, fake, c.key, 300*time.Millisecond), false)
			msg := finalError(t, tr)
			if !strings.Contains(msg, c.want) {
				t.Errorf("run error = %q, want it to hold the provider's %q", msg, c.want)
			}
			var errEvent *traces.Event
			for i := range tr.Events {
				if tr.Events[i].Kind == traces.KindError {
					errEvent = &tr.Events[i]
				}
			}
			if errEvent == nil || errEvent.Agent != "router" || !strings.Contains(errEvent.Error.Message, c.want) {
				t.Errorf("error event = %+v, want one blamed on router holding %q", errEvent, c.want)
			}
		})
	}
}

func TestRealModelWithoutKey(t *testing.T) {
	m, err := agents.ParseModel("openai:gpt-4o-mini", agents.ProviderEnv{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Ready(); traces.ErrorCode(err) != traces.CodeInvalid || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("Ready() = %v, want an invalid-input error naming OPENAI_API_KEY", err)
	}
	tr := runOn(t, "transfer", "hi", m, false)
	if msg := finalError(t, tr); !strings.Contains(msg, "set OPENAI_API_KEY") {
		t.Errorf("run error = %q", msg)
	}
}

func TestParseModel(t *testing.T) {
	for _, c := range []struct{ spec, name, err string }{
		{"scripted", "scripted", ""},
		{"", "scripted", ""},
		{"openai:gpt-4o-mini", "openai:gpt-4o-mini", ""},
		{"openai:", "", "write openai:MODEL"},
		{"claude:opus", "", "write scripted, openai:MODEL or replay:FILE"},
		{"replay:/nonexistent/t.json", "", "cannot read the trace"},
	} {
		m, err := agents.ParseModel(c.spec, agents.ProviderEnv{APIKey: "k"})
		switch {
		case c.err == "" && (err != nil || m.Name() != c.name):
			t.Errorf("ParseModel(%q) = %v, %v; want name %q", c.spec, m, err, c.name)
		case c.err != "" && (traces.ErrorCode(err) != traces.CodeInvalid || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseModel(%q) error = %v, want one saying %q", c.spec, err, c.err)
		}
	}
}
