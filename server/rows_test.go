package server_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/agentstest"
	"github.com/baton-dev/baton/server"
)

// rowsAnswer is the JSON of GET /runs/:id/rows.
type rowsAnswer struct {
	HTML    string `json:"html"`
	Reached int64  `json:"reached"`
	Head    int64  `json:"head"`
	Matches int    `json:"matches"`
	Events  int    `json:"events"`
}

// rowSeqs returns the data-seq and data-search of the timeline rows in html.
func rowSeqs(t *testing.T, html string) (seqs []int64, search []string) {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		t.Fatal(err)
	}
	doc.Find("[data-testid=timeline-row]").Each(func(_ int, s *goquery.Selection) {
		n, _ := strconv.ParseInt(s.AttrOr("data-seq", ""), 10, 64)
		seqs = append(seqs, n)
		search = append(search, s.AttrOr("data-search", ""))
	})
	return seqs, search
}

// TestRunPageRowsPaged runs a real long flow (over 600 events): its page holds the newest 400
// rows behind a gap, the rows route pages the rest and searches the whole run with a count, and
// bad queries get a 400 that says what to fix.
func TestRunPageRowsPaged(t *testing.T) {
	ts := mustOpenServer(t, server.Config{Flows: []agents.Flow{agentstest.Long(200)}})
	server.SetRunner(ts.Server, agents.RunFlow)
	id := ts.createRun(t, `{"flow": "long", "pace_ms": 0}`)
	readEvents(t, ts.mustDial(t, "/api/runs/"+id+"/events")) // to the run's end
	tr := ts.trace(t, id)
	last := tr.Events[len(tr.Events)-1].Seq

	page := ts.do(t, request{path: "/runs/" + id})
	seqs, _ := rowSeqs(t, string(page.body))
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(string(page.body)))
	gap := doc.Find("#timeline-rows > [data-testid=timeline-gap]")
	if len(seqs) != 400 || seqs[0] != last-399 || gap.Length() != 1 || gap.AttrOr("data-before", "") != strconv.FormatInt(last-399, 10) {
		t.Fatalf("the page holds %d rows from #%d and %d gaps (before %s); want the newest 400 after one gap", len(seqs), seqs[0], gap.Length(), gap.AttrOr("data-before", ""))
	}

	get := func(t *testing.T, q string) rowsAnswer {
		t.Helper()
		res := ts.do(t, request{path: "/runs/" + id + "/rows?" + q})
		var ans rowsAnswer
		if res.status != http.StatusOK || json.Unmarshal(res.body, &ans) != nil {
			t.Fatalf("rows?%s: status %d: %s", q, res.status, res.body)
		}
		return ans
	}
	t.Run("the gap's last rows", func(t *testing.T) {
		ans := get(t, "after=0&before="+strconv.FormatInt(last-399, 10)+"&dir=backward&limit=50")
		got, _ := rowSeqs(t, ans.HTML)
		if len(got) != 50 || got[49] >= last-399 || ans.Reached != got[0] || ans.Head != last {
			t.Fatalf("got %d rows (%v..%v), reached %d, head %d", len(got), got[:1], got[len(got)-1:], ans.Reached, ans.Head)
		}
	})
	t.Run("the first rows", func(t *testing.T) {
		ans := get(t, "dir=forward&limit=3")
		if got, _ := rowSeqs(t, ans.HTML); len(got) != 3 || got[0] != 1 || ans.Reached < got[2] {
			t.Fatalf("got %v, reached %d; want 3 rows from #1", got, ans.Reached)
		}
	})
	t.Run("search over the whole run", func(t *testing.T) {
		ans := get(t, "q=%22n%22%3A3%7D&count=1")
		got, search := rowSeqs(t, ans.HTML)
		if len(got) == 0 || ans.Matches != len(got) || ans.Events != len(tr.Events) || ans.Reached != 0 {
			t.Fatalf("got %d rows, matches %d of %d, reached %d; want every match of the run", len(got), ans.Matches, ans.Events, ans.Reached)
		}
		for _, s := range search {
			if !strings.Contains(s, `"n":3}`) {
				t.Fatalf("a row without the text: %.100q", s)
			}
		}
		if got[0] >= last-399 {
			t.Fatalf("the first match is #%d, among the rows the page holds already", got[0])
		}
	})
	for _, tc := range []struct{ query, want string }{
		{"limit=0", "limit must be an integer of at least 1"},
		{"limit=5000", "limit must be at most 2000"},
		{"after=-1", "after must be an integer of at least 0"},
		{"after=10&before=11", "before (11) must be more than after (10) + 1"},
		{"dir=sideways", "dir must be forward or backward"},
		{"kind=teleport", `kind "teleport" is not a kind group`},
		{"failed=yes", "failed must be 1 or 0"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			res := ts.do(t, request{path: "/runs/" + id + "/rows?" + tc.query})
			if res.status != http.StatusBadRequest || !strings.Contains(res.apiError(t), tc.want) {
				t.Fatalf("status %d, %s; want 400 saying %q", res.status, res.body, tc.want)
			}
		})
	}
	if res := ts.do(t, request{path: "/runs/r-nope/rows"}); res.status != http.StatusNotFound {
		t.Fatalf("rows of an unknown run: status %d", res.status)
	}
}
