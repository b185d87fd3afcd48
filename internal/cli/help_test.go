package cli_test

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/cli"
)

// usageLines returns the usage line of every command, as "baton help" lists them, in its order.
func usageLines(t *testing.T) []string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), []string{"help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("help: exit %d: %s", code, stderr.String())
	}
	var lines []string
	for _, l := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(l, "  baton ") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) < 8 {
		t.Fatalf("help lists %d usage lines, want one per command:\n%s", len(lines), stdout.String())
	}
	return lines
}

// commandName returns the command a usage line is of.
func commandName(line string) string {
	return strings.Trim(strings.Fields(line)[1], "[]")
}

// flagOf is a flag in a usage line, with the value it takes, if any.
var flagOf = regexp.MustCompile(`--([a-z][a-z0-9-]*)(?: ([A-Z][A-Z:_]*))?`)

// TestHelpOfEveryCommand: "help COMMAND" and "COMMAND -h" say the usage line "help" lists, what
// the command does, and every flag of that line with the value it takes.
func TestHelpOfEveryCommand(t *testing.T) {
	for _, line := range usageLines(t) {
		name := commandName(line)
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := cli.Run(context.Background(), []string{"help", name}, &stdout, &stderr); code != 0 {
				t.Fatalf("help %s: exit %d: %s", name, code, stderr.String())
			}
			help := stdout.String()
			if first, _, _ := strings.Cut(help, "\n"); first != "usage: "+line {
				t.Errorf("help %s starts %q, want %q", name, first, "usage: "+line)
			}
			for _, m := range flagOf.FindAllStringSubmatch(line, -1) {
				want := "\n  --" + m[1]
				if m[2] != "" {
					want += " " + m[2]
				}
				if !strings.Contains(help, want+"\n      ") {
					t.Errorf("help %s does not explain %s:\n%s", name, strings.TrimSpace(want), help)
				}
			}
			if name == "help" {
				return
			}
			stdout.Reset()
			stderr.Reset()
			if code := cli.Run(context.Background(), []string{name, "-h"}, &stdout, &stderr); code != 0 || stderr.String() != help {
				t.Errorf("%s -h: exit %d, stderr\n%s\nwant exit 0 and what help %s says", name, code, stderr.String(), name)
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), []string{"help", "nope"}, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), `unknown command "nope"`) {
		t.Errorf("help nope: exit %d, %q; want an unknown command", code, stderr.String())
	}
}

// TestUsageLinesShowEveryFlag: each command's flags, as --FLAG=x makes them known, are in its
// usage line, and nothing else is: what the line shows, the command takes.
func TestUsageLinesShowEveryFlag(t *testing.T) {
	for _, line := range usageLines(t) {
		name := commandName(line)
		for _, m := range flagOf.FindAllStringSubmatch(line, -1) {
			var stderr bytes.Buffer
			cli.Run(context.Background(), []string{name, "--" + m[1] + "=", "--no-such-flag"}, &bytes.Buffer{}, &stderr)
			if strings.Contains(stderr.String(), "flag provided but not defined: -"+m[1]) {
				t.Errorf("the usage of %s shows --%s, which %s does not take", name, m[1], name)
			}
		}
	}
	// The copies the usage once had disagreed here: run without --pace, import without --keep.
	for _, want := range []string{"baton run FLOW [--input TEXT] [--out FILE] [--stream] [--pace D]", "baton import FILE [--db PATH] [--keep N]"} {
		if !slices.ContainsFunc(usageLines(t), func(l string) bool { return strings.HasPrefix(l, want) }) {
			t.Errorf("no usage line starts %q", want)
		}
	}
}
