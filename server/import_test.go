package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// importedTrace is the answer to POST /api/traces.
type importedTrace struct{ ID, URL, Note string }

func (ts *testServer) importTrace(tb testing.TB, body []byte) importedTrace {
	tb.Helper()
	res := ts.do(tb, request{method: http.MethodPost, path: "/api/traces", body: string(body)})
	var out importedTrace
	if res.status != http.StatusCreated || json.Unmarshal(res.body, &out) != nil || out.URL != "/runs/"+out.ID {
		tb.Fatalf("POST /api/traces: %d %s, want 201 {id, url}", res.status, res.body)
	}
	return out
}

// importRun imports tr as its trace file (importTrace) and returns the run's id.
func (ts *testServer) importRun(tb testing.TB, tr traces.Trace) string {
	tb.Helper()
	file, err := traces.Marshal(tr)
	if err != nil {
		tb.Fatal(err)
	}
	return ts.importTrace(tb, file).ID
}

func TestImportTraceRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../traces/testdata/v[0-9]*/*.trace.json")
	if err != nil || len(files) < 2 {
		t.Fatalf("no version-1 and version-2 files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimPrefix(file, "../traces/testdata/"), func(t *testing.T) {
			ts := mustOpenServer(t, server.Config{}) // v1 and v2 files hold the same runs
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want, err := traces.Unmarshal(data)
			if err != nil {
				t.Fatal(err)
			}
			first := ts.importTrace(t, data)
			if first.ID != want.Run.ID || first.Note != "" {
				t.Errorf("imported as %+v, want its own id %s and no note", first, want.Run.ID)
			}
			// Read back in the current version, which a version-1 file migrates to.
			got := ts.do(t, request{path: "/api/runs/" + first.ID + "/trace"})
			if current, _ := traces.Marshal(want); !bytes.Equal(got.body, current) {
				t.Errorf("the trace read back differs from the file written in the current version")
			}
			if res := ts.do(t, request{path: first.URL}); res.status != http.StatusOK {
				t.Errorf("GET %s: %d", first.URL, res.status)
			}

			// The same file again: its id is taken, so it gets a new one and says so.
			second := ts.importTrace(t, data)
			if second.ID == first.ID || !strings.Contains(second.Note, want.Run.ID+" is taken") {
				t.Errorf("second import %+v, want a new id and a note", second)
			}
			again := ts.trace(t, second.ID)
			want.Run.ID = second.ID
			a, _ := traces.Marshal(again)
			w, _ := traces.Marshal(want)
			if !bytes.Equal(a, w) {
				t.Errorf("the second import differs from the file beyond its id")
			}
		})
	}
}

func TestImportTraceRefusesBadFiles(t *testing.T) {
	good, err := os.ReadFile("../traces/testdata/v1/supervisor.trace.json")
	if err != nil {
		t.Fatal(err)
	}
	ts := mustOpenServer(t, server.Config{MaxIngestBody: int64(len(good)) + 1100})
	replace := func(old, new string) string {
		if !bytes.Contains(good, []byte(old)) {
			t.Fatalf("%q is not in the file", old)
		}
		return strings.Replace(string(good), old, new, 1)
	}
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"not JSON", "supervisor run, events 1 to 50", 400, "trace cannot be read: it is not valid JSON"},
		{"empty object", "{}", 400, `trace has no "format" field`},
		{"a later version", replace(`"version": 1`, `"version": 3`), 400, "trace version 3 is not supported"},
		{"unknown field", replace(`"flow": "supervisor"`, `"flow": "supervisor", "colour": "red"`), 400, `unknown field "run.colour"`},
		{"seq gap", replace(`"seq": 2,`, `"seq": 3,`), 400, "events[1].seq is 3, want 2"},
		{"event after run.finished", replace(`"status": "completed"
      }
    }
  ]`, `"status": "completed"
      }
    },
    {"seq": 51, "time": "2026-03-14T09:30:08Z", "kind": "message", "message": {"role": "user"}}
  ]`), 400, "events[50] (message) comes after run.finished"},
		{"run id with a slash and a query", replace(`"id": "run-20260314-093000-7f3a"`, `"id": "a/b?c"`), 400, `run.id "a/b?c" holds '/'`},
		{"run id of a kilobyte", replace(`"id": "run-20260314-093000-7f3a"`, `"id": "`+strings.Repeat("i", 1024)+`"`), 400, "run.id is 1024 bytes long: keep it to 128"},
		{"flow of a kilobyte", replace(`"flow": "supervisor"`, `"flow": "`+strings.Repeat("f", 1024)+`"`), 400, "run.flow is 1024 bytes long: keep it to 256"},
		{"agent kind not documented", replace(`"kind": "supervisor"`, `"kind": "<script>"`), 400, `agents[0].kind "<script>" is not one of`},
		{"agents null", replace(`"agents": [`, `"agents": null, "x": [`), 400, `"agents" is null`},
		{"agent naming an unknown parent", replace(`"kind": "chat_model",
      "parent": "supervisor"`, `"kind": "chat_model",
      "parent": "superviser"`), 400, `agents[1]: agent "research_agent" names parent "superviser", which is not among the agents`},
		{"too large", string(good) + strings.Repeat(" ", 1200), 413, "; add a larger trace file with `baton import FILE`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := ts.do(t, request{method: http.MethodPost, path: "/api/traces", body: tc.body})
			if res.status != tc.status || !strings.Contains(res.apiError(t), tc.want) {
				t.Errorf("status %d %s; want %d saying %q", res.status, res.body, tc.status, tc.want)
			}
			if runs := ts.Broker.Runs(); len(runs) != 0 {
				t.Errorf("a refused file was stored: %+v", runs)
			}
		})
	}
}

// TestImportedRunThatHadNotEndedEndsInterrupted: a trace saved while its run went on is not
// listed running for ever: it ends interrupted where its events stop, and the answer says so.
func TestImportedRunThatHadNotEndedEndsInterrupted(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	data, err := traces.Marshal(traces.Trace{
		Run:    traces.Run{ID: "r-going", Flow: "f", Status: traces.StatusRunning, StartedAt: at},
		Agents: []traces.Agent{{Name: "a", Kind: traces.AgentChatModel}},
		Events: []traces.Event{
			{Seq: 1, Time: at, Kind: traces.KindRunStarted, Run: &traces.RunMark{Status: traces.StatusRunning}},
			{Seq: 2, Time: at.Add(time.Second), Kind: traces.KindAgentStarted, Agent: "a", AgentRun: &traces.AgentRun{Via: "run"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := ts.importTrace(t, data)
	if !strings.Contains(out.Note, "imported as interrupted") {
		t.Errorf("note %q does not say the run was ended", out.Note)
	}
	res := ts.do(t, request{path: "/api/runs"})
	var list []struct{ ID, Status string }
	if err := json.Unmarshal(res.body, &list); err != nil || len(list) != 1 || list[0].Status != "interrupted" {
		t.Fatalf("run list %s: want the one run, interrupted", res.body)
	}
	tr := ts.trace(t, out.ID)
	last := tr.Events[len(tr.Events)-1]
	if tr.Run.Status != traces.StatusInterrupted || last.Kind != traces.KindRunFinished || last.Run.Status != traces.StatusInterrupted || !last.Time.Equal(at.Add(time.Second)) {
		t.Errorf("run %s, last event %+v: want it ended interrupted at its last event", tr.Run.Status, last)
	}
}
