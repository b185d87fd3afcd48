package templates_test

import (
	"context"
	"io"
	"testing"

	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/web/webtest"
)

// BenchmarkFragments measures one live update: a 3,000-event run gets one more event.
func BenchmarkFragments(b *testing.B) {
	tr := webtest.Big(3000)
	from := tr.Events[len(tr.Events)-2].Seq
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		frags, err := templates.Fragments(ctx, tr, from)
		if err != nil || len(frags) == 0 {
			b.Fatal(err, len(frags))
		}
	}
}

// BenchmarkRunPage measures rendering the whole page of the same 3,000-event run.
func BenchmarkRunPage(b *testing.B) {
	tr := webtest.Big(3000)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := templates.RunPage(tr, templates.PageOptions{}).Render(ctx, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
