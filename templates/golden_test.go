package templates_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/a-h/templ"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/web"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func renderString(tb testing.TB, c templ.Component) string {
	tb.Helper()
	var b strings.Builder
	if err := c.Render(context.Background(), &b); err != nil {
		tb.Fatalf("render: %v", err)
	}
	return b.String()
}

// TestFragmentsGolden pins the fragments of two updates of the supervisor run: one over the
// transfer back to the supervisor (the whole tree, its new numbered edge flashing), and one over
// the supervisor's model call after it (its node alone).
func TestFragmentsGolden(t *testing.T) {
	tr := web.Prefix(webtest.Supervisor(), 26)
	// One block per fragment, HTML as is, so a diff of the golden file reads like a diff of markup.
	var b bytes.Buffer
	for _, from := range []int64{20, 23} {
		frags, err := templates.Fragments(context.Background(), tr, from)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "##### after #%d\n", from)
		for _, f := range frags {
			fmt.Fprintf(&b, "=== %s %s\n%s\n", f.Swap, f.Target, f.HTML)
		}
	}
	got := b.Bytes()
	path := filepath.Join("testdata", "fragments.golden.html")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("fragments differ from %s; run go test ./templates -update and review the diff", path)
	}
}
