package server_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// approvalServer serves the real approval flow, run by agents.RunFlow.
func approvalServer(t *testing.T) *testServer {
	t.Helper()
	flow, err := agents.Lookup("approval")
	if err != nil {
		t.Fatal(err)
	}
	ts := mustOpenServer(t, server.Config{Flows: []agents.Flow{flow}})
	server.SetRunner(ts.Server, agents.RunFlow)
	return ts
}

// waitStatus waits until run id has status.
func (ts *testServer) waitStatus(t *testing.T, id string, status traces.Status) traces.Trace {
	t.Helper()
	var tr traces.Trace
	eventually(t, "run "+id+" is "+string(status), func() bool {
		tr = ts.trace(t, id)
		return tr.Run.Status == status
	})
	return tr
}

// TestResumeApproval: a run of the approval flow ends interrupted at the refund tool; POST
// /api/runs/:id/resume resumes it in the same run with the person's decision, which the tool
// reads; the trace shows interrupted, then resumed, and the run completes.
func TestResumeApproval(t *testing.T) {
	for _, tc := range []struct {
		name, body, result string
	}{
		{"approve", `{"approve":true,"comment":"checked the bank statement"}`, "approved: checked the bank statement"},
		{"reject", `{"approve":false,"comment":"not a duplicate"}`, "rejected by the reviewer: not a duplicate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := approvalServer(t)
			id := ts.createRun(t, `{"flow":"approval"}`)
			ts.waitStatus(t, id, traces.StatusInterrupted)

			// The trace says interrupted a moment before the run's recorder has let go of it, and
			// a resume in between is told the run is still running: a person would try again.
			var res response
			eventually(t, "run "+id+" resumable", func() bool {
				res = ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + id + "/resume", body: tc.body})
				return !(res.status == http.StatusConflict && strings.Contains(string(res.body), "still running"))
			})
			if res.status != http.StatusAccepted || !strings.Contains(string(res.body), `"url":"/runs/`+id+`"`) {
				t.Fatalf("resume: status %d: %s", res.status, res.body)
			}
			tr := ts.waitStatus(t, id, traces.StatusCompleted)
			var kinds []string
			result := ""
			for _, e := range tr.Events {
				switch {
				case e.Kind == traces.KindInterrupted || e.Kind == traces.KindResumed || e.Kind == traces.KindRunFinished:
					kinds = append(kinds, string(e.Kind))
				case e.Kind == traces.KindToolFinished && e.Tool.Name == "issue_refund" && !e.Tool.Interrupted:
					result = e.Tool.Result
				}
			}
			if want := "interrupted run.finished resumed run.finished"; strings.Join(kinds, " ") != want {
				t.Errorf("trace of %s: %s, want %s", id, strings.Join(kinds, " "), want)
			}
			if !strings.Contains(result, tc.result) {
				t.Errorf("issue_refund answered %q, want %q in it", result, tc.result)
			}
			// The decision is spent: a second one is refused.
			again := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + id + "/resume", body: tc.body})
			if again.status != http.StatusConflict || !strings.Contains(again.apiError(t), "is completed: only a run that ended interrupted") {
				t.Errorf("second resume: status %d: %s", again.status, again.body)
			}
		})
	}
}

// TestResumeRefusals: what cannot be resumed is refused with a 4xx JSON error saying why, and
// the interrupted run stays as it was.
func TestResumeRefusals(t *testing.T) {
	ts := approvalServer(t)
	id := ts.createRun(t, `{"flow":"approval"}`)
	ts.waitStatus(t, id, traces.StatusInterrupted)
	done := ts.addRecording(t, "r-done")
	done.Finish(traces.StatusCompleted, "")
	elsewhere := ts.addRecording(t, "r-app")
	elsewhere.Finish(traces.StatusInterrupted, "")

	path := "/api/runs/" + id + "/resume"
	json := map[string]string{"Content-Type": "application/json"}
	tests := []struct {
		name   string
		req    request
		status int
		want   string
	}{
		{"unknown run", request{path: "/api/runs/r-nope/resume", body: `{"approve":true}`}, 404, `run "r-nope" not found`},
		{"no decision", request{path: path, body: `{"comment":"hm"}`}, 400, "approve is required"},
		{"decision not a bool", request{path: path, body: `{"approve":"yes"}`}, 400, `field "approve" must be true or false`},
		{"unknown field", request{path: path, body: `{"approve":true,"reason":"x"}`}, 400, `unknown field "reason"`},
		{"not JSON", request{path: path, body: `approve`}, 400, ""},
		{"empty body", request{path: path}, 400, "request body is empty"},
		{"comment too long", request{path: path, body: `{"approve":false,"comment":"` + strings.Repeat("x", 2001) + `"}`}, 400, "comment is 2001 bytes long"},
		{"completed run", request{path: "/api/runs/r-done/resume", body: `{"approve":true}`}, 409, "run r-done is completed"},
		{"an app's run", request{path: "/api/runs/r-app/resume", body: `{"approve":true}`}, 409, "resume it where it ran"},
		{"another site", request{path: path, body: `{"approve":true}`, header: map[string]string{"Origin": "https://evil.example"}}, 403, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.method = http.MethodPost
			if tt.req.header == nil {
				tt.req.header = json
			}
			res := ts.do(t, tt.req)
			if res.status != tt.status {
				t.Fatalf("status %d, want %d: %s", res.status, tt.status, res.body)
			}
			if got := res.apiError(t); !strings.Contains(got, tt.want) {
				t.Errorf("error %q, want %q in it", got, tt.want)
			}
		})
	}
	if st := ts.trace(t, id).Run.Status; st != traces.StatusInterrupted {
		t.Errorf("after the refusals the run is %s, want still interrupted", st)
	}
}

// TestListAfterResume: once a decision resumed an interrupted run and it completed, GET
// /api/runs and the index list it as its page shows it: completed, with all its events, whether
// the runs live in memory or in the store.
func TestListAfterResume(t *testing.T) {
	flow, err := agents.Lookup("approval")
	if err != nil {
		t.Fatal(err)
	}
	for _, stored := range []bool{false, true} {
		t.Run(map[bool]string{false: "in memory", true: "stored"}[stored], func(t *testing.T) {
			cfg := server.Config{Flows: []agents.Flow{flow}}
			if stored {
				cfg.Broker, _, _ = storedBroker(t, filepath.Join(t.TempDir(), "baton.db"))
			}
			ts := mustOpenServer(t, cfg)
			server.SetRunner(ts.Server, agents.RunFlow)
			id := ts.createRun(t, `{"flow":"approval"}`)
			paused := ts.waitStatus(t, id, traces.StatusInterrupted)
			listed := func() live.RunSummary {
				t.Helper()
				var runs []live.RunSummary
				if res := ts.do(t, request{path: "/api/runs"}); res.status != http.StatusOK || json.Unmarshal(res.body, &runs) != nil || len(runs) != 1 {
					t.Fatalf("GET /api/runs: %d %s", res.status, res.body)
				}
				return runs[0]
			}
			eventually(t, "the list to show the interrupted run whole", func() bool {
				r := listed()
				return r.Status == traces.StatusInterrupted && r.Events == int64(len(paused.Events))
			})

			if res := ts.do(t, request{method: http.MethodPost, path: "/api/runs/" + id + "/resume", body: `{"approve":true}`}); res.status != http.StatusAccepted {
				t.Fatalf("resume: %d %s", res.status, res.body)
			}
			done := ts.waitStatus(t, id, traces.StatusCompleted)
			var r live.RunSummary
			eventually(t, "the list to show the resumed run completed", func() bool {
				r = listed()
				return r.Status == traces.StatusCompleted && r.Events == int64(len(done.Events))
			})

			row := page(t, ts.do(t, request{path: "/"})).Find(`[data-testid=run-row][data-run-id="` + id + `"]`)
			if got := row.AttrOr("data-status", ""); got != string(traces.StatusCompleted) {
				t.Errorf("the index lists run %s as %q, want completed (%d rows)", id, got, row.Length())
			}
		})
	}
}
