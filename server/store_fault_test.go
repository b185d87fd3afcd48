package server_test

import (
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/sqlite"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// storedRuns is how many copies of a trace file filledDatabase stores, as run-0 to run-59.
const storedRuns = 60

// filledDatabase stores storedRuns copies of the supervisor trace file in a database of the
// test's and returns its path and the file's bytes.
func filledDatabase(t *testing.T) (string, []byte) {
	t.Helper()
	raw, err := os.ReadFile("../traces/testdata/v2/supervisor.trace.json")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := traces.Unmarshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "baton.db")
	b, _, closeAll := storedBroker(t, path)
	for i := range storedRuns {
		tr.Run.ID = fmt.Sprintf("run-%d", i)
		if _, err := b.Import(tr); err != nil {
			t.Fatal(err)
		}
	}
	closeAll()
	return path, raw
}

// makeReadOnly makes the database at path one this process cannot write: its file mode says so,
// and, for root, whom the mode does not bind, its header does (a write version above 2, which
// SQLite opens read-only).
func makeReadOnly(t *testing.T, path string) {
	t.Helper()
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteAt([]byte{3}, 18)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		t.Fatal(err)
	}
}

// damageLastRun writes garbage over the last leaf page of the events table: the one that holds
// the events of the run stored last.
func damageLastRun(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	var page int64
	err = db.QueryRow(`SELECT pageno FROM dbstat WHERE name = 'events' AND pagetype = 'leaf' ORDER BY path DESC LIMIT 1`).Scan(&page)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(strings.Repeat("\xde\xad\xbe\xef", 1024)), (page-1)*4096); err != nil {
		t.Fatal(err)
	}
}

// TestStoreFaultsAnswerWithTheirCause serves a database with a real fault in it: a full one (its
// size capped, as a full disk would), a read-only file, a page overwritten with garbage. Each
// request the fault stops is a 503 whose message names the cause, with a Retry-After only when
// waiting may help; every run the fault does not touch is still served.
func TestStoreFaultsAnswerWithTheirCause(t *testing.T) {
	cases := []struct {
		name    string
		open    func(t *testing.T, path string) (*sqlite.Store, error)
		refused request // what the fault stops
		want    string  // in its message
		retry   string  // its Retry-After
	}{{
		name: "full disk",
		open: func(t *testing.T, path string) (*sqlite.Store, error) {
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			return sqlite.OpenCapped(path, -1, st.Size())
		},
		refused: request{method: http.MethodPost, path: "/api/traces"}, // the body: the trace file
		want:    "is full: free some space", retry: "30",
	}, {
		name: "read-only file",
		open: func(t *testing.T, path string) (*sqlite.Store, error) {
			makeReadOnly(t, path)
			return sqlite.Open(path, -1)
		},
		refused: request{method: http.MethodPost, path: "/api/traces"},
		want:    "is read-only: make the file and its folder writable",
	}, {
		name: "damaged page",
		open: func(t *testing.T, path string) (*sqlite.Store, error) {
			damageLastRun(t, path)
			return sqlite.Open(path, -1)
		},
		refused: request{path: fmt.Sprintf("/api/runs/run-%d/trace", storedRuns-1)},
		want:    "is damaged (The database disk image is malformed (SQLITE_CORRUPT))",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path, raw := filledDatabase(t)
			store, err := tc.open(t, path)
			if err != nil {
				t.Fatalf("open the database: %v", err)
			}
			t.Cleanup(func() { store.Close() })
			ts := mustOpenServer(t, server.Config{Broker: live.NewStoredBroker(0, store, nil)})
			if tc.refused.method == http.MethodPost {
				tc.refused.body = string(raw)
			}
			refused := []request{tc.refused}
			// A new demo run too, where nothing may be written: one small enough may still fit
			// in a full database's pages.
			if tc.name == "read-only file" {
				refused = append(refused, request{method: http.MethodPost, path: "/api/runs", body: `{"flow":"echo"}`})
			}
			for _, req := range refused {
				res := ts.do(t, req)
				if msg := res.apiError(t); res.status != http.StatusServiceUnavailable || !strings.Contains(msg, tc.want) ||
					!strings.Contains(msg, path) {
					t.Errorf("%s %s: %d %q; want 503 naming %s and saying %q", req.method, req.path, res.status, msg, path, tc.want)
				}
				if got := res.header.Get("Retry-After"); got != tc.retry {
					t.Errorf("%s %s: Retry-After %q, want %q", req.method, req.path, got, tc.retry)
				}
			}
			// What the fault does not touch is served: the list, the first run's trace and page.
			for _, p := range []string{"/api/runs", "/api/runs/run-0/trace", "/runs/run-0"} {
				if res := ts.do(t, request{path: p}); res.status != http.StatusOK {
					t.Errorf("GET %s: %d %s", p, res.status, res.body)
				}
			}
		})
	}
}
