package prices_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/prices"
)

func TestFor(t *testing.T) {
	tab := prices.Default()
	for _, c := range []struct {
		model       string
		known, free bool
		in          float64
	}{
		{"openai:gpt-4o-mini", true, false, 0.15},
		{"gpt-4o-mini-2024-07-18", true, false, 0.15}, // longest prefix, not gpt-4o
		{"openai:gpt-4o-2024-08-06", true, false, 2.5},
		{"gpt-4.1-nano", true, false, 0.1},
		{"anthropic:claude-3-5-haiku-20241022", true, false, 0.8},
		{"scripted", true, true, 0},
		{"replay of r-1 (openai:gpt-4o)", true, true, 0},
		{"fork of r-1 at #4, then openai:gpt-4o", false, false, 0},
		{"openai:my-finetune", false, false, 0},
		{"app", false, false, 0},
		{"gpt-4o-minix", false, false, 0},
		{"gpt-4o-audio-preview", false, false, 0}, // another model, not a dated gpt-4o
		{"claude-3-5-sonnet-latest", true, false, 3},
		{"gpt-4o-2024-05-13", true, false, 5}, // priced on its own, not as its base
		{"claude-sonnet-4-20250514", true, false, 3},
		{"claude-opus-4-1-20250805", true, false, 15},
		{"claude-opus-4-5-20251101", false, false, 0}, // a later model, not a dated claude-opus-4
		{"gemini-2.5-flash-lite", true, false, 0.1},   // itself, not gemini-2.5-flash
		{"gemini-2.5-flash-preview-05-20", false, false, 0},
		{"deepseek-chat", true, false, 0.56},
	} {
		r := tab.For(c.model)
		if r.Known != c.known || r.Free != c.free || r.Input != c.in {
			t.Errorf("For(%q) = %+v, want known %v free %v input %v", c.model, r, c.known, c.free, c.in)
		}
	}
}

func TestText(t *testing.T) {
	tab := prices.Default()
	if got := tab.For("gpt-4o").Text(1000, 500); got != prices.Format((1000*2.5+500*10)/1e6) || got != "$0.0075" {
		t.Errorf("gpt-4o text = %q", got)
	}
	if got := tab.For("scripted").Text(1000, 500); got != "scripted: $0" {
		t.Errorf("scripted text = %q", got)
	}
	if got := tab.For("nobody-knows").Text(1000, 500); got != "" {
		t.Errorf("unknown text = %q, want none", got)
	}
	for usd, want := range map[float64]string{0: "$0", 12.345: "$12.35", 0.000375: "$0.000375", 0.123456: "$0.1235", 1e-7: "$0.0000001"} {
		if got := prices.Format(usd); got != want {
			t.Errorf("Format(%v) = %q, want %q", usd, got, want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tab, err := prices.Load(write("ok.json", `{"gpt-4o": {"input": 1, "output": 2}, "my-model": {"input": 0, "output": 3}}`))
	if err != nil {
		t.Fatal(err)
	}
	if tab["gpt-4o"] != (prices.Price{Input: 1, Output: 2}) || tab["my-model"].Output != 3 || tab["gpt-4o-mini"] != prices.Default()["gpt-4o-mini"] {
		t.Errorf("merged table = %v", tab)
	}
	for name, c := range map[string]struct{ body, want string }{
		"not json":   {`{"gpt-4o": `, "want a JSON object"},
		"array":      {`[1, 2]`, "want a JSON object"},
		"no output":  {`{"m": {"input": 1}}`, `give both "input" and "output"`},
		"negative":   {`{"m": {"input": -1, "output": 1}}`, "0 or more"},
		"misspelled": {`{"m": {"input": 1, "ouput": 1}}`, "unknown field"},
		"empty name": {`{"": {"input": 1, "output": 1}}`, "empty"},
	} {
		_, err := prices.Load(write(strings.ReplaceAll(name, " ", "_")+".json", c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to say %q", name, err, c.want)
		}
	}
	if _, err := prices.Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file is accepted")
	}
}

func TestRunCall(t *testing.T) {
	tab := prices.Default()
	for _, c := range []struct {
		run, call   string
		known, free bool
		in          float64
		text        string // of 1M prompt tokens
	}{
		{"app", "gpt-4o-mini", true, false, 0.15, "$0.15"},                                // an attached app's call names its model
		{"app", "", false, false, 0, ""},                                                  // it did not
		{"app", "my-deployment", false, false, 0, "no price for my-deployment"},           // a model the table has no price for
		{"openai:gpt-4o", "my-deployment", false, false, 0, "no price for my-deployment"}, // not guessed at the run's model's price
		{"openai:gpt-4o", "", true, false, 2.5, "$2.50"},                                  // a call that named none is the run's model's
		{"openai:gpt-4o", "gpt-4o-mini-2024-07-18", true, false, 0.15, "$0.15"},           // the call's own wins
		{"scripted", "gpt-4o", true, true, 0, "scripted: $0"},                             // scripted runs cost nothing
		{"replay of r-1 (openai:gpt-4o)", "gpt-4o", true, true, 0, "scripted: $0"},
		{"fork of r-1 at #4, then openai:gpt-4o", "replay", true, true, 0, "scripted: $0"}, // a fork's recorded calls
		{"fork of r-1 at #4, then openai:gpt-4o", "gpt-4o", true, false, 2.5, "$2.50"},     // its live ones
	} {
		r := tab.Run(c.run).Call(c.call)
		if r.Known != c.known || r.Free != c.free || r.Input != c.in {
			t.Errorf("Run(%q).Call(%q) = %+v, want known %v free %v input %v", c.run, c.call, r, c.known, c.free, c.in)
		}
		if got := r.Text(1_000_000, 0); got != c.text {
			t.Errorf("Run(%q).Call(%q) costs %q, want %q", c.run, c.call, got, c.text)
		}
	}
	if r := (prices.Run{}).Call("gpt-4o"); r.Known || r.Text(1, 1) != "" {
		t.Errorf("the zero Run priced a call, or marked it: %+v", r)
	}
}

func TestSum(t *testing.T) {
	tab := prices.Default()
	app := tab.Run("app")
	mixed := app.Sum()
	mixed.Add(app.Call("gpt-4o-mini"), 1_000_000, 0) // $0.15
	mixed.Add(app.Call("gpt-4o"), 0, 100_000)        // $1.00
	if got := mixed.Text(); got != "$1.15" {
		t.Errorf("two models' calls cost %q, want $1.15", got)
	}
	before := mixed
	mixed.Add(app.Call("gpt-5-preview"), 10, 10)
	mixed.Add(app.Call("my-deployment"), 10, 10)
	mixed.Add(app.Call("gpt-5-preview"), 10, 10)
	if got, want := mixed.Text(), "$1.15 + no price for gpt-5-preview, my-deployment"; got != want {
		t.Errorf("a sum with unpriced calls costs %q, want %q (a part is not a total)", got, want)
	}
	if usd, ok := mixed.Cost(); ok || usd != 1.15 {
		t.Errorf("a sum with unpriced calls: %v, %v; want not ok, the priced part 1.15", usd, ok)
	}
	if got := before.Text(); got != "$1.15" || len(before.Unpriced()) != 0 {
		t.Errorf("a copy taken before the unpriced calls changed: %q %v", got, before.Unpriced())
	}
	mixed.Add(app.Call(""), 10, 10)
	if got := mixed.Text(); got != "$1.15 + no price for gpt-5-preview, my-deployment" {
		t.Errorf("with an unnamed unpriced call too: %q", got)
	}
	only := app.Sum()
	only.Add(app.Call("my-deployment"), 10, 10)
	if got := only.Text(); got != "no price for my-deployment" {
		t.Errorf("a sum of unpriced calls alone costs %q", got)
	}
	unnamed := app.Sum()
	unnamed.Add(app.Call(""), 10, 10)
	if got := unnamed.Text(); got != "" {
		t.Errorf("an unpriced call that named no model costs %q, want nothing", got)
	}
	for _, c := range []struct {
		name string
		sum  prices.Sum
		want string
	}{
		{"no calls of a priced run", tab.Run("openai:gpt-4o").Sum(), "$0"},
		{"no calls of a scripted run", tab.Run("scripted").Sum(), "scripted: $0"},
		{"no calls of an app", app.Sum(), ""},
		{"the zero sum", prices.Sum{}, ""},
	} {
		if got := c.sum.Text(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	scripted := tab.Run("scripted")
	s := scripted.Sum()
	s.Add(scripted.Call("scripted"), 500, 20)
	if got := s.Text(); got != "scripted: $0" {
		t.Errorf("scripted calls cost %q, want scripted: $0", got)
	}
}
