package cli_test

import (
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, `rewrite the README's "Command line" block from "baton help"`)

// readmeBlock finds the README's "Command line" code block: where its lines start and end.
var readmeBlock = regexp.MustCompile("(?s)\n## Command line\n\n```\n(.*?\n)```\n")

// TestREADMECommandLine: the README's "Command line" block is the usage line of every command,
// as "baton help" lists them. go test ./internal/cli -run TestREADMECommandLine -update writes
// it so.
func TestREADMECommandLine(t *testing.T) {
	const readme = "../../README.md"
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	m := readmeBlock.FindSubmatchIndex(data)
	if m == nil {
		t.Fatalf("%s has no \"## Command line\" section opening with a code block", readme)
	}
	want := strings.Join(usageLines(t), "\n") + "\n"
	got := string(data[m[2]:m[3]])
	if got == want {
		return
	}
	if *update {
		out := slices.Concat(data[:m[2]], []byte(want), data[m[3]:])
		if err := os.WriteFile(readme, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the README's command line differs from \"baton help\" (go test ./internal/cli -run TestREADMECommandLine -update writes it):\n got:\n%s\nwant:\n%s", got, want)
}
