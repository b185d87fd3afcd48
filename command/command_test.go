package command_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"go.uber.org/goleak"

	"github.com/baton-dev/baton/command"
	"github.com/baton-dev/baton/flows"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/traces"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// desk is a program's own flow with no script: a desk agent transfers to billing, which may hand
// back to the desk, which may transfer to tech. It runs on a real model (here a fake OpenAI).
func desk() flows.Flow {
	return flows.Flow{
		Name:         "desk",
		Description:  "A desk agent hands each request to billing or tech.",
		DefaultInput: "My invoice is wrong.",
		Build: func(ctx context.Context, models flows.Models) (adk.Agent, error) {
			agent := func(name string) (adk.Agent, error) {
				m, err := models(name)
				if err != nil {
					return nil, err
				}
				return adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: name, Description: name + " work.",
					Instruction: "You are " + name + ".", Model: m})
			}
			desk, err := agent("desk")
			if err != nil {
				return nil, err
			}
			billing, err := agent("billing")
			if err != nil {
				return nil, err
			}
			tech, err := agent("tech")
			if err != nil {
				return nil, err
			}
			return adk.SetSubAgents(ctx, desk, []adk.Agent{billing, tech})
		},
	}
}

func transferTo(agent string) agentstest.FakeToolCall {
	return agentstest.FakeToolCall{Name: "transfer_to_agent", Arguments: `{"agent_name":"` + agent + `"}`}
}

// baton runs the command line with desk registered, and returns its exit code and output.
func baton(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := command.Run(context.Background(), args, &stdout, &stderr, desk())
	return code, stdout.String() + stderr.String()
}

func readTrace(t *testing.T, file string) traces.Trace {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := traces.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestRunForkAndDiffARegisteredFlow: `run` records a registered flow on a real model; `fork` at
// its second model call, handing back to the desk, answers the calls up to it from the recording
// and asks the provider only after the fork point; a replay asks it nothing; `diff` names the
// forked call first.
func TestRunForkAndDiffARegisteredFlow(t *testing.T) {
	fake := agentstest.NewFakeOpenAI(t,
		// the run: desk → billing, which answers
		agentstest.FakeReply{ToolCalls: []agentstest.FakeToolCall{transferTo("billing")}},
		agentstest.FakeReply{Text: "Your invoice is fixed."},
		// the fork, after billing hands back: desk → tech, which answers
		agentstest.FakeReply{ToolCalls: []agentstest.FakeToolCall{transferTo("tech")}},
		agentstest.FakeReply{Text: "Restart the router."},
	)
	t.Setenv("OPENAI_API_KEY", "test-key")
	t.Setenv("OPENAI_BASE_URL", fake.BaseURL())
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")

	if code, out := baton(t, "run", "desk", "--model", "openai:fake-model", "--out", a); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	original := readTrace(t, a)
	var calls []int64
	for _, e := range original.Events {
		if e.Kind == traces.KindModelStarted {
			calls = append(calls, e.Seq)
		}
	}
	if len(calls) != 2 || len(fake.Requests()) != 2 {
		t.Fatalf("the run made %d model calls, %d requests; want 2", len(calls), len(fake.Requests()))
	}

	at := strconv.FormatInt(calls[1], 10) // billing's call
	code, out := baton(t, "fork", a, "--at", at, "--transfer-to", "desk", "--model", "openai:fake-model", "--out", b)
	if code != 0 {
		t.Fatalf("fork: exit %d\n%s", code, out)
	}
	forked := readTrace(t, b)
	var answered []string
	for _, e := range forked.Events {
		if e.Kind == traces.KindModelStarted {
			answered = append(answered, e.Agent+":"+e.Model.Name)
		}
	}
	if n := len(fake.Requests()); n != 4 || forked.Run.Status != traces.StatusCompleted ||
		strings.Join(answered, ",") != "desk:replay,billing:replay,desk:fake-model,tech:fake-model" {
		t.Errorf("the fork, %s, answered %v and made %d requests in all; want desk and billing from the recording, then 2 requests",
			forked.Run.Status, answered, n)
	}

	// A replay asks the provider nothing (the fake has no replies left): it answers from the file.
	if code, out := baton(t, "run", "desk", "--model", "replay:"+a); code != 0 || len(fake.Requests()) != 4 || !strings.Contains(out, "Your invoice is fixed.") {
		t.Errorf("replay: exit %d, %d requests in all\n%s", code, len(fake.Requests()), out)
	}

	// The first divergence is the forked call: billing's turn, where it answered in A and handed
	// back in B.
	code, out = baton(t, "diff", a, b)
	if code != 1 || !strings.Contains(out, "first divergence: reply, in turn 2 of A, 2 of B") ||
		!strings.Contains(out, "routing decision: A nothing; B hands off to desk") {
		t.Errorf("diff: exit %d\n%s", code, out)
	}
}

// TestRunRefusesTheScriptedModel: a registered flow without a script says what to run it on.
func TestRunRefusesTheScriptedModel(t *testing.T) {
	code, out := baton(t, "run", "desk")
	if code != 1 || !strings.Contains(out, "flow desk has no script for the scripted model: run it on a real model") {
		t.Errorf("run desk: exit %d\n%s", code, out)
	}
	code, out = baton(t, "run", "nope")
	if code != 1 || !strings.Contains(out, `unknown flow "nope"; known flows: desk, agent`) {
		t.Errorf("run nope: exit %d\n%s", code, out)
	}
}

// TestRegistrationFails: a flow that cannot be registered stops the command line before it runs.
func TestRegistrationFails(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := command.Run(context.Background(), []string{"flows"}, &stdout, &stderr, desk(), desk()); code != 2 ||
		stdout.Len() > 0 || !strings.Contains(stderr.String(), `baton: register flow "desk": the name is registered twice`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

// lockedBuffer is a bytes.Buffer safe to read while a command writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServeListsRegisteredFlowsFirst: `serve` offers the registered flows, then the built-in ones.
func TestServeListsRegisteredFlowsFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- command.Run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", ":memory:"}, &out, &out, desk())
	}()
	serving := regexp.MustCompile(`serving on (http://\S+)`)
	var base string
	for deadline := time.Now().Add(20 * time.Second); base == ""; time.Sleep(10 * time.Millisecond) {
		if m := serving.FindStringSubmatch(out.String()); m != nil {
			base = strings.TrimSuffix(m[1], "/")
		} else if time.Now().After(deadline) {
			t.Fatalf("no URL printed within 20s: %s", out.String())
		}
	}
	resp, err := http.Get(base + "/api/flows")
	if err != nil {
		t.Fatal(err)
	}
	var listed []struct{ Name string }
	err = json.NewDecoder(resp.Body).Decode(&listed)
	resp.Body.Close()
	if err != nil || len(listed) < 2 || listed[0].Name != "desk" || listed[1].Name == "desk" {
		t.Errorf("GET /api/flows: %v %+v", err, listed)
	}
	http.DefaultClient.CloseIdleConnections()
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve exited %d:\n%s", code, out.String())
	}
}
