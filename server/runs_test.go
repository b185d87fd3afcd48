package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

func TestListFlows(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	res := ts.do(t, request{path: "/api/flows"})
	if res.status != http.StatusOK {
		t.Fatalf("status %d: %s", res.status, res.body)
	}
	var flows []struct {
		Name         string         `json:"name"`
		Title        string         `json:"title"`
		Description  string         `json:"description"`
		DefaultInput string         `json:"default_input"`
		Agents       []traces.Agent `json:"agents"`
	}
	if err := json.Unmarshal(res.body, &flows); err != nil {
		t.Fatal(err)
	}
	if len(flows) != 2 || flows[0].Name != "echo" || flows[0].Title != "Echo" || flows[0].DefaultInput != "hello there" ||
		flows[0].Description == "" || len(flows[1].Agents) != 2 || flows[1].Agents[1].Parent != "lead" {
		t.Errorf("flows = %+v", flows)
	}
}

func TestCreateRunRejectsBadInput(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	tests := []struct {
		name   string
		body   string
		ctype  string // Content-Type; application/json when empty
		status int
		want   string // in the error message
	}{
		{"truncated JSON", `{"flow": "echo",`, "", 400, "malformed JSON"},
		{"syntax error", `{"flow" "echo"}`, "", 400, "malformed JSON at line 1, column 9"},
		{"syntax error on line 2", "{\"flow\": \"echo\",\n \"input\": x}", "", 400, "line 2"},
		{"array", `["echo"]`, "", 400, "request body must be a JSON object, not a JSON array"},
		{"null", `null`, "", 400, "not null"},
		{"empty body", ``, "", 400, "request body is empty"},
		{"blank body", "  \n", "", 400, "request body is empty"},
		{"data after object", `{"flow":"echo"} {}`, "", 400, "data after the closing brace"},
		{"unknown field", `{"flow":"echo","inptu":"x"}`, "", 400, `unknown field "inptu": known fields are "flow", "input", "model", "pace_ms"`},
		{"flow not a string", `{"flow": 3}`, "", 400, `field "flow" must be a string, not 3`},
		{"input not a string", `{"flow": "echo", "input": ["a"]}`, "", 400, `field "input" must be a string`},
		{"no flow", `{}`, "", 400, "flow is required; known flows: echo, pair"},
		{"empty flow", `{"flow": ""}`, "", 400, "flow is required; known flows: echo, pair"},
		{"unknown flow", `{"flow": "nope"}`, "", 400, `unknown flow "nope"; known flows: echo, pair`},
		{"empty input", `{"flow": "echo", "input": ""}`, "", 400, "input is empty"},
		{"blank input", `{"flow": "echo", "input": " \n\t "}`, "", 400, "input is empty"},
		{"negative pace", `{"flow": "echo", "pace_ms": -1}`, "", 400, "pace_ms must be between 0 and 10000, not -1"},
		{"pace too long", `{"flow": "echo", "pace_ms": 10001}`, "", 400, "pace_ms must be between 0 and 10000, not 10001"},
		{"fractional pace", `{"flow": "echo", "pace_ms": 1.5}`, "", 400, `field "pace_ms" must be an integer number of milliseconds, not 1.5`},
		{"pace as string", `{"flow": "echo", "pace_ms": "100"}`, "", 400, `field "pace_ms" must be an integer`},
		{"text/plain", `{"flow": "echo"}`, "text/plain", 415, `Content-Type must be application/json, not "text/plain"`},
		{"form", `flow=echo`, "application/x-www-form-urlencoded", 415, "Content-Type must be application/json"},
		{"too large", `{"flow": "echo", "input": "` + strings.Repeat("x", 70_000) + `"}`, "", 413,
			"request body is larger than the limit of 65536 bytes (64 KiB)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request{method: http.MethodPost, path: "/api/runs", body: tt.body, header: map[string]string{}}
			if tt.ctype != "" {
				req.header["Content-Type"] = tt.ctype
			}
			if tt.body == "" {
				req.header["Content-Type"] = "application/json"
			}
			res := ts.do(t, req)
			if res.status != tt.status {
				t.Errorf("status = %d, want %d (%s)", res.status, tt.status, res.body)
			}
			if got := res.apiError(t); !strings.Contains(got, tt.want) {
				t.Errorf("error = %q, want it to contain %q", got, tt.want)
			}
		})
	}
	if runs := ts.Broker.Runs(); len(runs) != 0 {
		t.Errorf("bad requests started %d runs", len(runs))
	}
}

func TestCreateRunChunkedBodyOverLimit(t *testing.T) {
	ts := mustOpenServer(t, server.Config{MaxBody: 1024})
	// A body of unknown length reaches the handler and is cut off while it is read.
	r, err := http.NewRequest(http.MethodPost, ts.base+"/api/runs", struct{ *strings.Reader }{strings.NewReader(`{"input":"` + strings.Repeat("y", 4096) + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct{ Error string }
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body.Error, "1024 bytes") {
		t.Errorf("got %d %q, want 413 naming the 1024-byte limit", res.StatusCode, body.Error)
	}
}

func TestCreateRun(t *testing.T) {
	runs := make(chan started, 1)
	ts := mustOpenServer(t, server.Config{DefaultPace: 300 * time.Millisecond})
	server.SetRunner(ts.Server, handOver(runs))

	tests := []struct {
		name      string
		body      string
		wantInput string
		wantPace  time.Duration
	}{
		{"input left out uses the flow's default", `{"flow": "echo"}`, "hello there", 300 * time.Millisecond},
		{"null input uses the default", `{"flow": "echo", "input": null}`, "hello there", 300 * time.Millisecond},
		{"input given", `{"flow": "pair", "input": "  plan a trip "}`, "  plan a trip ", 300 * time.Millisecond},
		{"no pace", `{"flow": "echo", "pace_ms": 0}`, "hello there", 0},
		{"slowest pace", `{"flow": "echo", "pace_ms": 10000}`, "hello there", 10 * time.Second},
	}
	idPattern := regexp.MustCompile(`^r-[0-9a-f]{8}$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, request{method: http.MethodPost, path: "/api/runs", body: tt.body})
			if res.status != http.StatusCreated {
				t.Fatalf("status %d: %s", res.status, res.body)
			}
			var out struct{ ID, URL string }
			if err := json.Unmarshal(res.body, &out); err != nil {
				t.Fatal(err)
			}
			if !idPattern.MatchString(out.ID) || out.URL != "/runs/"+out.ID || res.header.Get("Location") != out.URL {
				t.Errorf("created %+v, Location %q", out, res.header.Get("Location"))
			}
			// The run is registered before the answer: its page and trace work at once.
			if page := ts.do(t, request{path: out.URL}); page.status != http.StatusOK {
				t.Errorf("GET %s right after creating it: %d", out.URL, page.status)
			}
			tr := ts.trace(t, out.ID)
			if tr.Run.Input != tt.wantInput || tr.Run.Status != traces.StatusRunning {
				t.Errorf("run = %+v, want input %q, running", tr.Run, tt.wantInput)
			}
			st := receive(t, runs)
			if st.input != tt.wantInput || st.opts.Pace.Get() != tt.wantPace {
				t.Errorf("runner got input %q pace %s, want %q %s", st.input, st.opts.Pace.Get(), tt.wantInput, tt.wantPace)
			}
			st.rec.Finish(traces.StatusCompleted, "")
		})
	}
}

func TestSetPace(t *testing.T) {
	runs := make(chan started, 1)
	ts := mustOpenServer(t, server.Config{})
	server.SetRunner(ts.Server, handOver(runs))
	id := ts.createRun(t, `{"flow": "echo", "pace_ms": 100}`)
	st := receive(t, runs)
	ts.addRecording(t, "r-foreign")

	tests := []struct {
		name   string
		id     string
		body   string
		status int
		want   string
	}{
		{"unknown run", "r-00000000", `{"pace_ms": 5}`, 404, `run "r-00000000" not found`},
		{"missing pace", id, `{}`, 400, "pace_ms is required"},
		{"pace out of range", id, `{"pace_ms": 20000}`, 400, "pace_ms must be between 0 and 10000"},
		{"not JSON", id, `fast`, 400, "malformed JSON"},
		{"run not started here", "r-foreign", `{"pace_ms": 5}`, 409, "run r-foreign is not running"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + tt.id + "/pace", body: tt.body})
			if res.status != tt.status || !strings.Contains(res.apiError(t), tt.want) {
				t.Errorf("got %d %s, want %d with %q", res.status, res.body, tt.status, tt.want)
			}
		})
	}

	res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + id + "/pace", body: `{"pace_ms": 2500}`})
	if res.status != http.StatusNoContent {
		t.Fatalf("set pace: %d %s", res.status, res.body)
	}
	if got := st.opts.Pace.Get(); got != 2500*time.Millisecond {
		t.Errorf("the run's pace is %s after setting 2500ms", got)
	}

	st.rec.Finish(traces.StatusCompleted, "")
	eventually(t, "an ended run refuses a new pace", func() bool {
		res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + id + "/pace", body: `{"pace_ms": 1}`})
		return res.status == http.StatusConflict && strings.Contains(res.apiError(t), "not running")
	})
}

func TestListRuns(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	if res := ts.do(t, request{path: "/api/runs"}); res.status != 200 || strings.TrimSpace(string(res.body)) != "[]" {
		t.Errorf("no runs yet: %d %s, want 200 []", res.status, res.body)
	}
	var ids []string
	for range 3 {
		ids = append(ids, ts.createRun(t, `{"flow": "echo"}`))
	}
	res := ts.do(t, request{path: "/api/runs"})
	var runs []traces.Run
	if err := json.Unmarshal(res.body, &runs); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 {
		t.Fatalf("%d runs listed, want 3", len(runs))
	}
	// Newest first: the latest created first (a run's start is its run.started's, which the
	// runs' goroutines record in their own order).
	for i, r := range runs {
		if want := ids[len(ids)-1-i]; r.ID != want {
			t.Errorf("runs[%d] is %s, want %s: runs listed newest first, as created %v", i, r.ID, want, ids)
		}
	}
}

func TestTrace(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	id := ts.createRun(t, `{"flow": "echo", "input": "ping"}`)
	eventually(t, "the run completes", func() bool { return ts.trace(t, id).Run.Status == traces.StatusCompleted })

	tests := []struct {
		name        string
		path        string
		status      int
		disposition string
		wantErr     string
	}{
		{"inline", "/api/runs/" + id + "/trace", 200, "", ""},
		{"download", "/api/runs/" + id + "/trace?download=1", 200, `attachment; filename="baton-echo-` + id + `.json"`, ""},
		{"download off", "/api/runs/" + id + "/trace?download=0", 200, "", ""},
		{"bad download", "/api/runs/" + id + "/trace?download=please", 400, "", `download must be 1 or 0, not "please"`},
		{"unknown run", "/api/runs/r-12345678/trace", 404, "", `run "r-12345678" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, request{path: tt.path})
			if res.status != tt.status || res.header.Get("Content-Disposition") != tt.disposition {
				t.Fatalf("got %d, Content-Disposition %q; want %d, %q", res.status, res.header.Get("Content-Disposition"), tt.status, tt.disposition)
			}
			if tt.wantErr != "" {
				if got := res.apiError(t); !strings.Contains(got, tt.wantErr) {
					t.Errorf("error %q, want %q", got, tt.wantErr)
				}
				return
			}
			tr, err := traces.Unmarshal(res.body)
			if err != nil {
				t.Fatalf("trace does not parse: %v", err)
			}
			if tr.Run.ID != id || tr.Run.Flow != "echo" || len(tr.Events) != 3 || tr.Events[1].Message.Content != "ping" {
				t.Errorf("trace = %+v", tr)
			}
		})
	}
}

// TestFailingFlowLeavesServerServing: a flow that panics or fails ends as a failed run, and the
// server goes on serving.
func TestFailingFlowLeavesServerServing(t *testing.T) {
	tests := []struct {
		name    string
		run     func(context.Context, agents.Flow, string, agents.Options, *traces.Recording) traces.Status
		wantErr string
	}{
		{"panics", func(ctx context.Context, f agents.Flow, in string, o agents.Options, rec *traces.Recording) traces.Status {
			rec.Emit(traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: f.Name, Status: traces.StatusRunning}})
			panic("the flow is broken")
		}, "internal error: the flow panicked"},
		{"fails", func(ctx context.Context, f agents.Flow, in string, o agents.Options, rec *traces.Recording) traces.Status {
			rec.Emit(traces.Event{Kind: traces.KindError, Error: &traces.ErrorDetail{Message: "model unreachable"}})
			rec.Finish(traces.StatusFailed, "model unreachable")
			return traces.StatusFailed
		}, "model unreachable"},
		{"returns without finishing", func(ctx context.Context, f agents.Flow, in string, o agents.Options, rec *traces.Recording) traces.Status {
			return ""
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := mustOpenServer(t, server.Config{})
			server.SetRunner(ts.Server, tt.run)
			id := ts.createRun(t, `{"flow": "echo"}`)
			conn := ts.mustDial(t, "/api/runs/"+id+"/events")
			evs, closed := readEvents(t, conn)
			if closed.Code != 1000 || len(evs) == 0 || evs[len(evs)-1].Kind != traces.KindRunFinished {
				t.Fatalf("events %v closed with %v, want run.finished then a normal close", seqs(evs), closed)
			}
			tr := ts.trace(t, id)
			if tr.Run.Status != traces.StatusFailed || tr.Run.Error != tt.wantErr {
				t.Errorf("run = %s %q, want failed %q", tr.Run.Status, tr.Run.Error, tt.wantErr)
			}
			if res := ts.do(t, request{path: "/api/flows"}); res.status != http.StatusOK {
				t.Errorf("after a failed run, GET /api/flows: %d", res.status)
			}
			server.SetRunner(ts.Server, quickRunner)
			next := ts.createRun(t, `{"flow": "echo"}`)
			eventually(t, "the next run completes", func() bool { return ts.trace(t, next).Run.Status == traces.StatusCompleted })
		})
	}
}

// TestTooManyRuns: the server bounds how many runs go on at once; past it, 503 says when to try
// again.
func TestTooManyRuns(t *testing.T) {
	runs := make(chan started, 2)
	ts := mustOpenServer(t, server.Config{MaxRunning: 2})
	server.SetRunner(ts.Server, handOver(runs))
	ts.createRun(t, `{"flow": "echo"}`)
	ts.createRun(t, `{"flow": "echo"}`)
	res := ts.do(t, request{method: http.MethodPost, path: "/api/runs", body: `{"flow": "echo"}`})
	if res.status != http.StatusServiceUnavailable || res.header.Get("Retry-After") != "5" ||
		!strings.Contains(res.apiError(t), "2 runs are already going on") {
		t.Errorf("third run: %d (Retry-After %q) %s; want 503 with Retry-After", res.status, res.header.Get("Retry-After"), res.body)
	}
	receive(t, runs).rec.Finish(traces.StatusCompleted, "")
	eventually(t, "a slot frees up", func() bool {
		return ts.do(t, request{method: http.MethodPost, path: "/api/runs", body: `{"flow": "echo"}`}).status == http.StatusCreated
	})
}
