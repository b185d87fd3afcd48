package record

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// An app's fork: "what if" from a model call of a run the app recorded before. Baton's page
// gives the app's command line with ForkEnv set; the app's next run streamed to Baton, whose
// agents carry attach.Middleware, answers each model call before the fork point from the
// recording (the model is not asked), applies the edit at the fork point, and goes on live. The
// run records forked_from and joins the original's conversation (the server sees to both).

// ForkEnv names the environment variable that makes an app's next run a fork (see AppFork).
const ForkEnv = "BATON_FORK"

// AppFork is a fork of an app's run as ForkEnv carries it: RUN@SEQ, SEQ the model.started of the
// call to change, then after "?" the edit in URL query form: reply=TEXT and transfer_to=AGENT
// (the call answers that, the model is not asked), or input=JSON, a list of messages (the call
// is made, with those instead). The edits are those of a run held at a breakpoint.
type AppFork struct {
	Run        string
	At         int64
	Reply      string
	TransferTo string
	Input      []traces.Message
}

// String is f as ForkEnv carries it. Its characters need no quoting in a shell but for "&",
// "?" and "%": quote it in single quotes.
func (f AppFork) String() string {
	v := url.Values{}
	if f.Reply != "" {
		v.Set("reply", f.Reply)
	}
	if f.TransferTo != "" {
		v.Set("transfer_to", f.TransferTo)
	}
	if f.Input != nil {
		b, _ := json.Marshal(f.Input) // messages of strings always marshal
		v.Set("input", string(b))
	}
	s := f.Run + "@" + strconv.FormatInt(f.At, 10)
	if len(v) > 0 {
		s += "?" + v.Encode()
	}
	return s
}

// Check reports what is wrong with f: a fork needs a run, a model call and one edit.
func (f AppFork) Check() error {
	switch {
	case f.Run == "" || strings.ContainsAny(f.Run, "@?"):
		return traces.Errorf(traces.CodeInvalid, "a fork names the run it forks: RUN@SEQ, then ?transfer_to=AGENT, ?reply=TEXT or ?input=JSON")
	case f.At <= 0:
		return traces.Errorf(traces.CodeInvalid, "a fork names the model call it changes by the seq of its model.started, a number from 1")
	case f.Input != nil && (f.Reply != "" || f.TransferTo != ""):
		return traces.Errorf(traces.CodeInvalid, "a fork either answers the call otherwise (reply, transfer_to) or makes it with another input, not both")
	case f.Input == nil && f.Reply == "" && f.TransferTo == "":
		return traces.Errorf(traces.CodeInvalid, "a fork says what changes at the call: reply, transfer_to (or both), or input")
	}
	for i, m := range f.Input {
		if m.Role == "" {
			return traces.Errorf(traces.CodeInvalid, "input[%d] has no role: give each message its role (system, user, assistant, tool)", i)
		}
	}
	return nil
}

// CheckAgainst reports what is wrong with f as a fork of tr, the app's run: what Check says, a
// seq that is no model call of tr, a transfer to no agent of it. The page's fork route and
// baton fork both check so before they give the environment.
func (f AppFork) CheckAgainst(tr traces.Trace) error {
	if f.Run != tr.Run.ID {
		return traces.Errorf(traces.CodeInvalid, "the fork names run %s, not %s", clip(f.Run, 60), tr.Run.ID)
	}
	if !slices.ContainsFunc(tr.Events, func(e traces.Event) bool { return e.Seq == f.At && e.Kind == traces.KindModelStarted }) {
		return traces.Errorf(traces.CodeInvalid, "event #%d of run %s is no model call (model.started): a fork changes what a model answered", f.At, tr.Run.ID)
	}
	if f.TransferTo != "" && !slices.ContainsFunc(tr.Agents, func(a traces.Agent) bool { return a.Name == f.TransferTo }) {
		return traces.Errorf(traces.CodeInvalid, "transfer_to %q is no agent of run %s", clip(f.TransferTo, 60), tr.Run.ID)
	}
	return f.Check()
}

// Command is the shell line that runs a Go app in the current folder as the fork f.
func (f AppFork) Command() string { return ForkEnv + "='" + f.String() + "' go run ." } // String is URL-escaped: no single quote

// ParseAppFork reads s, written as AppFork.String writes it.
func ParseAppFork(s string) (AppFork, error) {
	head, query, _ := strings.Cut(strings.TrimSpace(s), "?")
	at := strings.LastIndexByte(head, '@')
	if at < 0 {
		return AppFork{}, traces.Errorf(traces.CodeInvalid, "%s=%q: write RUN@SEQ?EDIT, as Baton's page gives it", ForkEnv, clip(s, 80))
	}
	f := AppFork{Run: head[:at]}
	var err error
	if f.At, err = strconv.ParseInt(head[at+1:], 10, 64); err != nil {
		return AppFork{}, traces.Errorf(traces.CodeInvalid, "%s=%q: after @ comes the seq of a model.started, a number", ForkEnv, clip(s, 80))
	}
	v, err := url.ParseQuery(query)
	if err != nil {
		return AppFork{}, traces.Errorf(traces.CodeInvalid, "%s: the edit after ? is not in URL query form: %v", ForkEnv, err)
	}
	for k := range v {
		if k != "reply" && k != "transfer_to" && k != "input" {
			return AppFork{}, traces.Errorf(traces.CodeInvalid, "%s: unknown edit %q: reply, transfer_to or input", ForkEnv, clip(k, 40))
		}
	}
	f.Reply, f.TransferTo = v.Get("reply"), v.Get("transfer_to")
	if in := v.Get("input"); in != "" {
		if err := json.Unmarshal([]byte(in), &f.Input); err != nil || f.Input == nil {
			return AppFork{}, traces.Errorf(traces.CodeInvalid, "%s: input is a JSON list of messages ({\"role\", \"content\"}): %v", ForkEnv, err)
		}
	}
	return f, f.Check()
}

// reply is the reply the fork's call answers instead: its text, and a transfer when it says.
func (f AppFork) reply() *schema.Message {
	msg := &schema.Message{Role: schema.Assistant, Content: f.Reply, ResponseMeta: &schema.ResponseMeta{FinishReason: "stop"}}
	if f.TransferTo != "" {
		args, _ := json.Marshal(map[string]string{"agent_name": f.TransferTo})
		msg.ToolCalls = []schema.ToolCall{{ID: "baton_fork_1", Type: "function",
			Function: schema.FunctionCall{Name: transferToolName, Arguments: string(args)}}}
		msg.ResponseMeta.FinishReason = "tool_calls"
	}
	return msg
}

// The process's fork: read from ForkEnv once, carried out by its first run streamed to Baton
// once an agent carries the middleware (MiddlewareInUse), and by no other.
var (
	middlewareInUse atomic.Bool
	processFork     = sync.OnceValues(func() (*AppFork, error) {
		s := os.Getenv(ForkEnv)
		if s == "" {
			return nil, nil
		}
		f, err := ParseAppFork(s)
		if err != nil {
			return nil, err
		}
		return &f, nil
	})
	forkClaimed atomic.Bool
	forkWarned  atomic.Bool
)

// MiddlewareInUse says that the process's agents carry attach.Middleware: the process's fork
// (ForkEnv), if any, can be carried out. attach.Middleware calls it.
func MiddlewareInUse() { middlewareInUse.Store(true) }

// claimFork returns the fork a new run of c carries out, once per process: nil for the others,
// and when ForkEnv says none. A fork that cannot be (a bad value, no agent with the middleware)
// is said in the log once, and the run is recorded as any other.
func (c *client) claimFork() *forking {
	f, err := processFork()
	switch {
	case f == nil && err == nil:
		return nil
	case err != nil:
		if forkWarned.CompareAndSwap(false, true) {
			c.log.Warn("baton: "+ForkEnv+" is not understood; the run is not forked", "error", traces.ErrorMessage(err))
		}
		return nil
	case !middlewareInUse.Load():
		if forkWarned.CompareAndSwap(false, true) {
			c.log.Warn("baton: " + ForkEnv + " is set but no agent carries attach.Middleware(), which answers a fork's calls from the recording; the run is not forked")
		}
		return nil
	case !forkClaimed.CompareAndSwap(false, true):
		return nil
	}
	return &forking{spec: *f, c: c, next: map[string]int{}}
}

// forking is a run's progress through the fork it carries out; the models of all its agents
// share it.
type forking struct {
	spec AppFork
	c    *client

	load  sync.Once
	calls *recordedCalls
	err   error // why the recording could not be had

	mu       sync.Mutex
	next     map[string]int // per agent, the number of its calls so far
	reached  bool           // the fork point was: every call from then on is live
	diverged bool           // a call before the fork point was not the recording's: the rest is live
}

// recordedCalls are the original's model calls, each agent's in order, and the fork's.
type recordedCalls struct {
	byAgent map[string][]*RecordedCall
	at      *RecordedCall
}

// recording fetches the original's model calls from Baton, once.
func (f *forking) recording(ctx context.Context) (*recordedCalls, error) {
	f.load.Do(func() {
		tr, err := f.c.fetchTrace(ctx, f.spec.Run)
		if err != nil {
			f.err = fmt.Errorf("baton: cannot fork run %s: %w", f.spec.Run, err)
			return
		}
		f.calls, f.err = callsOf(tr, f.spec.At)
	})
	return f.calls, f.err
}

// callsOf reads tr's model calls (RecordedCalls), each agent's in order, and the one at seq at.
func callsOf(tr traces.Trace, at int64) (*recordedCalls, error) {
	rc := &recordedCalls{byAgent: map[string][]*RecordedCall{}}
	for _, c := range RecordedCalls(tr) {
		rc.byAgent[c.Agent] = append(rc.byAgent[c.Agent], c)
		if c.Seq == at {
			rc.at = c
		}
	}
	if rc.at == nil {
		return nil, traces.Errorf(traces.CodeInvalid, "baton: cannot fork run %s at #%d: it is no model call (model.started) of the run", tr.Run.ID, at)
	}
	return rc, nil
}

// fetchTrace reads run id's trace from Baton (GET /api/runs/:id/trace).
func (c *client) fetchTrace(ctx context.Context, id string) (traces.Trace, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url+"/api/runs/"+url.PathEscape(id)+"/trace", nil)
	if err != nil {
		return traces.Trace{}, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.poll.Do(req) // a long trace may take longer than a post
	if err != nil {
		return traces.Trace{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return traces.Trace{}, fmt.Errorf("read the trace: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return traces.Trace{}, fmt.Errorf("%s answered %s: %s", c.url, resp.Status, errorOf(data))
	}
	return traces.Unmarshal(data)
}

// How a call of the fork goes.
type forkTurn int

const (
	turnLive     forkTurn = iota // the model answers
	turnRecorded                 // the recording answers (call is the recorded call)
	turnEdited                   // the fork point: the edit applies
)

// turn says how agent's next call, with input in, goes, and, when it departs from the recording
// before the fork point, why (said once: every later call is live).
func (f *forking) turn(agent string, in []*schema.Message) (turn forkTurn, call *RecordedCall, diverged string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := f.next[agent]
	f.next[agent] = k + 1
	if f.reached || f.diverged {
		return turnLive, nil, ""
	}
	queue := f.calls.byAgent[agent]
	switch {
	case k >= len(queue):
		diverged = fmt.Sprintf("%s asks for model call %d, but made %d before the fork point in the recording", agent, k+1, len(queue))
	case queue[k] == f.calls.at:
		f.reached = true
		return turnEdited, queue[k], ""
	case queue[k].N > f.calls.at.N:
		diverged = fmt.Sprintf("%s asks for its call %d, which came after the fork point in the recording (recorded call %d)", agent, k+1, queue[k].N)
	case !sameMessages(traceMessages(in), queue[k].Input):
		diverged = fmt.Sprintf("%s's input differs from that of recorded call %d (%d messages now, %d recorded)", agent, queue[k].N, len(in), len(queue[k].Input))
	case !queue[k].Done:
		diverged = fmt.Sprintf("recorded call %d never finished: the recording ends there", queue[k].N)
	default:
		return turnRecorded, queue[k], ""
	}
	f.diverged = true
	return turnLive, nil, diverged
}

func sameMessages(a, b []traces.Message) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameTraceMessage(a[i], b[i]) {
			return false
		}
	}
	return true
}

// noteDivergence records, as an error event of the agent ctx runs in, that the fork departed
// from the recording, and says so in the log.
func (f *forking) noteDivergence(ctx context.Context, why string) {
	msg := fmt.Sprintf("the fork of run %s departed from the recording before the fork point (#%d): %s; the run goes on live from here", f.spec.Run, f.spec.At, why)
	f.c.log.Warn("baton: " + msg)
	v := visitIn(ctx)
	if v == nil {
		return
	}
	r := v.rec
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out.emit(&traces.Event{Kind: traces.KindError, Agent: v.agent, RunPath: v.path, Error: &traces.ErrorDetail{Message: msg}})
}
