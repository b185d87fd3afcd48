package web

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/traces"
)

// TestKeptRowsServeAsTheViewState: the rows a run's KeptRows serves, reading its events back from
// its recording, are those of the view state it was kept from, filter by filter, window by
// window, forward and backward, with the same counts: on runs with transfers that failed, rows
// seen through callbacks only, messages folded into their calls, interrupts and a long one.
func TestKeptRowsServeAsTheViewState(t *testing.T) {
	runs := pieceTraces(t)
	runs["big"] = webtest.Big(1500)
	for name, tr := range runs {
		t.Run(name, func(t *testing.T) {
			rec := traces.NewRecordingOf(tr)
			events := make([]traces.Event, rec.Len())
			if n := readEvents(rec.Subscribe(0), events); n != len(events) {
				t.Fatalf("read %d events back of %d", n, len(events))
			}
			vs := NewViewState(tr.Run, tr.Agents)
			vs.Add(events...) // as a server's feed: the events as its recording gives them
			kept := vs.KeepRows()
			if kept == nil || kept.Seq() != vs.Seq() {
				t.Fatalf("kept rows %v; want them as of #%d", kept, vs.Seq())
			}
			for _, f := range rowFilters(events) {
				if m, n := kept.CountRows(rec, f); [2]int{m, n} != pair(vs.CountRows(f)) {
					want := pair(vs.CountRows(f))
					t.Fatalf("%+v: kept counts %d of %d rows, the view state %d of %d", f, m, n, want[0], want[1])
				}
				n := int64(len(events))
				for _, w := range []struct {
					after, before int64
					limit         int
				}{{0, 0, 400}, {0, 0, 3}, {n / 3, 0, 5}, {0, n / 2, 4}, {n / 4, n/4 + 9, 2}, {n, 0, 1}, {n - 2, 0, 1}} {
					if w.before > 0 && w.before <= w.after+1 {
						continue
					}
					for _, forward := range []bool{true, false} {
						got := kept.FindRows(rec, f, w.after, w.before, w.limit, forward)
						want := vs.FindRows(f, w.after, w.before, w.limit, forward)
						if !reflect.DeepEqual(got, want) {
							t.Fatalf("%+v, after %d before %d limit %d forward %v: kept rows %v reached %d, the view state's %v reached %d",
								f, w.after, w.before, w.limit, forward, rowSeqs(got.Rows), got.Reached, rowSeqs(want.Rows), want.Reached)
						}
					}
				}
			}
		})
	}
}

// TestKeptRowsSearchOnce: a run's kept rows read its events once for the searches of one text,
// however many requests ask for it, and again for another text.
func TestKeptRowsSearchOnce(t *testing.T) {
	tr := webtest.Big(1500)
	rec := traces.NewRecordingOf(tr)
	vs := analyse(tr, prices.Run{})
	kept := (&ViewState{a: vs}).KeepRows()
	for i, text := range []string{"result 1", " Result 1\n", "result 2"} {
		kept.CountRows(rec, RowFilter{Text: text})
		kept.FindRows(rec, RowFilter{Text: text, Agent: "math_agent"}, 0, 0, 10, false)
		if want := []int{1, 1, 2}[i]; kept.Searches() != want {
			t.Fatalf("after searching %q: %d passes over the events, want %d", text, kept.Searches(), want)
		}
	}
}

// TestKeptRowsSearchesAtOnce: searches of different texts at once, on one run's kept rows, each
// count what the view state counts (run with -race: one search's matches are not written under
// another's reading).
func TestKeptRowsSearchesAtOnce(t *testing.T) {
	tr := webtest.Big(1500)
	rec := traces.NewRecordingOf(tr)
	events := make([]traces.Event, rec.Len())
	readEvents(rec.Subscribe(0), events)
	vs := NewViewState(tr.Run, tr.Agents)
	vs.Add(events...)
	kept := vs.KeepRows()
	texts := []string{"result 1", "result 2", "math", "no such words"}
	want := map[string]int{}
	for _, text := range texts {
		want[text], _ = vs.CountRows(RowFilter{Text: text})
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(texts))
	for range 4 {
		for _, text := range texts {
			wg.Go(func() {
				if m, _ := kept.CountRows(rec, RowFilter{Text: text}); m != want[text] {
					errs <- fmt.Sprintf("%q: %d rows, want %d", text, m, want[text])
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// rowFilters are filters that each row property decides: none, each agent's, each kind group's,
// failed rows, texts that many, few and no rows hold, and some together.
func rowFilters(events []traces.Event) []RowFilter {
	fs := []RowFilter{{}, {Failed: true}, {Text: "result"}, {Text: " TRANSFER\n"}, {Text: "no such words"},
		{Groups: []string{"message"}}, {Groups: []string{"model", "tool"}, Failed: true}}
	agents, groups := map[string]bool{}, map[string]bool{}
	for i := range events {
		e := &events[i]
		if !agents[e.Agent] {
			agents[e.Agent] = true
			fs = append(fs, RowFilter{Agent: e.Agent}, RowFilter{Agent: e.Agent, Text: e.Agent[:min(3, len(e.Agent))]})
		}
		if g := KindGroup(e.Kind); !groups[g] {
			groups[g] = true
			fs = append(fs, RowFilter{Groups: []string{g}})
		}
	}
	return fs
}

func pair(a, b int) [2]int { return [2]int{a, b} }

func rowSeqs(rows []Row) string {
	s := ""
	for i, r := range rows {
		if i == 8 {
			return s + fmt.Sprintf(" … (%d)", len(rows))
		}
		s += fmt.Sprintf(" %d", r.Seq)
	}
	return s
}
