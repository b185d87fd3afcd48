package attach_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/cloudwego/eino-ext/components/model/openai"
	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// TestAttachedModelCallsArePriced runs an app's agent on eino-ext's OpenAI model (against a fake
// OpenAI server), streaming and not, attached to a server with the default prices: each model
// call records the name its provider reported, and the run page prices the calls by it, though
// the run's own model is only "app".
func TestAttachedModelCallsArePriced(t *testing.T) {
	const name = "gpt-4o-mini-2024-07-18" // a dated name, priced as gpt-4o-mini
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprint("streaming=", streaming), func(t *testing.T) {
			fake := agentstest.NewFakeOpenAI(t,
				agentstest.FakeReply{ToolCalls: []agentstest.FakeToolCall{{Name: "get_weather", Arguments: `{"city":"Tokyo"}`}}},
				agentstest.FakeReply{Text: "Sunny in Tokyo today."})
			base := startPricedBaton(t)
			b := attach.New(attach.Config{URL: base})
			defer b.Close(context.Background())
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			runner := weatherApp(t, ctx, fake.BaseURL(), name, streaming)
			attachtest.Drain(t, runner.Query(ctx, "Weather in Tokyo?", b.Option()))

			tr := trace(t, base, awaitRun(t, base))
			if tr.Run.Model != "app" {
				t.Fatalf("run model %q: this test is of a run whose own model has no price", tr.Run.Model)
			}
			var prompt, completion, calls int
			var last traces.Event // the last model.finished
			for _, e := range tr.Events {
				if e.Model == nil {
					continue
				}
				if e.Model.Name != name {
					t.Errorf("#%d %s names model %q, want %q", e.Seq, e.Kind, e.Model.Name, name)
				}
				if u := e.Model.Usage; e.Kind == traces.KindModelFinished && u != nil {
					prompt, completion, calls = prompt+u.PromptTokens, completion+u.CompletionTokens, calls+1
					last = e
				}
			}
			if calls != 2 {
				t.Fatalf("%d model calls reported usage, want 2: %+v", calls, tr.Events)
			}
			mini := prices.Default()["gpt-4o-mini"]
			want := prices.Format((float64(prompt)*mini.Input + float64(completion)*mini.Output) / 1e6)
			doc := getPage(t, base+"/runs/"+tr.Run.ID)
			if got := doc.Find("[data-testid=run-cost]").Text(); got != want {
				t.Errorf("header cost = %q, want %q", got, want)
			}
			// The call's inspector names its model and prices it.
			in := getPage(t, fmt.Sprintf("%s/runs/%s/inspector?seq=%d", base, tr.Run.ID, last.Seq))
			facts := map[string]string{}
			in.Find(".facts dt").Each(func(_ int, dt *goquery.Selection) {
				facts[strings.TrimSpace(dt.Text())] = strings.TrimSpace(dt.Next().Text())
			})
			u := last.Model.Usage
			if c := prices.Format((float64(u.PromptTokens)*mini.Input + float64(u.CompletionTokens)*mini.Output) / 1e6); facts["model"] != name || facts["cost"] != c {
				t.Errorf("the inspector of #%d says model %q, cost %q; want %q, %q", last.Seq, facts["model"], facts["cost"], name, c)
			}
		})
	}
}

// startPricedBaton serves Baton, pricing model calls by the default table, until the test ends.
func startPricedBaton(t *testing.T) string {
	t.Helper()
	ln := listen(t)
	s, err := server.New(server.Config{Addr: ln.Addr().String(), Flows: []agents.Flow{}, Prices: prices.Default(),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// weatherApp is an app's one agent with a tool, on eino-ext's OpenAI model named model at baseURL.
func weatherApp(t *testing.T, ctx context.Context, baseURL, model string, streaming bool) *adk.Runner {
	t.Helper()
	cm, err := openai.NewChatModel(ctx, &openai.ChatModelConfig{BaseURL: baseURL, APIKey: "k", Model: model})
	if err != nil {
		t.Fatal(err)
	}
	weather, err := utils.InferTool("get_weather", "Tells a city's weather.", func(_ context.Context, in struct {
		City string `json:"city"`
	}) (string, error) {
		return "sunny in " + in.City, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "weather_agent", Description: "Tells the weather.", Instruction: "Answer with the weather.", Model: cm,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{weather}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, EnableStreaming: streaming})
}

// getPage fetches and parses an HTML page.
func getPage(t *testing.T, url string) *goquery.Document {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
