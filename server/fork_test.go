package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// TestForkRun: POST /api/runs/:id/fork starts a run of the flow that answers the chosen model
// call otherwise (here, a transfer to math_agent instead of research_agent), the calls before it
// from the recording; the diff page names the fork's handoff. Bad forks get a 400 saying why.
func TestForkRun(t *testing.T) {
	ts := mustOpenServer(t, server.Config{Flows: []agents.Flow{catalogueFlow(t, "supervisor")}})
	server.SetRunner(ts.Server, agents.RunFlow)
	original := ts.ended(t, ts.createRun(t, `{"flow":"supervisor","pace_ms":0}`))
	var at int64
	for _, e := range original.Events {
		if e.Kind == traces.KindModelStarted {
			at = e.Seq
			break
		}
	}
	if form := page(t, ts.do(t, request{path: "/runs/" + original.Run.ID + "/inspector?seq=" + itoa(at)})).Find("[data-testid=fork-form]"); form.Length() != 1 ||
		form.Find("select[name=model]").Length() != 0 {
		t.Errorf("a server of one model: the inspector shows %d fork forms, %d model pickers; want the form, without picker", form.Length(), form.Find("select[name=model]").Length())
	}
	res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + original.Run.ID + "/fork",
		body: `{"at":` + itoa(at) + `,"transfer_to":"math_agent","pace_ms":0}`})
	if res.status != http.StatusCreated {
		t.Fatalf("fork: %d %s", res.status, res.body)
	}
	forked := ts.ended(t, strings.TrimPrefix(res.header.Get("Location"), "/runs/"))
	if forked.Run.Status != traces.StatusCompleted || forked.Run.Input != original.Run.Input || !strings.HasPrefix(forked.Run.Model, "fork of "+original.Run.ID) {
		t.Errorf("forked run = %+v", forked.Run)
	}
	if f := forked.Events[0].Run.ForkedFrom; f == nil || *f != (traces.ForkOrigin{Run: original.Run.ID, Seq: at}) {
		t.Errorf("the fork's run.started says forked_from %+v, want %s at #%d", f, original.Run.ID, at)
	}
	// The fork's page links back to the model call it changed; the original's lists the fork.
	back := `href="/runs/` + original.Run.ID + `?at=` + itoa(at) + `"`
	if page := ts.do(t, request{path: "/runs/" + forked.Run.ID}); !strings.Contains(string(page.body), `data-testid="forked-from"`) || !strings.Contains(string(page.body), back) {
		t.Errorf("the fork's page does not link back to %s", back)
	}
	if page := ts.do(t, request{path: "/runs/" + original.Run.ID}); !strings.Contains(string(page.body), `data-testid="forks"`) ||
		!strings.Contains(string(page.body), `href="/runs/`+forked.Run.ID+`" data-run-id="`+forked.Run.ID+`" data-seq="`+itoa(at)+`"`) {
		t.Errorf("the original's page does not list its fork %s", forked.Run.ID)
	}
	page := ts.do(t, request{path: "/diff?a=" + original.Run.ID + "&b=" + forked.Run.ID})
	if !strings.Contains(string(page.body), `data-what="routing decision"`) || !strings.Contains(string(page.body), "hands off to math_agent (llm)") {
		t.Errorf("the diff of the fork does not name its handoff")
	}

	for _, c := range []struct{ name, body, want string }{
		{"no change", `{"at":` + itoa(at) + `}`, `what it answers instead: "reply", "transfer_to" or both`},
		{"not a model call", `{"at":1,"reply":"x"}`, "is no model call (model.started)"},
		{"unknown agent", `{"at":` + itoa(at) + `,"transfer_to":"nobody"}`, `transfer_to "nobody" is no agent of run`},
		{"unknown field", `{"at":3,"replay":"x"}`, `unknown field "replay"`},
		{"input of Baton's own run", `{"at":` + itoa(at) + `,"input":[{"role":"user","content":"x"}]}`, "input edits fork an app's run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + original.Run.ID + "/fork", body: c.body})
			if res.status != http.StatusBadRequest || !strings.Contains(res.apiError(t), c.want) {
				t.Errorf("got %d %s, want 400 saying %q", res.status, res.body, c.want)
			}
		})
	}
}

// TestForkRunWithModel: a fork given "model" answers the calls after its fork point from that
// model (here the fake OpenAI server, which is asked nothing before), the calls before it from the
// recording; a model the server does not offer, or one without its key, is a 400.
func TestForkRunWithModel(t *testing.T) {
	fake := agentstest.NewFakeOpenAI(t,
		agentstest.FakeReply{ToolCalls: []agentstest.FakeToolCall{{Name: "get_weather", Arguments: `{"city":"Tokyo"}`}}},
		agentstest.FakeReply{Text: "From the fake: sunny in Tokyo."})
	real := mustModel(t, "openai:fake-model", agents.ProviderEnv{APIKey: "k", BaseURL: fake.BaseURL()})
	keyless := mustModel(t, "openai:gpt-keyless", agents.ProviderEnv{})
	ts := mustOpenServer(t, server.Config{Flows: []agents.Flow{catalogueFlow(t, "transfer")}, Models: []*agents.Model{real, keyless}})
	server.SetRunner(ts.Server, agents.RunFlow)
	original := ts.ended(t, ts.createRun(t, `{"flow":"transfer","model":"scripted","input":"Tell me a joke about Tokyo.","pace_ms":0}`))
	var at int64
	for _, e := range original.Events {
		if e.Kind == traces.KindModelStarted && e.Agent == "router" {
			at = e.Seq
			break
		}
	}
	if original.Run.Status != traces.StatusCompleted || at == 0 || len(fake.Requests()) != 0 {
		t.Fatalf("the original run: %s, router's call at #%d, %d requests to the fake", original.Run.Status, at, len(fake.Requests()))
	}

	// The fork form offers the models, the one a fork goes on with unless told first.
	var offered []string
	page(t, ts.do(t, request{path: "/runs/" + original.Run.ID + "/inspector?seq=" + itoa(at)})).
		Find("[data-testid=fork-form] select[name=model] option").Each(func(_ int, o *goquery.Selection) {
		v, _ := o.Attr("value")
		offered = append(offered, v)
	})
	if strings.Join(offered, ",") != "scripted,openai:fake-model,openai:gpt-keyless" {
		t.Errorf("the fork form offers %q", offered)
	}

	for _, c := range []struct{ name, model, want string }{
		{"unknown", `"openai:gpt-5"`, `unknown model "openai:gpt-5"; this server offers openai:fake-model, openai:gpt-keyless, scripted`},
		{"no key", `"openai:gpt-keyless"`, "model openai:gpt-keyless needs an API key: set OPENAI_API_KEY"},
		{"not a string", `1`, `field "model" must be a string`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + original.Run.ID + "/fork",
				body: `{"at":` + itoa(at) + `,"transfer_to":"weather_agent","model":` + c.model + `}`})
			if res.status != http.StatusBadRequest || !strings.Contains(res.apiError(t), c.want) {
				t.Errorf("got %d %s, want 400 saying %q", res.status, res.body, c.want)
			}
		})
	}

	res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + original.Run.ID + "/fork",
		body: `{"at":` + itoa(at) + `,"transfer_to":"weather_agent","model":"openai:fake-model","pace_ms":0}`})
	if res.status != http.StatusCreated {
		t.Fatalf("fork: %d %s", res.status, res.body)
	}
	forked := ts.ended(t, strings.TrimPrefix(res.header.Get("Location"), "/runs/"))
	if forked.Run.Status != traces.StatusCompleted || !strings.Contains(forked.Run.Model, "then openai:fake-model") {
		t.Fatalf("forked run = %+v", forked.Run)
	}
	if got := len(fake.Requests()); got != 2 {
		t.Errorf("the fake was asked %d times; want 2, weather_agent's two calls after the fork point", got)
	}
	if answer := story.Of(forked).Answer; answer != "From the fake: sunny in Tokyo." {
		t.Errorf("the fork answers %q; want the fake's reply", answer)
	}
}
