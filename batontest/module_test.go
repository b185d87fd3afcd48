package batontest_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInAUsersModule uses batontest as a team would: examples/golden, copied into a module of its
// own that requires Baton (replaced by this checkout), its modules from the machine's module proxy
// as a team's would come (with GOPROXY=off it needed a go.mod that Baton's own build never
// downloads, and failed on a machine whose module cache was new). Its golden passes;
// an instruction changed to re-route the request fails with a diff naming the first different
// handoff; -baton.update records the new route, which then passes, replayed too.
func TestInAUsersModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module of its own")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyFile(t, filepath.Join(repo, "go.sum"), filepath.Join(dir, "go.sum"))
	for _, name := range []string{"helpdesk.go", "golden_test.go", "testdata/helpdesk.story", "testdata/helpdesk.trace.json"} {
		copyFile(t, filepath.Join(repo, "examples/golden", name), filepath.Join(dir, name))
	}
	edit(t, filepath.Join(dir, "golden_test.go"), `"github.com/baton-dev/baton/examples/golden"`, `"example.com/helpdesk"`)
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/helpdesk\n\ngo "+goVersion(t, repo)+
		"\n\nrequire github.com/baton-dev/baton v0.0.0\n\nreplace github.com/baton-dev/baton => "+repo+"\n")

	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	goTest := func(args ...string) (string, error) {
		cmd := exec.Command(goBin, append([]string{"test", "-count=1"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOSUMDB=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	if out, err := goTest("./..."); err != nil {
		t.Fatalf("the golden fails in the user's module: %v\n%s", err, out)
	}

	edit(t, filepath.Join(dir, "helpdesk.go"), "(charge, refund, invoice) to billing_agent.", "(charge, refund, invoice) to tech_agent.")
	out, err := goTest("-run", "Live", ".")
	for _, want := range []string{"first different handoff", "want: hands off to billing_agent (llm)", "got:  hands off to tech_agent (llm)", "baton open "} {
		if err == nil || !strings.Contains(out, want) {
			t.Fatalf("the re-routed run: err = %v, want a failure saying %q:\n%s", err, want, out)
		}
	}

	if out, err := goTest("-run", "Live", ".", "-baton.update"); err != nil {
		t.Fatalf("-baton.update: %v\n%s", err, out)
	}
	story, err := os.ReadFile(filepath.Join(dir, "testdata/helpdesk.story"))
	if err != nil || !strings.Contains(string(story), "hands off to tech_agent (llm)") {
		t.Fatalf("-baton.update wrote %q (%v), want the new route", story, err)
	}
	if out, err := goTest("./..."); err != nil {
		t.Fatalf("after -baton.update, live and replayed: %v\n%s", err, out)
	}
}

func goVersion(t *testing.T, repo string) string {
	data, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			return v
		}
	}
	t.Fatal("go.mod names no go version")
	return ""
}

func copyFile(t *testing.T, from, to string) {
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, string(data))
}

func writeFile(t *testing.T, path, text string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func edit(t *testing.T, path, old, new string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s holds no %q", path, old)
	}
	writeFile(t, path, strings.Replace(string(data), old, new, 1))
}
