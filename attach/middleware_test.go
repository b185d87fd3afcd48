package attach_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/internal/attachtest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// The environment that makes the test binary the desk app of the middleware tests: the Baton it
// streams to, and the hold timeout it chooses.
const (
	deskAppEnv     = "BATON_TEST_DESK_APP"
	deskTimeoutEnv = "BATON_TEST_DESK_TIMEOUT"
)

// deskInput is the request the desk app is scripted for.
const deskInput = "My card was charged twice for one order."

// deskApp builds the app of the middleware tests, in no catalogue: desk's model transfers the
// request to billing; tech, its other sub-agent, answers with what it read last. mw, when not
// nil, is in every agent's Handlers; gate, when not nil, holds desk's model call until it closes;
// pace (nil for none) delays every model reply.
func deskApp(ctx context.Context, mw adk.ChatModelAgentMiddleware, gate <-chan struct{}, pace *agents.Pace) (*adk.Runner, error) {
	var handlers []adk.ChatModelAgentMiddleware
	if mw != nil {
		handlers = []adk.ChatModelAgentMiddleware{mw}
	}
	var tools adk.ToolsConfig // billing's
	agent := func(name, about string, steps ...agents.Step) (adk.Agent, error) {
		return agents.NewChatAgent(ctx, attachtest.Scripted(name, pace, steps...), adk.ChatModelAgentConfig{
			Name: name, Description: about, Instruction: "Help with " + about, Handlers: handlers, ToolsConfig: tools})
	}
	refund, err := utils.InferTool("refund", "Refund an order's duplicate charge.", func(_ context.Context, in struct {
		Order string `json:"order"`
	}) (string, error) {
		if os.Getenv(deskAppEnv) != "" {
			fmt.Println("ran: refund", in.Order) // what the desk process's tests read to tell it ran
		}
		return "refunded " + in.Order, nil
	})
	if err != nil {
		return nil, err
	}
	tools.Tools = []tool.BaseTool{refund}
	billing, err := agent("billing", "charges and refunds",
		agents.SayAndDo("", agents.Call("refund", map[string]string{"order": "A1"})),
		agents.Computed(func(in []*schema.Message) agents.Reply {
			return agents.Reply{Text: "billing: " + in[len(in)-1].Content}
		}))
	tools = adk.ToolsConfig{}
	if err != nil {
		return nil, err
	}
	tech, err := agent("tech", "technical problems", agents.Computed(func(in []*schema.Message) agents.Reply {
		last := ""
		for _, m := range in {
			if m.Role == schema.User {
				last = m.Content
			}
		}
		return agents.Reply{Text: "tech read: " + last}
	}))
	if err != nil {
		return nil, err
	}
	desk, err := agent("desk", "routing requests", agents.Computed(func([]*schema.Message) agents.Reply {
		if gate != nil {
			<-gate
		}
		return agents.Reply{ToolCalls: []agents.ToolCall{agents.Transfer("billing")}}
	}))
	if err != nil {
		return nil, err
	}
	root, err := adk.SetSubAgents(ctx, desk, []adk.Agent{billing, tech})
	if err != nil {
		return nil, err
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root}), nil
}

// deskMain is the desk app's process: it streams one run to url with the middleware (its hold
// timeout from deskTimeoutEnv), starts its model once a line comes on standard input, prints
// each answer, and exits right after its last event.
func deskMain(url string) {
	ctx := context.Background()
	timeout, err := time.ParseDuration(os.Getenv(deskTimeoutEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	gate := make(chan struct{})
	go func() {
		bufio.NewReader(os.Stdin).ReadString('\n')
		close(gate)
	}()
	runner, err := deskApp(ctx, attach.Middleware(attach.HoldTimeout(timeout)), gate, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	events := runner.Query(ctx, deskInput, attach.New(attach.Config{URL: url}).Option())
	for {
		ev, ok := events.Next()
		if !ok {
			syscall.Exit(0) // as apps do; see exitingApp
		}
		if ev.Err != nil {
			fmt.Println("error:", ev.Err)
			continue
		}
		if m, _ := ev.Output.MessageOutput.GetMessage(); m != nil && m.Role == schema.Assistant && m.Content != "" {
			fmt.Printf("answer: %s: %s\n", ev.AgentName, m.Content)
		}
	}
}

// deskProcess is the desk app running in a process of its own.
type deskProcess struct {
	cmd            *exec.Cmd
	stdin          io.WriteCloser
	stdout, stderr bytes.Buffer
	done           chan struct{} // closed once the process has exited
	err            error         // how it exited, once done
}

func startDesk(t *testing.T, base string, timeout time.Duration) *deskProcess {
	t.Helper()
	p := &deskProcess{cmd: exec.Command(os.Args[0], "-test.run=^$"), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), deskAppEnv+"="+base, deskTimeoutEnv+"="+timeout.String())
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// go lets the app's model answer.
func (p *deskProcess) goOn(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
}

// wait waits for the app to exit, and returns what it printed.
func (p *deskProcess) wait(t *testing.T) string {
	t.Helper()
	select {
	case <-p.done:
		if p.err != nil {
			t.Fatalf("app: %v\n%s", p.err, p.stderr.Bytes())
		}
	case <-time.After(time.Minute):
		t.Fatal("the app did not end")
	}
	if bytes.Contains(p.stderr.Bytes(), []byte("WARNING: DATA RACE")) {
		t.Errorf("the app met a data race:\n%s", p.stderr.Bytes())
	}
	return p.stdout.String()
}

// apiPost posts body to url and returns the answer's status and body.
func apiPost(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// setAppBreakpoints sets breakpoints on run id once its app has opted in (until then the route
// answers 409), and checks that the app has them.
func setAppBreakpoints(t *testing.T, base, id string, points ...string) {
	t.Helper()
	body, _ := json.Marshal(map[string][]string{"breakpoints": points})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		status, answer := apiPost(t, base+"/api/runs/"+id+"/breakpoints", string(body))
		if status == http.StatusOK {
			var held struct {
				Breakpoints []string `json:"breakpoints"`
				Pending     bool     `json:"pending"`
			}
			if err := json.Unmarshal([]byte(answer), &held); err != nil {
				t.Fatal(err)
			}
			if held.Pending || strings.Join(held.Breakpoints, " ") != strings.Join(points, " ") {
				t.Fatalf("breakpoints set: %s, want %v had by the app", answer, points)
			}
			return
		}
		if status != http.StatusConflict || time.Now().After(deadline) {
			t.Fatalf("set breakpoints: %d %s", status, answer)
		}
	}
}

// awaitPaused waits until run id's trace holds n paused events, and returns the trace.
func awaitPaused(t *testing.T, base, id string, n int) traces.Trace {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		resp, err := http.Get(base + "/api/runs/" + id + "/trace")
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		tr, err := traces.Unmarshal(data)
		if err != nil {
			t.Fatal(err)
		}
		if len(eventsOf(tr, traces.KindPaused)) >= n {
			return tr
		}
	}
	t.Fatalf("run %s did not pause %d times", id, n)
	return traces.Trace{}
}

func eventsOf(tr traces.Trace, kind traces.Kind) []traces.Event {
	var out []traces.Event
	for _, e := range tr.Events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// TestMiddlewareHoldsAnApp runs an app of its own, with attach.Middleware, in a process of its
// own: breakpoints set on its run through the server's API hold it, in its process, where they
// say; the page shows the hold; the continues edit the deciding reply (the transfer goes to tech
// instead of billing) and the input of the held model call, and the app goes on with the edits;
// the trace records each pause and continue with what was edited.
func TestMiddlewareHoldsAnApp(t *testing.T) {
	base := startBaton(t, listen(t))
	app := startDesk(t, base, time.Minute)
	id := awaitRun(t, base)
	setAppBreakpoints(t, base, id, "transfer:billing", "model:tech")
	app.goOn(t)

	awaitPaused(t, base, id, 1)
	page, err := http.Get(base + "/runs/" + id)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(page.Body)
	page.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if held := doc.Find(`[data-testid="run-held"]`); held.AttrOr("data-break", "") != "transfer" || held.AttrOr("data-target", "") != "billing" {
		t.Errorf("the run's page shows no hold before the transfer to billing: %q", held.Text())
	}
	if list := doc.Find(`[data-testid="breakpoints"]`).AttrOr("value", ""); !strings.Contains(list, "transfer:billing") || !strings.Contains(list, "model:tech") {
		t.Errorf("the run's page lists breakpoints %q, not the app's", list)
	}
	status, answer := apiPost(t, base+"/api/runs/"+id+"/continue",
		`{"reply": {"content": "", "tool_calls": [{"name": "transfer_to_agent", "arguments": "{\"agent_name\":\"tech\"}"}]}}`)
	if status != http.StatusOK {
		t.Fatalf("continue at the transfer: %d %s", status, answer)
	}

	tr := awaitPaused(t, base, id, 2)
	if p := eventsOf(tr, traces.KindPaused)[1]; p.Agent != "tech" || p.Pause.Break != traces.BreakModel || len(p.Pause.Input) == 0 {
		t.Fatalf("second pause: %s %+v, want tech's model call with its input", p.Agent, p.Pause)
	}
	status, answer = apiPost(t, base+"/api/runs/"+id+"/continue",
		`{"by": "page", "input": [{"role": "user", "content": "the printer is on fire"}]}`)
	if status != http.StatusOK {
		t.Fatalf("continue at tech's model call: %d %s", status, answer)
	}
	if out := app.wait(t); !strings.Contains(out, "answer: tech: tech read: the printer is on fire") || strings.Contains(out, "billing:") {
		t.Errorf("the app went on without the edits; it printed:\n%s", out)
	}

	tr = trace(t, base, id)
	if tr.Run.Status != traces.StatusCompleted {
		t.Fatalf("the run ended %s (%s), want completed", tr.Run.Status, tr.Run.Error)
	}
	continued := eventsOf(tr, traces.KindContinued)
	if len(continued) != 2 {
		t.Fatalf("%d continued events, want 2", len(continued))
	}
	if c := continued[0].Pause; c.By != "api" || c.Edited != "transfer target: billing → tech" {
		t.Errorf("first continued: by %q, edited %q; want by api, the transfer target edited", c.By, c.Edited)
	}
	if c := continued[1].Pause; c.By != "page" || !strings.HasPrefix(c.Edited, "model input:") {
		t.Errorf("second continued: by %q, edited %q; want by page, the model input edited", c.By, c.Edited)
	}
	var visited []string
	for _, e := range tr.Events {
		if e.Kind == traces.KindAgentStarted {
			visited = append(visited, e.Agent)
		}
		if e.Kind == traces.KindModelStarted && e.Agent == "tech" && (len(e.Model.Input) != 1 || e.Model.Input[0].Content != "the printer is on fire") {
			t.Errorf("tech's model call is recorded with input %+v, not the edited one", e.Model.Input)
		}
	}
	if strings.Join(visited, ">") != "desk>tech" {
		t.Errorf("agents started: %v, want desk>tech", visited)
	}
}

// TestAbortAHeldApp aborts the desk app held before its transfer: the held model call fails with
// attach.ErrAborted in the app, billing never starts, and the run ends canceled.
func TestAbortAHeldApp(t *testing.T) {
	base := startBaton(t, listen(t))
	app := startDesk(t, base, time.Minute)
	id := awaitRun(t, base)
	setAppBreakpoints(t, base, id, "transfer")
	app.goOn(t)
	awaitPaused(t, base, id, 1)
	if status, answer := apiPost(t, base+"/api/runs/"+id+"/continue", `{"action": "abort"}`); status != http.StatusOK {
		t.Fatalf("abort: %d %s", status, answer)
	}
	if out := app.wait(t); !strings.Contains(out, "error: ") || !strings.Contains(out, attach.ErrAborted.Error()) || strings.Contains(out, "billing:") {
		t.Errorf("the app did not fail with the abort; it printed:\n%s", out)
	}
	tr := trace(t, base, id)
	if tr.Run.Status != traces.StatusCanceled {
		t.Errorf("the run ended %s (%s), want canceled", tr.Run.Status, tr.Run.Error)
	}
	if c := eventsOf(tr, traces.KindContinued); len(c) != 1 || c[0].Pause.Action != traces.ActionAbort {
		t.Errorf("continued events %+v, want one abort", c)
	}
	for _, e := range tr.Events {
		if e.Kind == traces.KindAgentStarted && e.Agent == "billing" {
			t.Error("billing started after the abort")
		}
	}
}

// TestHeldAppGoesOnByItself holds the desk app at a breakpoint and then leaves it: when nobody
// decides, the app goes on by itself after its timeout and the trace says so; when the server
// goes away, the app goes on after its timeout all the same, and says so in its log.
func TestHeldAppGoesOnByItself(t *testing.T) {
	const timeout = time.Second
	t.Run("nobody decides", func(t *testing.T) {
		base := startBaton(t, listen(t))
		app := startDesk(t, base, timeout)
		id := awaitRun(t, base)
		setAppBreakpoints(t, base, id, "transfer:billing")
		app.goOn(t)
		awaitPaused(t, base, id, 1)
		if out := app.wait(t); !strings.Contains(out, "answer: billing:") {
			t.Errorf("the app did not go on to billing; it printed:\n%s", out)
		}
		tr := trace(t, base, id)
		continued := eventsOf(tr, traces.KindContinued)
		if len(continued) != 1 || continued[0].Pause.By != "timeout" || !strings.Contains(continued[0].Pause.Detail, "went on by itself") {
			t.Fatalf("continued events %+v: want one, by timeout, saying the app went on by itself", continued)
		}
		paused := eventsOf(tr, traces.KindPaused)[0]
		if waited := continued[0].Time.Sub(paused.Time); waited < timeout {
			t.Errorf("the app went on after %s, before its timeout %s", waited, timeout)
		}
	})
	t.Run("the server goes away", func(t *testing.T) {
		ln := listen(t)
		s, err := server.New(server.Config{Addr: ln.Addr().String(), Flows: []agents.Flow{}, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- s.Serve(ctx, ln) }()
		base := "http://" + ln.Addr().String()
		app := startDesk(t, base, timeout)
		id := awaitRun(t, base)
		setAppBreakpoints(t, base, id, "transfer:billing")
		app.goOn(t)
		awaitPaused(t, base, id, 1)
		stop()
		if err := <-served; err != nil {
			t.Fatalf("serve: %v", err)
		}
		if out := app.wait(t); !strings.Contains(out, "answer: billing:") {
			t.Errorf("the app did not go on to billing; it printed:\n%s", out)
		}
		if !strings.Contains(app.stderr.String(), "no decision came at a breakpoint within the app's timeout") {
			t.Errorf("the app's log does not say it went on by itself:\n%s", app.stderr.String())
		}
	})
}

// TestMiddlewareGivesAToolResult holds the desk app before billing's refund tool runs: the
// result given through the API is what billing's model sees, the tool does not run in the app's
// process, and the trace records the continued with the result and the call answered by it.
func TestMiddlewareGivesAToolResult(t *testing.T) {
	base := startBaton(t, listen(t))
	app := startDesk(t, base, time.Minute)
	id := awaitRun(t, base)
	setAppBreakpoints(t, base, id, "tool:refund")
	app.goOn(t)
	tr := awaitPaused(t, base, id, 1)
	if p := eventsOf(tr, traces.KindPaused)[0]; p.Agent != "billing" || p.Pause.Args == nil || !strings.Contains(*p.Pause.Args, "A1") {
		t.Fatalf("paused: %s %+v, want billing before refund, with its arguments", p.Agent, p.Pause)
	}
	if status, answer := apiPost(t, base+"/api/runs/"+id+"/continue", `{"result": "refund refused: order A1 was charged once"}`); status != http.StatusOK {
		t.Fatalf("continue with a result: %d %s", status, answer)
	}
	out := app.wait(t)
	if strings.Contains(out, "ran: refund") || !strings.Contains(out, "answer: billing: billing: refund refused") {
		t.Errorf("the app ran the tool, or billing did not see the result given; it printed:\n%s", out)
	}
	tr = trace(t, base, id)
	c := eventsOf(tr, traces.KindContinued)
	if len(c) != 1 || c[0].Pause.Result == nil || c[0].Pause.Edited != "tool result given: refund was not run" {
		t.Fatalf("continued %+v, want one with the result given", c)
	}
	var refunds []string
	for _, e := range eventsOf(tr, traces.KindToolFinished) {
		if e.Tool.Name == "refund" {
			refunds = append(refunds, e.Tool.Result)
		}
	}
	if len(refunds) != 1 || refunds[0] != *c[0].Pause.Result {
		t.Errorf("refund finished with %q, want once, answered by the result given", refunds)
	}
}

// TestBreakpointsForNextRuns: breakpoints set on one run of the desk app with next_runs are kept
// for its flow: the app's next run, in a new process, on which nobody sets any, is held there
// all the same; with next_runs false they are forgotten.
func TestBreakpointsForNextRuns(t *testing.T) {
	base := startBaton(t, listen(t))
	first := startDesk(t, base, time.Minute)
	id := awaitRun(t, base)
	setAppBreakpoints(t, base, id, "transfer:billing")
	if status, answer := apiPost(t, base+"/api/runs/"+id+"/breakpoints", `{"breakpoints": ["transfer:billing"], "next_runs": true}`); status != http.StatusOK || !strings.Contains(answer, `"next_runs":true`) {
		t.Fatalf("keep for next runs: %d %s", status, answer)
	}
	first.goOn(t)
	awaitPaused(t, base, id, 1)
	if status, answer := apiPost(t, base+"/api/runs/"+id+"/continue", `{}`); status != http.StatusOK {
		t.Fatalf("continue: %d %s", status, answer)
	}
	first.wait(t)

	next := startDesk(t, base, time.Minute)
	var id2 string
	for deadline := time.Now().Add(10 * time.Second); id2 == "" || id2 == id; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the next run did not appear")
		}
		var runs []traces.Run
		getJSON(t, base+"/api/runs", &runs)
		id2 = runs[0].ID
	}
	// The run's page shows the kept breakpoints once the app opted in, without data-pending once
	// the app has them: only then may its model go on.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the next run's app did not get the kept breakpoints")
		}
		resp, err := http.Get(base + "/runs/" + id2)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		form := doc.Find(`[data-testid="breakpoints-form"]`)
		_, pending := form.Attr("data-pending")
		_, kept := form.Find(`[data-testid="breakpoints-next-runs"]`).Attr("checked")
		if form.Find(`[data-testid="breakpoints"]`).AttrOr("value", "") == "transfer:billing" && !pending {
			if !kept {
				t.Fatal("the page does not say the breakpoints are kept for the next runs")
			}
			break
		}
	}
	next.goOn(t)
	tr := awaitPaused(t, base, id2, 1)
	if p := eventsOf(tr, traces.KindPaused)[0]; p.Pause.Break != traces.BreakTransfer || p.Pause.Target != "billing" {
		t.Fatalf("the next run paused at %+v, want before the transfer to billing", p.Pause)
	}
	if status, answer := apiPost(t, base+"/api/runs/"+id2+"/breakpoints", `{"breakpoints": [], "next_runs": false}`); status != http.StatusOK || strings.Contains(answer, "next_runs") {
		t.Fatalf("forget for next runs: %d %s", status, answer)
	}
	if status, answer := apiPost(t, base+"/api/runs/"+id2+"/continue", `{}`); status != http.StatusOK {
		t.Fatalf("continue: %d %s", status, answer)
	}
	if out := next.wait(t); !strings.Contains(out, "answer: billing:") {
		t.Errorf("the next run did not go on to billing; it printed:\n%s", out)
	}
}

// TestKeptBreakpointsOutlastARestart: breakpoints kept for the desk app's next runs are in
// Baton's database: after a restart, the app's next run, which no one sets breakpoints on and
// whose models answer at once, is held at its first decision all the same (its start's answer
// gave them to it).
func TestKeptBreakpointsOutlastARestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	before := serveBaton(t, server.Config{}, db)
	first := startDesk(t, before.base, time.Minute)
	id := awaitRun(t, before.base)
	setAppBreakpoints(t, before.base, id, "transfer:billing")
	if status, answer := apiPost(t, before.base+"/api/runs/"+id+"/breakpoints", `{"breakpoints": ["transfer:billing"], "next_runs": true}`); status != http.StatusOK {
		t.Fatalf("keep for next runs: %d %s", status, answer)
	}
	first.goOn(t)
	awaitPaused(t, before.base, id, 1)
	if status, answer := apiPost(t, before.base+"/api/runs/"+id+"/continue", `{}`); status != http.StatusOK {
		t.Fatalf("continue: %d %s", status, answer)
	}
	first.wait(t)
	before.stop()

	after := serveBaton(t, server.Config{}, db)
	ctx := context.Background()
	runner, err := deskApp(ctx, attach.Middleware(attach.HoldTimeout(time.Minute)), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := attach.New(attach.Config{URL: after.base, Logger: quiet})
	done := runApp(ctx, runner, b)
	var id2 string
	for deadline := time.Now().Add(10 * time.Second); id2 == "" || id2 == id; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the next run did not appear")
		}
		var runs []traces.Run
		getJSON(t, after.base+"/api/runs", &runs)
		id2 = runs[0].ID
	}
	tr := awaitPaused(t, after.base, id2, 1)
	if p := eventsOf(tr, traces.KindPaused)[0]; p.Pause.Break != traces.BreakTransfer || p.Pause.Target != "billing" {
		t.Fatalf("the next run paused at %+v, want before the transfer to billing", p.Pause)
	}
	if status, answer := apiPost(t, after.base+"/api/runs/"+id2+"/continue", `{}`); status != http.StatusOK {
		t.Fatalf("continue: %d %s", status, answer)
	}
	<-done
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if tr := trace(t, after.base, id2); tr.Run.Status != traces.StatusCompleted {
		t.Errorf("the next run ended %s, want completed", tr.Run.Status)
	}
}
