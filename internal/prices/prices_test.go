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
