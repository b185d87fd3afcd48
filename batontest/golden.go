package batontest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/baton-dev/baton/internal/atomicfile"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/traces"
)

// Flags of the test binary, named apart from the test's own (many define -update).
var (
	update    = flag.Bool("baton.update", false, "batontest: rewrite golden stories (and their traces) from this run")
	artifacts = flag.String("baton.artifacts", "", "batontest: write the traces of failing runs to this folder (default: batontest in the system's temporary folder)")
)

// MatchGolden checks the run's Story against the golden file base+".story" and fails the test
// with the first divergence and the whole diff when they differ. With -baton.update (or
// BATON_UPDATE=1 in the environment) it writes the story there instead, and the run's trace as
// base+".trace.json", which Replay can replay offline. A failure says where the run's trace was
// written, to look at with `baton open`.
func (r *Run) MatchGolden(base string) {
	r.tb.Helper()
	text := r.Story()
	if *update || os.Getenv("BATON_UPDATE") == "1" {
		if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
			r.tb.Fatalf("batontest: %v", err)
		}
		if err := atomicfile.Write(base+".story", []byte(text)); err != nil {
			r.tb.Fatalf("batontest: %v", err)
		}
		if err := traces.WriteFile(base+".trace.json", r.Trace); err != nil {
			r.tb.Fatalf("batontest: %v", err)
		}
		return
	}
	want, err := os.ReadFile(base + ".story")
	if err != nil {
		r.tb.Fatalf("batontest: %v (go test -baton.update writes it from this run)", err)
	}
	if string(want) == text {
		return
	}
	msg := fmt.Sprintf("batontest: the handoff story differs from %s.story (go test -baton.update rewrites it)\n%s", base, story.TextDiff(string(want), text))
	msg += r.saved(filepath.Base(base))
	if _, err := os.Stat(base + ".trace.json"); err == nil {
		msg += fmt.Sprintf("; the golden run: baton open %s.trace.json", base)
	}
	r.tb.Error(msg)
}

// saved writes the run's trace where failing runs go and says how to open it.
func (r *Run) saved(name string) string {
	dir := *artifacts
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "batontest") // outlives the test, unlike tb.TempDir
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Sprintf("\n(the run's trace was not saved: %v)", err)
	}
	path := filepath.Join(dir, strings.ReplaceAll(r.tb.Name(), "/", "_")+"-"+name+".trace.json")
	if err := traces.WriteFile(path, r.Trace); err != nil {
		return fmt.Sprintf("\n(the run's trace was not saved: %v)", err)
	}
	return "\nthis run: baton open " + path
}
