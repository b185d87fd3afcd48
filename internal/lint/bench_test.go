package lint_test

import (
	"fmt"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/lint"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
)

// BenchmarkDigest is what the run page reads from a whole run at most once a second while it goes
// on (server/digest.go): the linter's findings and the handoff story, on a long one-agent run and
// on a supervisor's many handoffs.
//
//	go test ./internal/lint -run '^$' -bench Digest -benchtime 20x -count 3
func BenchmarkDigest(b *testing.B) {
	for _, tc := range []struct {
		name string
		flow agents.Flow
	}{
		{"ticks=3000", agentstest.LongTurns(3000, 30)},
		{"handoffs=400", agentstest.Specialists(20, 400)},
	} {
		tr := agentstest.Record(b, tc.flow, tc.flow.DefaultInput, agents.Options{})
		b.Run(fmt.Sprintf("%s/events=%d", tc.name, len(tr.Events)), func(b *testing.B) {
			b.Run("lint", func(b *testing.B) {
				for range b.N {
					lint.Check(tr, lint.Config{})
				}
			})
			b.Run("story", func(b *testing.B) {
				for range b.N {
					story.Of(tr)
				}
			})
		})
	}
}

// BenchmarkCheckLarge is Check on the million-event run of the server's BenchmarkLargeRun
// (webtest.Large, ended as an import ends it): what an import of it pays on its request path
// (server/digest.go, countFindings) and a read-back's first view pays again.
//
//	go test ./internal/lint -run '^$' -bench CheckLarge -benchtime 5x -benchmem
func BenchmarkCheckLarge(b *testing.B) {
	tr, _ := traces.EndImported(webtest.Large(1_000_000))
	b.Run(fmt.Sprintf("events=%d", len(tr.Events)), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			lint.Check(tr, lint.Config{})
		}
	})
}
