package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/sqlite"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// storedBroker opens the database at path and returns a broker that keeps its runs there, and a
// function that waits for the last writes and closes the database (cleanup calls it too).
func storedBroker(tb testing.TB, path string) (*live.Broker, *sqlite.Store, func()) {
	tb.Helper()
	store, err := sqlite.Open(path, 0)
	if err != nil {
		tb.Fatal(err)
	}
	b := live.NewStoredBroker(0, store, nil)
	closeAll := sync.OnceFunc(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			tb.Error(err)
		}
		store.Close()
	})
	tb.Cleanup(closeAll)
	return b, store, closeAll
}

var nextLink = regexp.MustCompile(`^<(/api/runs\?[^>]+)>; rel="next"$`)

func TestListRunsPagesFiltersAndSearchesTheStore(t *testing.T) {
	b, _, _ := storedBroker(t, filepath.Join(t.TempDir(), "baton.db"))
	ts := mustOpenServer(t, server.Config{Broker: b})
	inputs := []string{"first zebra\nwith a second line", "second", "third", "fourth", "fifth"}
	var ids []string
	for i, in := range inputs {
		flow := "echo"
		if i%2 == 1 {
			flow = "pair"
		}
		body, _ := json.Marshal(map[string]string{"flow": flow, "input": in})
		ids = append(ids, ts.createRun(t, string(body)))
	}
	list := func(path string) ([]live.RunSummary, string) {
		t.Helper()
		res := ts.do(t, request{path: path})
		var runs []live.RunSummary
		if res.status != http.StatusOK || json.Unmarshal(res.body, &runs) != nil {
			t.Fatalf("GET %s: %d %s", path, res.status, res.body)
		}
		next := ""
		if link := res.header.Get("Link"); link != "" {
			m := nextLink.FindStringSubmatch(link)
			if m == nil {
				t.Fatalf("Link header %q", link)
			}
			next = m[1]
		}
		return runs, next
	}
	eventually(t, "every run completed", func() bool {
		runs, _ := list("/api/runs?status=completed")
		return len(runs) == len(inputs)
	})

	t.Run("pages follow the Link header", func(t *testing.T) {
		var got []string
		for path := "/api/runs?limit=2&status=completed"; path != ""; {
			var runs []live.RunSummary
			runs, path = list(path)
			for _, r := range runs {
				got = append(got, r.ID)
			}
			if path != "" && !strings.Contains(path, "status=completed") {
				t.Errorf("the next page %s drops the filter", path)
			}
		}
		if want := []string{ids[4], ids[3], ids[2], ids[1], ids[0]}; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("pages listed %v, want %v", got, want)
		}
	})
	t.Run("flow", func(t *testing.T) {
		runs, _ := list("/api/runs?flow=pair")
		if len(runs) != 2 || runs[0].ID != ids[3] || runs[1].ID != ids[1] {
			t.Errorf("pair runs %+v", runs)
		}
	})
	t.Run("search, with a summary of the run", func(t *testing.T) {
		runs, _ := list("/api/runs?q=" + url.QueryEscape("ZEBRA"))
		if len(runs) != 1 || runs[0].ID != ids[0] || runs[0].Input != "first zebra" || runs[0].Events != 3 {
			t.Fatalf("search zebra: %+v", runs)
		}
		var raw []map[string]any
		json.Unmarshal(ts.do(t, request{path: "/api/runs?q=zebra"}).body, &raw)
		if _, ok := raw[0]["duration_ms"]; !ok {
			t.Errorf("no duration_ms in %v", raw[0])
		}
	})
	t.Run("bad queries say what to fix", func(t *testing.T) {
		for query, want := range map[string]string{
			"status=done": `status "done" is not one of`,
			"q=ab":        "too short: give at least 3 characters",
			"limit=lots":  "limit must be a number of runs",
			"limit=9999":  "limit 9999 is not between 1 and 500",
			"after=zz":    `after "zz" is not a cursor`,
		} {
			res := ts.do(t, request{path: "/api/runs?" + query})
			if res.status != http.StatusBadRequest || !strings.Contains(res.apiError(t), want) {
				t.Errorf("?%s: %d %s, want 400 %q", query, res.status, res.body, want)
			}
		}
	})
	t.Run("delete", func(t *testing.T) {
		if res := ts.do(t, request{method: http.MethodDelete, path: "/api/runs/" + ids[2]}); res.status != http.StatusNoContent {
			t.Fatalf("DELETE: %d %s", res.status, res.body)
		}
		for _, path := range []string{"/api/runs/" + ids[2] + "/trace", "/runs/" + ids[2]} {
			if res := ts.do(t, request{path: path}); res.status != http.StatusNotFound {
				t.Errorf("GET %s after DELETE: %d", path, res.status)
			}
		}
		if runs, _ := list("/api/runs"); len(runs) != 4 {
			t.Errorf("%d runs listed after DELETE, want 4", len(runs))
		}
		if res := ts.do(t, request{method: http.MethodDelete, path: "/api/runs/r-nope"}); res.status != http.StatusNotFound {
			t.Errorf("DELETE of an unknown run: %d", res.status)
		}
	})
	t.Run("a running run cannot be deleted", func(t *testing.T) {
		rec := ts.addRecording(t, "r-live")
		res := ts.do(t, request{method: http.MethodDelete, path: "/api/runs/r-live"})
		if res.status != http.StatusConflict || !strings.Contains(res.apiError(t), "still going on") {
			t.Errorf("DELETE of a running run: %d %s", res.status, res.body)
		}
		rec.Finish(traces.StatusCompleted, "")
	})
}

// An app's run that stopped at an interrupt is resumed by the app after Baton restarted on the
// same database: the resumed part goes on in the same stored trace.
func TestIngestResumesAcrossARestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	b1, _, stop1 := storedBroker(t, db)
	first := mustOpenServer(t, server.Config{Broker: b1})
	id, posted := first.interruptedRun(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	stop1()

	b2, store2, _ := storedBroker(t, db)
	second := mustOpenServer(t, server.Config{Broker: b2})
	if res := second.startIngest(t, `{"resumes":"int-7"}`, nil, http.StatusOK); res.ID != id {
		t.Fatalf("resumed as %s, want the stored run %s", res.ID, id)
	}
	rest := appEvents(1, traces.KindResumed, traces.KindMessage, traces.KindRunFinished)
	second.postEvents(t, id, nil, 4, rest...)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	if err := b2.Close(ctx2); err != nil {
		t.Fatal(err)
	}
	tr, err := store2.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := traces.Validate(tr); err != nil {
		t.Errorf("the stored trace is not valid: %v", err)
	}
	var kinds, want []traces.Kind
	for _, e := range tr.Events {
		kinds = append(kinds, e.Kind)
	}
	for _, e := range append(posted, rest...) {
		want = append(want, e.Kind)
	}
	if !slices.Equal(kinds, want) || tr.Run.Status != traces.StatusCompleted {
		t.Errorf("stored run %s: %v, want completed: %v", tr.Run.Status, kinds, want)
	}
}
