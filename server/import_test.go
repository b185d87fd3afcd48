package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	ts := mustOpenServer(t, server.Config{MaxIngestBody: int64(len(good)) + 100})
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
		{"too large", string(good) + strings.Repeat(" ", 200), 413, "larger than the limit"},
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
