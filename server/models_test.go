package server_test

import (
	"net/http"

	"github.com/PuerkitoBio/goquery"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// mustModel parses spec with env, failing the test on error.
func mustModel(t *testing.T, spec string, env agents.ProviderEnv) *agents.Model {
	t.Helper()
	m, err := agents.ParseModel(spec, env)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// catalogueFlow is the built-in flow named name.
func catalogueFlow(t *testing.T, name string) agents.Flow {
	t.Helper()
	f, err := agents.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// ended waits until run id has ended and returns its trace.
func (ts *testServer) ended(t *testing.T, id string) traces.Trace {
	t.Helper()
	var tr traces.Trace
	eventually(t, "run "+id+" ends", func() bool {
		tr = ts.trace(t, id)
		return tr.Run.Status.Ended()
	})
	return tr
}

func TestRunPicksItsModel(t *testing.T) {
	fake := agentstest.NewFakeOpenAI(t,
		agentstest.FakeReply{ToolCalls: []agentstest.FakeToolCall{{Name: "transfer_to_agent", Arguments: `{"agent_name":"weather_agent"}`}}},
		agentstest.FakeReply{ToolCalls: []agentstest.FakeToolCall{{Name: "get_weather", Arguments: `{"city":"Tokyo"}`}}},
		agentstest.FakeReply{Text: "Sunny in Tokyo."})
	real := mustModel(t, "openai:fake-model", agents.ProviderEnv{APIKey: "k", BaseURL: fake.BaseURL()})
	keyless := mustModel(t, "openai:gpt-keyless", agents.ProviderEnv{})
	ts := mustOpenServer(t, server.Config{Flows: []agents.Flow{catalogueFlow(t, "transfer")}, Models: []*agents.Model{real, keyless}})
	server.SetRunner(ts.Server, agents.RunFlow)

	for _, c := range []struct{ name, body, want string }{
		{"no key", `{"flow":"transfer","model":"openai:gpt-keyless"}`, "model openai:gpt-keyless needs an API key: set OPENAI_API_KEY"},
		{"unknown", `{"flow":"transfer","model":"openai:gpt-5"}`, `unknown model "openai:gpt-5"; this server offers openai:fake-model, openai:gpt-keyless, scripted`},
		{"not a string", `{"flow":"transfer","model":1}`, `field "model" must be a string`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := ts.do(t, request{method: http.MethodPost, path: "/api/runs", body: c.body})
			if res.status != http.StatusBadRequest || !strings.Contains(res.apiError(t), c.want) {
				t.Errorf("got %d %s, want 400 saying %q", res.status, res.body, c.want)
			}
		})
	}

	// The first model is the default; the run header names it.
	tr := ts.ended(t, ts.createRun(t, `{"flow":"transfer","input":"Weather in Tokyo?"}`))
	if tr.Run.Status != traces.StatusCompleted || tr.Run.Model != "openai:fake-model" {
		t.Fatalf("run = %+v", tr.Run)
	}
	doc := page(t, ts.do(t, request{path: "/runs/" + tr.Run.ID}))
	if got := doc.Find("[data-testid=run-model]").Text(); got != "openai:fake-model" {
		t.Errorf("run header names model %q", got)
	}
	scripted := ts.ended(t, ts.createRun(t, `{"flow":"transfer","model":"scripted"}`))
	if scripted.Run.Model != "scripted" || scripted.Run.Status != traces.StatusCompleted {
		t.Errorf("scripted run = %+v", scripted.Run)
	}

	// The form offers each model, the default first, and says what the keyless one needs.
	idx := page(t, ts.do(t, request{path: "/"}))
	var offered []string
	idx.Find("[data-testid=flow-transfer] select[name=model] option").Each(func(_ int, o *goquery.Selection) {
		v, _ := o.Attr("value")
		offered = append(offered, v)
	})
	if strings.Join(offered, ",") != "openai:fake-model,openai:gpt-keyless,scripted" {
		t.Errorf("the form offers %q", offered)
	}
	if hint := idx.Find(`option[value="openai:gpt-keyless"]`).Text(); !strings.Contains(hint, "needs OPENAI_API_KEY") {
		t.Errorf("the keyless option reads %q", hint)
	}
}

func TestReplayRun(t *testing.T) {
	runs := make(chan started, 1)
	ts := mustOpenServer(t, server.Config{Flows: []agents.Flow{catalogueFlow(t, "transfer")}})
	server.SetRunner(ts.Server, agents.RunFlow)
	recorded := ts.ended(t, ts.createRun(t, `{"flow":"transfer","input":"What's the weather in London?","pace_ms":0}`))

	res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + recorded.Run.ID + "/replay", body: `{"pace_ms":0}`})
	if res.status != http.StatusCreated {
		t.Fatalf("replay: %d %s", res.status, res.body)
	}
	replayed := ts.ended(t, strings.TrimPrefix(res.header.Get("Location"), "/runs/"))
	if replayed.Run.Status != traces.StatusCompleted || replayed.Run.Input != recorded.Run.Input ||
		replayed.Run.Model != "replay of "+recorded.Run.ID+" (scripted)" || replayed.Run.ID == recorded.Run.ID {
		t.Errorf("replayed run = %+v", replayed.Run)
	}
	if got, want := modelOutputs(replayed), modelOutputs(recorded); got != want {
		t.Errorf("replayed replies:\n%s\nwant:\n%s", got, want)
	}

	server.SetRunner(ts.Server, handOver(runs))
	going := ts.createRun(t, `{"flow":"transfer"}`)
	st := receive(t, runs)
	defer st.rec.Finish(traces.StatusCompleted, "")
	foreign := ts.addRecording(t, "r-foreign")
	foreign.Finish(traces.StatusCompleted, "")
	for _, c := range []struct {
		name, id string
		status   int
		want     string
	}{
		{"unknown run", "r-00000000", 404, `run "r-00000000" not found`},
		{"still going", going, 409, "is still going on: it can be replayed once it has ended"},
		{"flow not served", "r-foreign", 400, `run r-foreign is of flow "echo", which this server does not run`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + c.id + "/replay", body: `{}`})
			if res.status != c.status || !strings.Contains(res.apiError(t), c.want) {
				t.Errorf("got %d %s, want %d saying %q", res.status, res.body, c.status, c.want)
			}
		})
	}
}

// modelOutputs lists a trace's model replies, one a line.
func modelOutputs(tr traces.Trace) string {
	var b strings.Builder
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelFinished && e.Model.Output != nil {
			b.WriteString(e.Agent + ": " + e.Model.Output.Content)
			for _, c := range e.Model.Output.ToolCalls {
				b.WriteString(" " + c.ID + " " + c.Name + c.Arguments)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}
