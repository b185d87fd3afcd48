package cli_test

import (
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, `rewrite docs/cli.md's usage block from "baton help"`)

// usageBlock finds the first code block of docs/cli.md: where its lines start and end.
var usageBlock = regexp.MustCompile("(?s)\n```\n(.*?\n)```\n")

// TestDocsCommandLine: docs/cli.md opens with the usage line of every command, as "baton help"
// lists them. go test ./internal/cli -run TestDocsCommandLine -update writes it so.
func TestDocsCommandLine(t *testing.T) {
	const readme = "../../docs/cli.md"
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	m := usageBlock.FindSubmatchIndex(data)
	if m == nil {
		t.Fatalf("%s has no code block", readme)
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
	t.Errorf("docs/cli.md's usage differs from \"baton help\" (go test ./internal/cli -run TestDocsCommandLine -update writes it):\n got:\n%s\nwant:\n%s", got, want)
}
