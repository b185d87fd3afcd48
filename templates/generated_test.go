package templates_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedCodeIsCurrent regenerates the components with the templ version go.mod pins and
// checks that the committed *_templ.go files are exactly what it writes: a .templ edited without
// `go tool templ generate`, or a *_templ.go edited by hand, fails here rather than in a page that
// quietly renders the old markup. It generates into a copy, so the checkout is left as it was.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	sources, err := filepath.Glob("*.templ")
	if err != nil || len(sources) == 0 {
		t.Fatalf("no .templ files found (%v)", err)
	}
	// templ names each source in its error messages by its path under the directory it was asked
	// to generate, the module root, so the copy keeps that path: <root>/templates/x.templ.
	root := t.TempDir()
	copyDir := filepath.Join(root, "templates")
	if err := os.Mkdir(copyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, src := range sources {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(copyDir, src), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Run from this package, inside the module, so that `go tool` finds the templ go.mod pins.
	cmd := exec.Command("go", "tool", "templ", "generate", "-path", root)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("templ generate: %v\n%s", err, out.String())
	}

	for _, src := range sources {
		name := strings.TrimSuffix(src, ".templ") + "_templ.go"
		want, err := os.ReadFile(filepath.Join(copyDir, name))
		if err != nil {
			t.Errorf("templ generate wrote no %s: %v\n%s", name, err, out.String())
			continue
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Errorf("%s has no committed %s; run `go tool templ generate` at the module root", src, name)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what templ generates from %s (first difference at line %d); run `go tool templ generate` at the module root",
				name, src, firstDifferentLine(got, want))
		}
	}

	// A generated file whose source is gone would still compile into the package.
	generated, err := filepath.Glob("*_templ.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range generated {
		if _, err := os.Stat(strings.TrimSuffix(g, "_templ.go") + ".templ"); err != nil {
			t.Errorf("%s has no .templ source: delete it, or restore its source", g)
		}
	}
}

// firstDifferentLine returns the 1-based number of the first line where a and b differ.
func firstDifferentLine(a, b []byte) int {
	al, bl := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(al), len(bl)) {
		if !bytes.Equal(al[i], bl[i]) {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}
