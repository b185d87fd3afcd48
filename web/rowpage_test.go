package web_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// TestFindRowsPages pages through a 3,000-event run forward and backward, with and without
// filters: the pages join up into exactly the rows that pass the filter, in order, and
// CountRows counts them.
func TestFindRowsPages(t *testing.T) {
	tr := webtest.Big(3000)
	vs := web.NewViewState(tr.Run, tr.Agents)
	vs.Add(tr.Events...)
	all := web.NewTimeline(tr, 0)
	for _, tc := range []struct {
		name   string
		filter web.RowFilter
		keep   func(web.Row) bool
	}{
		{"none", web.RowFilter{}, func(r web.Row) bool { return r.EchoOf == 0 }},
		{"agent and kinds", web.RowFilter{Agent: "math_agent", Groups: []string{"tool", "message"}},
			func(r web.Row) bool { return r.Agent == "math_agent" && (r.Group == "tool" || r.Group == "message") }},
		{"text", web.RowFilter{Text: "  Result 17\n"}, func(r web.Row) bool { return r.EchoOf == 0 && strings.Contains(r.Search, "result 17") }},
		{"no match", web.RowFilter{Text: "no such words"}, func(web.Row) bool { return false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want []int64
			for _, r := range all {
				if tc.keep(r) {
					want = append(want, r.Seq)
				}
			}
			if m, n := vs.CountRows(tc.filter); m != len(want) || n != len(tr.Events) {
				t.Fatalf("CountRows = %d of %d, want %d of %d", m, n, len(want), len(tr.Events))
			}
			var fwd []int64
			for after, i := int64(0), 0; ; i++ {
				p := vs.FindRows(tc.filter, after, 0, 250, true)
				fwd = append(fwd, seqs(p.Rows)...)
				if p.Reached == 0 {
					break
				}
				if p.Reached <= after || i > 100 {
					t.Fatalf("forward from %d reached %d: no progress", after, p.Reached)
				}
				after = p.Reached
			}
			var back []int64
			for before, i := int64(0), 0; ; i++ {
				p := vs.FindRows(tc.filter, 0, before, 250, false)
				back = append(seqs(p.Rows), back...)
				if p.Reached == 0 {
					break
				}
				if before != 0 && p.Reached >= before || i > 100 {
					t.Fatalf("backward before %d reached %d: no progress", before, p.Reached)
				}
				before = p.Reached
			}
			if !slices.Equal(fwd, want) || !slices.Equal(back, want) {
				t.Fatalf("forward pages give %d rows, backward %d, want %d (%v...)", len(fwd), len(back), len(want), want[:min(5, len(want))])
			}
		})
	}
}

// TestPageKeepsNewestRows: Page holds the newest rows only, the rest of the model unchanged.
func TestPageKeepsNewestRows(t *testing.T) {
	tr := webtest.Big(1000)
	vs := web.NewViewState(tr.Run, tr.Agents)
	vs.Add(tr.Events...)
	page, whole := vs.Page(300), vs.View()
	if len(page.Timeline) != 300 || page.Timeline[299].Seq != whole.Timeline[len(whole.Timeline)-1].Seq {
		t.Fatalf("Page(300) has %d rows ending at #%d, want the newest 300", len(page.Timeline), page.Timeline[len(page.Timeline)-1].Seq)
	}
	if page.Stats != whole.Stats || len(page.Graph.Nodes) != len(whole.Graph.Nodes) {
		t.Fatal("Page changed more than the rows")
	}
}

func seqs(rows []web.Row) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.Seq
	}
	return out
}

// TestIndexSearchTurns: IndexSearch makes at most the search texts it is asked for, says when
// every event's is made, and a search over texts made in turns finds what a row's own text holds.
func TestIndexSearchTurns(t *testing.T) {
	tr := webtest.Big(3000)
	vs := web.NewViewState(tr.Run, tr.Agents)
	vs.Add(tr.Events...)
	turns := 0
	for done := false; !done; turns++ {
		done = vs.IndexSearch(1000)
	}
	if want := (len(tr.Events) + 999) / 1000; turns != want {
		t.Errorf("IndexSearch(1000) took %d turns for %d events, want %d", turns, len(tr.Events), want)
	}
	fresh := web.NewViewState(tr.Run, tr.Agents)
	fresh.Add(tr.Events...)
	for _, q := range []string{"result 17", "for context", "no such words"} {
		f := web.RowFilter{Text: q}
		if got, want := seqs(vs.FindRows(f, 0, 0, 5000, true).Rows), seqs(fresh.FindRows(f, 0, 0, 5000, true).Rows); !slices.Equal(got, want) {
			t.Errorf("%q: %d rows from texts made in turns, %d from texts made at once", q, len(got), len(want))
		}
	}
	if vs.IndexSearch(1) != true {
		t.Error("IndexSearch of an indexed run says it is not done")
	}
	vs.Add(traces.Event{Seq: tr.Events[len(tr.Events)-1].Seq + 1, Kind: traces.KindError, Error: &traces.ErrorDetail{Message: "late"}})
	if vs.IndexSearch(0) || !vs.IndexSearch(1) {
		t.Error("an event added after indexing is not indexed by the next turn")
	}
}
