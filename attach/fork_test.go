package attach_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloudwego/eino-ext/components/model/openai"
	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/traces"
)

// The environment that makes the test binary the app of the fork tests: the Baton it streams
// to, the OpenAI-compatible server its models ask, and the request it is given.
const (
	forkAppEnv    = "BATON_TEST_FORK_APP"
	forkOpenAIEnv = "BATON_TEST_FORK_OPENAI"
	forkInputEnv  = "BATON_TEST_FORK_INPUT"
	forkStreamEnv = "BATON_TEST_FORK_STREAM"
)

// forkApp is the app of the fork tests, in no catalogue: three ChatModelAgents on eino-ext's
// OpenAI model, each with the middleware; desk hands over to billing, billing to tech (its own
// sub-agent) or back to desk.
func forkApp(ctx context.Context, openAI string, streaming bool) (*adk.Runner, error) {
	agent := func(name, about string) (*adk.ChatModelAgent, error) {
		cm, err := openai.NewChatModel(ctx, &openai.ChatModelConfig{BaseURL: openAI, APIKey: "k", Model: "gpt-4o-mini"})
		if err != nil {
			return nil, err
		}
		return adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: name, Description: about, Instruction: "Help with " + about,
			Model: cm, Handlers: []adk.ChatModelAgentMiddleware{attach.Middleware()}})
	}
	desk, err := agent("desk", "routing requests")
	if err != nil {
		return nil, err
	}
	billing, err := agent("billing", "charges and refunds")
	if err != nil {
		return nil, err
	}
	tech, err := agent("tech", "technical problems")
	if err != nil {
		return nil, err
	}
	sub, err := adk.SetSubAgents(ctx, billing, []adk.Agent{tech})
	if err != nil {
		return nil, err
	}
	root, err := adk.SetSubAgents(ctx, desk, []adk.Agent{sub})
	if err != nil {
		return nil, err
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: streaming}), nil
}

// forkMain is the fork tests' app process: one run streamed to url, its answers printed; it
// exits once Baton has the run.
func forkMain(url string) {
	ctx := context.Background()
	runner, err := forkApp(ctx, os.Getenv(forkOpenAIEnv), os.Getenv(forkStreamEnv) != "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	b := attach.New(attach.Config{URL: url})
	events := runner.Query(ctx, os.Getenv(forkInputEnv), b.Option())
	for {
		ev, ok := events.Next()
		if !ok {
			break
		}
		if ev.Err != nil {
			fmt.Println("error:", ev.Err)
			continue
		}
		if ev.Output == nil || ev.Output.MessageOutput == nil {
			continue
		}
		if m, _ := ev.Output.MessageOutput.GetMessage(); m != nil && m.Role == schema.Assistant && m.Content != "" {
			fmt.Printf("answer: %s: %s\n", ev.AgentName, m.Content)
		}
	}
	closeCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := b.Close(closeCtx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		syscall.Exit(3)
	}
	syscall.Exit(0)
}

// runForkApp runs the fork tests' app to its end with env added, and returns what it printed.
func runForkApp(t *testing.T, base, openAI, input string, streaming bool, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{forkAppEnv + "=" + base, forkOpenAIEnv + "=" + openAI, forkInputEnv + "=" + input}, env...)...)
	if streaming {
		cmd.Env = append(cmd.Env, forkStreamEnv+"=1")
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("app: %v\n%s", err, stderr.Bytes())
	}
	if bytes.Contains(stderr.Bytes(), []byte("WARNING: DATA RACE")) {
		t.Errorf("the app met a data race:\n%s", stderr.Bytes())
	}
	return stdout.String() + stderr.String()
}

// newestRun returns the id of the newest run on the server other than those in not.
func newestRun(t *testing.T, base string, not ...string) string {
	t.Helper()
	var runs []traces.Run
	getJSON(t, base+"/api/runs", &runs)
	for _, r := range runs {
		if !contains(not, r.ID) {
			return r.ID
		}
	}
	t.Fatalf("no new run on the server: %+v", runs)
	return ""
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestForkAnApp forks an app's run, recorded against a fake OpenAI server, at its second model
// call (billing's handoff to tech) with another target (back to desk), through the environment
// variable the fork route gives: the app's calls before the fork point are answered from the
// recording (the server is asked only after it), the fork's events up to the fork point are the
// original's, it records forked_from in the original's conversation, and the diff names the
// fork point as the first divergence. Run with another request, the fork departs from the
// recording at once, says so in its trace, and goes on live. Streaming and not.
func TestForkAnApp(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprint("streaming=", streaming), func(t *testing.T) { testForkAnApp(t, streaming) })
	}
}

func testForkAnApp(t *testing.T, streaming bool) {
	const input = "My card was charged twice, and the app crashes."
	transfer := func(to string) agentstest.FakeReply {
		return agentstest.FakeReply{ToolCalls: []agentstest.FakeToolCall{{Name: "transfer_to_agent", Arguments: `{"agent_name":"` + to + `"}`}}}
	}
	fake := agentstest.NewFakeOpenAI(t, transfer("billing"), transfer("tech"), agentstest.FakeReply{Text: "tech: reinstall the app."},
		agentstest.FakeReply{Text: "desk: a refund is on its way."}, agentstest.FakeReply{Text: "desk: hello."})
	base := startBaton(t, listen(t))

	runForkApp(t, base, fake.BaseURL(), input, streaming)
	id := awaitRun(t, base)
	original := trace(t, base, id)
	if original.Run.Status != traces.StatusCompleted || len(fake.Requests()) != 3 || fake.Requests()[0].Stream != streaming {
		t.Fatalf("the original ended %s after %d model requests (%+v), want completed after 3", original.Run.Status, len(fake.Requests()), fake.Requests())
	}
	var at int64
	for n, e := 0, original.Events; n < 2; e = e[1:] {
		if e[0].Kind == traces.KindModelStarted {
			at, n = e[0].Seq, n+1
		}
	}

	// The call's inspector offers the command, not a fork Baton would run.
	if form := getPage(t, fmt.Sprintf("%s/runs/%s/inspector?seq=%d", base, id, at)).Find(`[data-testid="fork-form"]`); form.AttrOr("data-app", "") != "1" ||
		form.Find(`[data-testid="fork-command"]`).Length() != 1 {
		t.Errorf("the inspector of the app's model call offers no command to fork it")
	}
	status, answer := apiPost(t, base+"/api/runs/"+id+"/fork", fmt.Sprintf(`{"at":%d,"transfer_to":"desk"}`, at))
	var forked struct{ Env, Value, Command string }
	if err := json.Unmarshal([]byte(answer), &forked); status != http.StatusOK || err != nil {
		t.Fatalf("fork of the app's run: %d %s", status, answer)
	}
	want := fmt.Sprintf("%s@%d?transfer_to=desk", id, at)
	if forked.Env != "BATON_FORK="+want || forked.Command != "BATON_FORK='"+want+"' go run ." {
		t.Errorf("the fork route gives %+v, want BATON_FORK=%s", forked, want)
	}
	if status, answer := apiPost(t, base+"/api/runs/"+id+"/fork", `{"at":1,"transfer_to":"desk"}`); status != http.StatusBadRequest || !strings.Contains(answer, "is no model call") {
		t.Errorf("a fork of an app's run at run.started: %d %s", status, answer)
	}
	if status, answer := apiPost(t, base+"/api/runs/"+id+"/fork", fmt.Sprintf(`{"at":%d,"transfer_to":"desk","model":"scripted"}`, at)); status != http.StatusBadRequest || !strings.Contains(answer, "goes on with the app's own model") {
		t.Errorf("a fork of an app's run given a model: %d %s; want 400, the app going on with its own", status, answer)
	}

	out := runForkApp(t, base, fake.BaseURL(), input, streaming, forked.Env)
	if n := len(fake.Requests()); n != 4 {
		t.Fatalf("the fake was asked %d times in all, want 4: the fork asks it only after the fork point\n%s", n, out)
	}
	if !strings.Contains(out, "answer: desk: desk: a refund is on its way.") {
		t.Errorf("the fork did not go back to desk; the app printed:\n%s", out)
	}
	fork := trace(t, base, newestRun(t, base, id))
	if f := fork.Events[0].Run.ForkedFrom; f == nil || *f != (traces.ForkOrigin{Run: id, Seq: at}) {
		t.Errorf("the fork's run.started says forked_from %+v, want %s at #%d", f, id, at)
	}
	if fork.Run.Status != traces.StatusCompleted || fork.Run.Conversation != id || !strings.HasPrefix(fork.Run.Model, "fork of "+id+" ") {
		t.Errorf("the fork's run: %+v", fork.Run)
	}
	for i := range at {
		a, b := original.Events[i], fork.Events[i]
		if a.Kind != b.Kind || a.Agent != b.Agent {
			t.Fatalf("event #%d: the fork has %s %s, the original %s %s: the events before the fork differ", i+1, b.Kind, b.Agent, a.Kind, a.Agent)
		}
		if a.Kind == traces.KindModelStarted && strings.Join(a.Model.Tools, ",") != strings.Join(b.Model.Tools, ",") {
			t.Errorf("event #%d: the fork's call offers %v, the original's %v", i+1, b.Model.Tools, a.Model.Tools)
		}
	}
	if errs := eventsOf(fork, traces.KindError); len(errs) > 0 {
		t.Errorf("the fork says it departed from the recording: %s", errs[0].Error.Message)
	}
	c := story.Compare(story.Of(original), story.Of(fork))
	// The first divergence is the handoff the forked call decided: billing's, to desk.
	if f := c.First; f == nil || f.What != "routing decision" || f.Seq[0] != f.Seq[1] || f.Seq[1] <= at ||
		fork.Events[f.Seq[1]-1].Agent != "billing" || f.A != "hands off to tech (llm)" || f.B != "hands off to desk (llm)" {
		t.Errorf("first divergence = %+v, want billing's handoff the call at #%d decided, to desk instead of tech", f, at)
	}
	if page := getPage(t, base+"/runs/"+id); page.Find(`[data-testid="forks"] [data-run-id="`+fork.Run.ID+`"]`).Length() != 1 {
		t.Errorf("the original's page does not list its fork %s", fork.Run.ID)
	}

	// Another request: desk's first call is not the recording's.
	out = runForkApp(t, base, fake.BaseURL(), "Hello?", streaming, forked.Env)
	if n := len(fake.Requests()); n != 5 {
		t.Fatalf("the fake was asked %d times in all, want 5: a fork that departs from the recording goes on live\n%s", n, out)
	}
	diverged := trace(t, base, newestRun(t, base, id, fork.Run.ID))
	errs := eventsOf(diverged, traces.KindError)
	if len(errs) != 1 || !strings.Contains(errs[0].Error.Message, "desk's input differs from that of recorded call 1") || diverged.Run.Status != traces.StatusCompleted {
		t.Errorf("a fork that departs from the recording: %s, errors %+v", diverged.Run.Status, errs)
	}
}
