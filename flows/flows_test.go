package flows_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"go.uber.org/goleak"

	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/attach/inprocess"
	"github.com/baton-dev/baton/flows"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/traces"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// support is a flow of a program's own, written as a user writes one: a desk agent transfers each
// request to billing (which looks the invoice up) or to tech.
func support(more ...adk.ChatModelAgentMiddleware) flows.Flow {
	return flows.Flow{
		Name:         "support",
		Description:  "A desk agent hands each request to billing or tech.",
		DefaultInput: "I was charged twice this month.",
		Build: func(ctx context.Context, models flows.Models) (adk.Agent, error) {
			agent := func(name, desc string, tools ...tool.BaseTool) (adk.Agent, error) {
				m, err := models(name)
				if err != nil {
					return nil, err
				}
				conf := &adk.ChatModelAgentConfig{Name: name, Description: desc, Instruction: "You are " + name + ".", Model: m,
					Handlers: append([]adk.ChatModelAgentMiddleware{flows.Middleware()}, more...)}
				if len(tools) > 0 {
					conf.ToolsConfig = adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: tools}}
				}
				return adk.NewChatModelAgent(ctx, conf)
			}
			lookup, err := utils.InferTool("lookup_invoice", "Find a customer's invoices.",
				func(_ context.Context, in struct{ Customer string }) (string, error) {
					return in.Customer + ": two charges of 12 EUR on the 3rd", nil
				})
			if err != nil {
				return nil, err
			}
			desk, err := agent("desk", "Routes each request.")
			if err != nil {
				return nil, err
			}
			billing, err := agent("billing", "Invoices and refunds.", lookup)
			if err != nil {
				return nil, err
			}
			tech, err := agent("tech", "Technical problems.")
			if err != nil {
				return nil, err
			}
			return adk.SetSubAgents(ctx, desk, []adk.Agent{billing, tech})
		},
		Script: map[string][]flows.Reply{
			"desk":    {{ToolCalls: []flows.ToolCall{flows.Transfer("billing")}}},
			"billing": {{ToolCalls: []flows.ToolCall{flows.Call("lookup_invoice", map[string]string{"customer": "alice"})}}, {Text: "You were charged twice: I refunded one."}},
			"tech":    {{Text: "Restart the router."}},
		},
	}
}

// page is Baton's page served in the test's process with flows registered.
type page struct{ url string }

// startPage serves the page with f, offering models, until the test ends, then waits for it to
// stop.
func startPage(t *testing.T, f flows.Flow, models ...string) page {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	if _, err := inprocess.Start(ctx, inprocess.Options{Out: &out, Flows: []flows.Flow{f}, Models: models}); err != nil {
		cancel()
		t.Fatal(err)
	}
	p := page{url: strings.TrimSpace(out.String()[strings.Index(out.String(), "http://"):])}
	t.Cleanup(func() {
		cancel()
		http.DefaultClient.CloseIdleConnections()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			resp, err := http.Get(p.url + "/api/runs")
			if err != nil {
				return
			}
			resp.Body.Close()
		}
		t.Error("the page still answers after its context ended")
	})
	return p
}

// do sends a request with a JSON body (none when body is "") and returns the status and body.
func (p page) do(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, p.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// start starts a run as POST /api/runs body says and returns its id.
func (p page) start(t *testing.T, body string) string {
	t.Helper()
	return p.created(t, "/api/runs", body)
}

// created posts body to path, wants 201 {"id"} and returns the id.
func (p page) created(t *testing.T, path, body string) string {
	t.Helper()
	status, data := p.do(t, http.MethodPost, path, body)
	var run struct{ ID string }
	if status != http.StatusCreated || json.Unmarshal(data, &run) != nil {
		t.Fatalf("POST %s %s: %d %s", path, body, status, data)
	}
	return run.ID
}

// trace waits until run id's trace satisfies ok, and returns it.
func (p page) trace(t *testing.T, id, what string, ok func(traces.Trace) bool) traces.Trace {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		status, data := p.do(t, http.MethodGet, "/api/runs/"+id+"/trace", "")
		tr, err := traces.Unmarshal(data)
		if status == http.StatusOK && err == nil && ok(tr) {
			return tr
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s: waited 20s for %s; it is %s with %d events", id, what, tr.Run.Status, len(tr.Events))
		}
	}
}

func (p page) ended(t *testing.T, id string) traces.Trace {
	t.Helper()
	return p.trace(t, id, "its end", func(tr traces.Trace) bool { return tr.Run.Status.Ended() })
}

// agentsRun are the agents that called their model in tr, in order, once each.
func agentsRun(tr traces.Trace) []string {
	var out []string
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelStarted && (len(out) == 0 || out[len(out)-1] != e.Agent) {
			out = append(out, e.Agent)
		}
	}
	return out
}

// TestRegisteredFlowIsHeldEditedAndContinued: a flow registered with the page is listed beside
// nothing else, starts from POST /api/runs, holds at a transfer breakpoint, and goes on with the
// transfer's target edited; its trace records the pause and the edit.
func TestRegisteredFlowIsHeldEditedAndContinued(t *testing.T) {
	p := startPage(t, support())
	status, data := p.do(t, http.MethodGet, "/api/flows", "")
	var listed []struct{ Name, Description string }
	if status != http.StatusOK || json.Unmarshal(data, &listed) != nil || len(listed) != 1 || listed[0].Name != "support" ||
		listed[0].Description != support().Description {
		t.Fatalf("GET /api/flows: %d %s", status, data)
	}
	status, html := p.do(t, http.MethodGet, "/", "")
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(html))
	if status != http.StatusOK || err != nil || doc.Find(`[data-testid=flow-group][data-group="Your flows"] [data-testid=flow-support]`).Length() != 1 {
		t.Errorf("the index does not offer the flow under Your flows: %d %v", status, err)
	}
	status, data = p.do(t, http.MethodPost, "/api/runs", `{"flow":"nope"}`)
	if status != http.StatusBadRequest || !strings.Contains(string(data), `unknown flow \"nope\"; known flows: support`) {
		t.Errorf("an unknown flow: %d %s", status, data)
	}

	id := p.start(t, `{"flow":"support","pace_ms":0,"breakpoints":["transfer"]}`)
	held := p.trace(t, id, "a pause", func(tr traces.Trace) bool {
		return len(tr.Events) > 0 && tr.Events[len(tr.Events)-1].Kind == traces.KindPaused
	})
	if e := held.Events[len(held.Events)-1]; e.Pause.Break != traces.BreakTransfer || e.Pause.Target != "billing" || e.Agent != "desk" {
		t.Fatalf("held at %+v by %s; want desk's transfer to billing", *e.Pause, e.Agent)
	}
	to := fmt.Sprintf(`{"reply":{"role":"assistant","tool_calls":[{"id":"x","name":"transfer_to_agent","arguments":%q}]}}`, `{"agent_name":"tech"}`)
	if status, data := p.do(t, http.MethodPost, "/api/runs/"+id+"/continue", to); status != http.StatusOK {
		t.Fatalf("continue: %d %s", status, data)
	}
	tr := p.ended(t, id)
	if tr.Run.Status != traces.StatusCompleted || strings.Join(agentsRun(tr), ",") != "desk,tech" {
		t.Fatalf("the edited run is %s through %v; want completed through desk, tech", tr.Run.Status, agentsRun(tr))
	}
	var continued *traces.Event
	for i, e := range tr.Events {
		if e.Kind == traces.KindContinued {
			continued = &tr.Events[i]
		}
	}
	if continued == nil || continued.Pause.By != "api" || continued.Pause.Reply == nil || continued.Pause.Edited == "" {
		t.Fatalf("the trace's continued event: %+v", continued)
	}
}

// TestRegisteredFlowWithAppMiddlewareIsHeldOnce: agents that also carry attach.Middleware (as
// an app's do, registered as they are) are held once at each model call, not once per wrapper.
func TestRegisteredFlowWithAppMiddlewareIsHeldOnce(t *testing.T) {
	p := startPage(t, support(attach.Middleware()))
	id := p.start(t, `{"flow":"support","pace_ms":0,"breakpoints":["model"]}`)
	var tr traces.Trace
	var handled int64 // the seq of the last pause continued
	for deadline := time.Now().Add(30 * time.Second); ; {
		tr = p.trace(t, id, "a new pause or the end", func(tr traces.Trace) bool {
			n := len(tr.Events)
			return n > 0 && (tr.Events[n-1].Kind == traces.KindPaused && tr.Events[n-1].Seq > handled || tr.Run.Status.Ended())
		})
		if tr.Run.Status.Ended() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run did not end within 30s")
		}
		handled = tr.Events[len(tr.Events)-1].Seq
		if status, data := p.do(t, http.MethodPost, "/api/runs/"+id+"/continue", `{}`); status != http.StatusOK {
			t.Fatalf("continue: %d %s", status, data)
		}
	}
	calls, paused := 0, 0
	for _, e := range tr.Events {
		switch e.Kind {
		case traces.KindModelStarted:
			calls++
		case traces.KindPaused:
			paused++
		}
	}
	if tr.Run.Status != traces.StatusCompleted || calls == 0 || paused != calls {
		t.Fatalf("run %s with %d model calls held %d times; want completed, each call held once", tr.Run.Status, calls, paused)
	}
}

// TestRegisteredFlowsToolIsGivenAResult: held before its tool runs (flows.Middleware), a registered
// flow's tool call is given a result in its place: the tool does not run, the model sees it.
func TestRegisteredFlowsToolIsGivenAResult(t *testing.T) {
	p := startPage(t, support())
	id := p.start(t, `{"flow":"support","pace_ms":0,"breakpoints":["tool:lookup_invoice"]}`)
	held := p.trace(t, id, "a pause", func(tr traces.Trace) bool {
		return len(tr.Events) > 0 && tr.Events[len(tr.Events)-1].Kind == traces.KindPaused
	})
	if e := held.Events[len(held.Events)-1]; e.Pause.Break != traces.BreakTool || e.Pause.Args == nil {
		t.Fatalf("held at %+v; want before lookup_invoice runs, its arguments given", *e.Pause)
	}
	if status, data := p.do(t, http.MethodPost, "/api/runs/"+id+"/continue", `{"result":"No charges found."}`); status != http.StatusOK {
		t.Fatalf("continue: %d %s", status, data)
	}
	tr := p.ended(t, id)
	var fed []string // what billing's last call was fed by the tool
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelStarted && e.Agent == "billing" {
			fed = fed[:0]
			for _, m := range e.Model.Input {
				if m.Role == "tool" {
					fed = append(fed, m.Content)
				}
			}
		}
	}
	data, _ := traces.Marshal(tr)
	if tr.Run.Status != traces.StatusCompleted || strings.Join(fed, "|") != "No charges found." || strings.Contains(string(data), "two charges") {
		t.Errorf("the run is %s, billing was fed %q by the tool; want the result given, the tool not run", tr.Run.Status, fed)
	}
}

// TestRegisteredFlowIsForkedAndDiffed: a run of a registered flow is forked at a later model call,
// every call before it answered from the recording, and replayed; the diff of the original and
// the fork names the changed reply as their first divergence.
func TestRegisteredFlowIsForkedAndDiffed(t *testing.T) {
	p := startPage(t, support())
	original := p.ended(t, p.start(t, `{"flow":"support","pace_ms":0}`))
	if strings.Join(agentsRun(original), ",") != "desk,billing" {
		t.Fatalf("the original went through %v", agentsRun(original))
	}
	var at int64 // billing's second call: the one that answers
	var calls []int64
	for _, e := range original.Events {
		if e.Kind == traces.KindModelStarted {
			calls = append(calls, e.Seq)
		}
	}
	if len(calls) != 3 {
		t.Fatalf("the original made %d model calls; want 3", len(calls))
	}
	at = calls[2]
	id := p.created(t, "/api/runs/"+original.Run.ID+"/fork", fmt.Sprintf(`{"at":%d,"reply":"No refund: the charges differ.","pace_ms":0}`, at))
	forked := p.ended(t, id)
	if f := forked.Events[0].Run.ForkedFrom; forked.Run.Status != traces.StatusCompleted || f == nil || *f != (traces.ForkOrigin{Run: original.Run.ID, Seq: at}) {
		t.Fatalf("the fork: %+v, forked from %+v", forked.Run, f)
	}
	var names []string // the model that answered each call
	for _, e := range forked.Events {
		if e.Kind == traces.KindModelStarted {
			names = append(names, e.Model.Name)
		}
	}
	if strings.Join(names, ",") != "replay,replay,replay" {
		t.Errorf("the fork's calls were answered by %v; want the recording's replies up to and with the edit", names)
	}
	if strings.Join(agentsRun(forked), ",") != "desk,billing" || !strings.Contains(answer(forked), "No refund") {
		t.Errorf("the fork went through %v answering %q", agentsRun(forked), answer(forked))
	}

	replayed := p.ended(t, p.created(t, "/api/runs/"+original.Run.ID+"/replay", `{"pace_ms":0}`))
	if replayed.Run.Status != traces.StatusCompleted || answer(replayed) != answer(original) {
		t.Errorf("the replay is %s answering %q; want completed answering %q", replayed.Run.Status, answer(replayed), answer(original))
	}

	status, html := p.do(t, http.MethodGet, "/diff?a="+original.Run.ID+"&b="+forked.Run.ID, "")
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(html))
	if status != http.StatusOK || err != nil {
		t.Fatalf("diff page: %d %v", status, err)
	}
	first := doc.Find(`[data-testid=first-divergence]`)
	if what, _ := first.Attr("data-what"); what != "reply" || !strings.Contains(first.Text(), "No refund") {
		t.Errorf("the diff's first divergence is %q: %s", what, first.Text())
	}
}

// answer is the text of a run's last model reply.
func answer(tr traces.Trace) string {
	for i := len(tr.Events) - 1; i >= 0; i-- {
		if e := tr.Events[i]; e.Kind == traces.KindModelFinished && e.Model.Output != nil {
			return e.Model.Output.Content
		}
	}
	return ""
}

// TestFlowWithoutScript: a registered flow with no script is not run on the scripted model: the
// start is refused, saying what to give instead. On the page's real model (a fake OpenAI) it
// runs, and a fork of it answers the calls up to the fork point from the recording, then asks
// the provider: the fake counts the requests.
func TestFlowWithoutScript(t *testing.T) {
	f := support()
	f.Script = nil
	p := startPage(t, f)
	status, data := p.do(t, http.MethodPost, "/api/runs", `{"flow":"support"}`)
	if status != http.StatusBadRequest || !strings.Contains(string(data), "flow support has no script for the scripted model: run it on a real model") {
		t.Errorf("a run of a flow without script: %d %s", status, data)
	}

	transfer := func(to string) []agentstest.FakeToolCall {
		return []agentstest.FakeToolCall{{Name: "transfer_to_agent", Arguments: `{"agent_name":"` + to + `"}`}}
	}
	fake := agentstest.NewFakeOpenAI(t,
		agentstest.FakeReply{ToolCalls: transfer("billing")}, // the run: desk → billing, which looks up and answers
		agentstest.FakeReply{ToolCalls: []agentstest.FakeToolCall{{Name: "lookup_invoice", Arguments: `{"Customer":"alice"}`}}},
		agentstest.FakeReply{Text: "You were charged twice: I refunded one."},
		agentstest.FakeReply{ToolCalls: transfer("tech")}, // the fork, once billing hands back: desk → tech
		agentstest.FakeReply{Text: "Restart the router."},
	)
	t.Setenv("OPENAI_API_KEY", "test-key")
	t.Setenv("OPENAI_BASE_URL", fake.BaseURL())
	p = startPage(t, f, "openai:fake-model")
	original := p.ended(t, p.start(t, `{"flow":"support","pace_ms":0}`))
	var calls []int64
	for _, e := range original.Events {
		if e.Kind == traces.KindModelStarted {
			calls = append(calls, e.Seq)
		}
	}
	if original.Run.Status != traces.StatusCompleted || len(calls) != 3 || len(fake.Requests()) != 3 {
		t.Fatalf("the run on the fake is %s with %d model calls, %d requests; want completed, 3 and 3", original.Run.Status, len(calls), len(fake.Requests()))
	}
	// The fork form has no model to pick (the scripted one cannot run the flow) and says which
	// model the fork goes on with.
	status, html := p.do(t, http.MethodGet, fmt.Sprintf("/runs/%s/inspector?seq=%d", original.Run.ID, calls[1]), "")
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(html))
	if status != http.StatusOK || err != nil || doc.Find("[data-testid=fork-form] select[name=model]").Length() != 0 ||
		!strings.Contains(doc.Find("[data-testid=fork-form] .hint").Text(), "the fork goes on with openai:fake-model, the flow having no scripts") {
		t.Errorf("the fork form of a flow without script: %d %v %q", status, err, doc.Find("[data-testid=fork-form]").Text())
	}
	forked := p.ended(t, p.created(t, "/api/runs/"+original.Run.ID+"/fork", fmt.Sprintf(`{"at":%d,"transfer_to":"desk","pace_ms":0}`, calls[1])))
	var answered []string
	for _, e := range forked.Events {
		if e.Kind == traces.KindModelStarted {
			answered = append(answered, e.Agent+":"+e.Model.Name)
		}
	}
	if n := len(fake.Requests()); n != 5 || forked.Run.Status != traces.StatusCompleted ||
		strings.Join(answered, ",") != "desk:replay,billing:replay,desk:fake-model,tech:fake-model" {
		t.Errorf("the fork, %s, answered %v, and the fake had %d requests in all; want the first two from the recording, then 2 requests",
			forked.Run.Status, answered, n)
	}
}

// TestRegistrationErrors: flows that cannot be told apart or built are refused when registered.
func TestRegistrationErrors(t *testing.T) {
	noBuild := support()
	noBuild.Build = nil
	builtIn := support()
	builtIn.Name = "transfer"
	spaced := support()
	spaced.Name = "my flow"
	twoDesks := declared()
	twoDesks.Agents = append(twoDesks.Agents, traces.Agent{Name: "desk", Kind: traces.AgentChatModel})
	badKind := declared()
	badKind.Agents[1].Kind = "robot"
	orphan := declared()
	orphan.Agents[1].Parent = "dsk"
	for _, c := range []struct {
		name string
		fs   []flows.Flow
		want string
	}{
		{"twice", []flows.Flow{support(), support()}, `register flow "support": the name is registered twice`},
		{"built-in name", []flows.Flow{builtIn}, `register flow "transfer": a built-in flow has that name`},
		{"no build", []flows.Flow{noBuild}, `register flow "support": Build is nil`},
		{"bad name", []flows.Flow{spaced}, `name "my flow" must be 1 to 60 letters, digits, '-' or '_'`},
		{"an agent twice", []flows.Flow{twoDesks}, `register flow "support": its Agents: agents[3]: agent "desk" appears twice`},
		{"an unknown kind", []flows.Flow{badKind}, `register flow "support": its Agents: agents[1].kind "robot" is not one of`},
		{"an unknown parent", []flows.Flow{orphan}, `register flow "support": its Agents: agents[1]: agent "` + orphan.Agents[1].Name + `" names parent "dsk", which is not among the agents`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, err := inprocess.Start(ctx, inprocess.Options{Out: io.Discard, Flows: c.fs})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Start: %v; want %q", err, c.want)
			}
		})
	}
}

// declared is support with its agent tree declared.
func declared() flows.Flow {
	f := support()
	f.Agents = []traces.Agent{
		{Name: "desk", Kind: traces.AgentChatModel, Tools: []string{"transfer_to_agent"}},
		{Name: "billing", Kind: traces.AgentChatModel, Parent: "desk", Relation: traces.RelationSubAgent, Tools: []string{"lookup_invoice", "transfer_to_agent"}},
		{Name: "tech", Kind: traces.AgentChatModel, Parent: "desk", Relation: traces.RelationSubAgent, Tools: []string{"transfer_to_agent"}},
	}
	return f
}

// TestDeclaredAgents: a flow that declares its agents shows them on its index card and in GET
// /api/flows before it runs, and a breakpoint naming an agent it does not declare is refused;
// one that declares none lists no agents and takes breakpoints naming any.
func TestDeclaredAgents(t *testing.T) {
	p := startPage(t, declared())
	status, html := p.do(t, http.MethodGet, "/", "")
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(html))
	if status != http.StatusOK || err != nil {
		t.Fatalf("GET /: %d %v", status, err)
	}
	var card []string
	doc.Find(`[data-testid=flow-support] .flow-agents li`).Each(func(_ int, li *goquery.Selection) {
		card = append(card, strings.Join(strings.Fields(li.Text()), " "))
	})
	if strings.Join(card, "; ") != "desk; billing sub-agent of desk; tech sub-agent of desk" {
		t.Errorf("the card lists the agents %q", card)
	}
	status, data := p.do(t, http.MethodGet, "/api/flows", "")
	var listed []struct{ Agents []traces.Agent }
	if status != http.StatusOK || json.Unmarshal(data, &listed) != nil || len(listed) != 1 || len(listed[0].Agents) != 3 || listed[0].Agents[2].Parent != "desk" {
		t.Errorf("GET /api/flows: %d %s", status, data)
	}
	for _, bp := range []string{"transfer:nobody", "model@nobody"} {
		status, data = p.do(t, http.MethodPost, "/api/runs", `{"flow":"support","breakpoints":["`+bp+`"]}`)
		if status != http.StatusBadRequest || !strings.Contains(string(data), `flow support has no agent \"nobody\" (its agents: [desk billing tech])`) {
			t.Errorf("breakpoint %s: %d %s; want 400 naming the unknown agent", bp, status, data)
		}
	}
	id := p.start(t, `{"flow":"support","pace_ms":0,"breakpoints":["transfer:tech"]}`)
	if tr := p.ended(t, id); tr.Run.Status != traces.StatusCompleted || len(tr.Agents) != 3 {
		t.Errorf("a run with a declared agent's breakpoint: %s with agents %v", tr.Run.Status, tr.Agents)
	}

	undeclared := startPage(t, support())
	status, html = undeclared.do(t, http.MethodGet, "/", "")
	if doc, err := goquery.NewDocumentFromReader(bytes.NewReader(html)); status != http.StatusOK || err != nil || doc.Find(`[data-testid=flow-support] .flow-agents`).Length() != 0 {
		t.Errorf("a flow that declares no agents: its card lists some (%d %v)", status, err)
	}
	id = undeclared.start(t, `{"flow":"support","pace_ms":0,"breakpoints":["transfer:nobody"]}`)
	if tr := undeclared.ended(t, id); tr.Run.Status != traces.StatusCompleted {
		t.Errorf("a run of an undeclared flow with a breakpoint on any name: %s", tr.Run.Status)
	}
}

// TestRunOptions: a flow's RunOptions are given to its runs: with adk.WithSkipTransferMessages
// billing is fed nothing of desk's transfer, which it is fed without.
func TestRunOptions(t *testing.T) {
	transferFed := func(f flows.Flow) bool {
		p := startPage(t, f)
		tr := p.ended(t, p.start(t, `{"flow":"support","pace_ms":0}`))
		if tr.Run.Status != traces.StatusCompleted {
			t.Fatalf("the run is %s", tr.Run.Status)
		}
		for _, e := range tr.Events {
			if e.Kind != traces.KindModelStarted || e.Agent != "billing" {
				continue
			}
			for _, m := range e.Model.Input {
				// eino feeds another agent's calls as "For context:" user messages; the system
				// prompt names the tool whatever the option.
				if m.Role != "system" && (strings.Contains(m.Content, "transfer_to_agent") || m.ToolName == "transfer_to_agent" ||
					slices.ContainsFunc(m.ToolCalls, func(c traces.ToolCallSpec) bool { return c.Name == "transfer_to_agent" })) {
					return true
				}
			}
			return false
		}
		t.Fatal("billing made no model call")
		return false
	}
	skipping := support()
	skipping.RunOptions = []adk.AgentRunOption{adk.WithSkipTransferMessages()}
	if transferFed(skipping) {
		t.Error("with adk.WithSkipTransferMessages billing is fed desk's transfer")
	}
	if !transferFed(support()) {
		t.Error("without RunOptions billing is not fed desk's transfer: the test no longer tells them apart")
	}
}
