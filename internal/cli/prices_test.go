package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/cli"
	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
)

// TestPricesFlag exports the report of a run on a priced model: the header shows the usage of
// its trace at the default price, and at the price of a --prices file when one is given; a bad
// file is refused by export and serve with what to fix.
func TestPricesFlag(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "baton.db")
	tr := readTraceFile(t, "../../traces/testdata/v2/supervisor.trace.json")
	tr.Run.ID, tr.Run.Model = "run-20260314-093000-c057", "openai:gpt-4o-mini-2024-07-18"
	var prompt, completion int
	for _, e := range tr.Events {
		if e.Kind == traces.KindModelFinished && e.Model.Usage != nil {
			prompt, completion = prompt+e.Model.Usage.PromptTokens, completion+e.Model.Usage.CompletionTokens
		}
	}
	if prompt == 0 {
		t.Fatal("the trace reports no usage")
	}
	data, err := traces.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "priced.trace.json")
	write := func(path, body string) {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(file, string(data))
	baton := func(args ...string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		code := cli.Run(context.Background(), args, &stdout, &stderr)
		return stdout.String(), stderr.String(), code
	}
	if _, stderr, code := baton("import", file, "--db", db); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	headerCost := func(extra ...string) string {
		t.Helper()
		stdout, stderr, code := baton(append([]string{"export", tr.Run.ID, "--html", "--db", db}, extra...)...)
		if code != 0 {
			t.Fatalf("export --html %v: exit %d: %s", extra, code, stderr)
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(stdout))
		if err != nil {
			t.Fatal(err)
		}
		return doc.Find("[data-testid=run-cost]").First().Text()
	}
	mini := prices.Default()["gpt-4o-mini"]
	if got, want := headerCost(), prices.Format((float64(prompt)*mini.Input+float64(completion)*mini.Output)/1e6); got != want {
		t.Errorf("cost at the default price = %q, want %q", got, want)
	}
	own := filepath.Join(dir, "prices.json")
	write(own, `{"gpt-4o-mini": {"input": 100, "output": 1000}}`)
	if got, want := headerCost("--prices", own), prices.Format((float64(prompt)*100+float64(completion)*1000)/1e6); got != want {
		t.Errorf("cost at the --prices file's price = %q, want %q", got, want)
	}

	bad := filepath.Join(dir, "bad.json")
	write(bad, `{"gpt-4o-mini": {"input": 1}}`)
	for _, args := range [][]string{
		{"export", tr.Run.ID, "--html", "--db", db, "--prices", bad},
		{"serve", "--addr", "127.0.0.1:0", "--db", db, "--prices", bad},
	} {
		_, stderr, code := baton(args...)
		if want := `--prices: prices file ` + bad + `: model "gpt-4o-mini": give both "input" and "output"`; code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("%s with a bad prices file: exit %d, %q; want it refused saying %q", args[0], code, stderr, want)
		}
	}
}

// TestRunPrintsCost runs a flow on an OpenAI-compatible model that reports usage, with a
// --prices file: each model call's line ends with what its usage in the trace costs, or says
// the model has no price when the file lacks it (never a price guessed from another model's).
func TestRunPrintsCost(t *testing.T) {
	for _, tc := range []struct {
		name, prices string
		want         func(u *traces.Usage) string
	}{
		{"priced", `{"house-model": {"input": 5, "output": 25}}`, func(u *traces.Usage) string {
			return " · " + prices.Format((float64(u.PromptTokens)*5+float64(u.CompletionTokens)*25)/1e6)
		}},
		{"unpriced", `{"other-model": {"input": 5, "output": 25}}`, func(*traces.Usage) string {
			return " · no price for house-model"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := agentstest.NewFakeOpenAI(t,
				agentstest.FakeReply{ToolCalls: []agentstest.FakeToolCall{{Name: "transfer_to_agent", Arguments: `{"agent_name":"weather_agent"}`}}},
				agentstest.FakeReply{ToolCalls: []agentstest.FakeToolCall{{Name: "get_weather", Arguments: `{"city":"Tokyo"}`}}},
				agentstest.FakeReply{Text: "Sunny in Tokyo."})
			t.Setenv("OPENAI_API_KEY", "k")
			t.Setenv("OPENAI_BASE_URL", fake.BaseURL())
			dir := t.TempDir()
			own, out := filepath.Join(dir, "prices.json"), filepath.Join(dir, "run.json")
			if err := os.WriteFile(own, []byte(tc.prices), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			args := []string{"run", "transfer", "--input", "Weather in Tokyo?", "--model", "openai:house-model", "--prices", own, "--out", out}
			if code := cli.Run(context.Background(), args, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			tr := readTraceFile(t, out)
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			calls := 0
			for i, e := range tr.Events {
				if e.Kind != traces.KindModelFinished || e.Model.Usage == nil {
					continue
				}
				calls++
				if want := tc.want(e.Model.Usage); i >= len(lines) || !strings.HasSuffix(lines[i], want) {
					t.Errorf("line of #%d does not end with %q: %q", e.Seq, want, lines[min(i, len(lines)-1)])
				}
			}
			if calls == 0 {
				t.Fatal("the run reported no usage")
			}
		})
	}
}
