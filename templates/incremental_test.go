package templates_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// replaced are the parts of the run page that live updates replace whole.
var replaced = []string{"run-summary", "run-outcome", "graph", "session-values", "session-histories", "filter-agent"}

// TestIncrementalEqualsFullRender: for the real trace of every catalogue flow, a page rendered at
// some event and then kept up by the fragments of a view state fed the rest in batches of random
// sizes, as the live socket does, shows after every batch exactly what a full render of the same
// prefix shows: the same header, outcome, tree, session and filter, and the same timeline rows.
func TestIncrementalEqualsFullRender(t *testing.T) {
	for i, flow := range agents.Catalogue() {
		t.Run(flow.Name, func(t *testing.T) {
			tr := record(t, flow)
			// One page follows from the start in batches of 1 to 3 events, another joins at a
			// random event of the first half and takes batches of 1 to 8.
			for round := range 2 {
				rng := rand.New(rand.NewPCG(uint64(i), uint64(round)))
				start, batch := 0, 3
				if round > 0 {
					start, batch = rng.IntN(len(tr.Events)/2+1), 8
				}
				if !follows(t, tr, int64(start), func() int64 { return 1 + int64(rng.IntN(batch)) }) {
					return
				}
			}
		})
	}
}

// follows checks a page loaded at event seq and kept up in batches of next() events.
func follows(t *testing.T, tr traces.Trace, seq int64, next func() int64) bool {
	t.Helper()
	ctx := context.Background()
	run := tr.Run
	run.Status, run.EndedAt, run.Error = traces.StatusRunning, nil, ""
	vs := web.NewViewState(run, tr.Agents)
	vs.Add(tr.Events[:seq]...)
	page := fullPage(t, web.Prefix(tr, seq))
	for seq < int64(len(tr.Events)) {
		to := min(seq+next(), int64(len(tr.Events)))
		vs.Add(tr.Events[seq:to]...)
		u := vs.Update(seq)
		parts, err := templates.Parts(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := templates.Rows(ctx, append(u.Amended, vs.Rows(seq, 0)...))
		if err != nil {
			t.Fatal(err)
		}
		page.apply(t, parts, rows)
		seq = to
		if want := fullPage(t, web.Prefix(tr, seq)); !page.equal(t, want, seq) {
			return false
		}
	}
	return true
}

// record runs flow for real, at no pace, and returns its trace.
func record(t *testing.T, flow agents.Flow) traces.Trace {
	t.Helper()
	rec := traces.NewRecording(traces.Run{ID: "r-" + flow.Name, Flow: flow.Name, Input: flow.DefaultInput}, flow.Agents)
	agents.RunFlow(context.Background(), flow, flow.DefaultInput, agents.Options{}, rec)
	return rec.Snapshot()
}

// pageModel is what a run page shows: the HTML of each replaceable part, and the timeline rows
// by id in order, each normalised by one parser.
type pageModel struct {
	parts map[string]string
	rows  []string
	byID  map[string]int
}

// fresh marks the transfers an update brings, to flash them once; a full render flashes none.
var fresh = regexp.MustCompile(`\s*\bfresh\b`)

func outer(t *testing.T, s *goquery.Selection) string {
	h, err := goquery.OuterHtml(s)
	if err != nil {
		t.Fatal(err)
	}
	return fresh.ReplaceAllString(h, "")
}

func fullPage(t *testing.T, tr traces.Trace) *pageModel {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(renderString(t, templates.RunPage(tr, templates.PageOptions{}))))
	if err != nil {
		t.Fatal(err)
	}
	p := &pageModel{parts: make(map[string]string), byID: make(map[string]int)}
	for _, id := range replaced {
		p.parts[id] = outer(t, doc.Find("#"+id))
	}
	doc.Find("#" + templates.RowsTarget + " > li").Each(func(_ int, s *goquery.Selection) {
		p.byID[s.AttrOr("id", "")] = len(p.rows)
		p.rows = append(p.rows, outer(t, s))
	})
	return p
}

// apply swaps fragments in as the page's script does.
func (p *pageModel) apply(t *testing.T, parts []templates.Fragment, rows []string) {
	t.Helper()
	for _, f := range parts {
		if whole := templates.WholeOf(f.Target); whole != "" {
			p.parts[whole] = swapPiece(t, whole, p.parts[whole], f)
			continue
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(f.HTML))
		if err != nil {
			t.Fatal(err)
		}
		p.parts[f.Target] = outer(t, doc.Find("#"+f.Target))
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader("<ol>" + strings.Join(rows, "") + "</ol>"))
	if err != nil {
		t.Fatal(err)
	}
	doc.Find("ol > li").Each(func(_ int, s *goquery.Selection) {
		id := s.AttrOr("id", "")
		if i, ok := p.byID[id]; ok {
			p.rows[i] = outer(t, s)
			return
		}
		p.byID[id] = len(p.rows)
		p.rows = append(p.rows, outer(t, s))
	})
}

// swapNode returns graph (the tree's markup) with the node that f replaces swapped for f's.
func swapNode(t *testing.T, graph string, f templates.Fragment) string {
	t.Helper()
	return swapPiece(t, "graph", graph, f)
}

// swapPiece returns the markup of part id with the piece that f replaces (a node of the tree, an
// agent's history) swapped for f's, as the page's script does; it fails the test when the part
// has no such piece.
func swapPiece(t *testing.T, id, markup string, f templates.Fragment) string {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(markup))
	if err != nil {
		t.Fatal(err)
	}
	old := doc.Find(`[id="` + f.Target + `"]`)
	if old.Length() != 1 {
		t.Fatalf("fragment %s: #%s has %d elements of that id, want 1", f.Target, id, old.Length())
	}
	old.ReplaceWithHtml(f.HTML)
	return outer(t, doc.Find("#"+id))
}

func (p *pageModel) equal(t *testing.T, want *pageModel, seq int64) bool {
	t.Helper()
	ok := true
	for _, id := range replaced {
		if p.parts[id] != want.parts[id] {
			t.Errorf("after #%d, #%s differs from a full render:\n got: %.600s\nwant: %.600s", seq, id, p.parts[id], want.parts[id])
			ok = false
		}
	}
	if got, w := strings.Join(p.rows, "\n"), strings.Join(want.rows, "\n"); got != w {
		t.Errorf("after #%d, the timeline differs from a full render: %d rows, want %d%s", seq, len(p.rows), len(want.rows), firstDiff(p.rows, want.rows))
		ok = false
	}
	return ok
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("; row %d:\n got: %s\nwant: %s", i, a[i], b[i])
		}
	}
	return ""
}

// TestTreeOnlyWhenChanged: fed a recorded supervisor run one event at a time, the view state's
// update carries the whole tree exactly when what moves in it changed: never for a message or a
// model call, always for a transfer. A model call brings its agent's node alone, and an update
// without the tree, its nodes swapped into the tree drawn before the event, gives the same markup
// as the tree drawn after it.
func TestTreeOnlyWhenChanged(t *testing.T) {
	tr := webtest.RecordedSupervisor(t)
	tree := func(seq int64) string { return drawnAt(t, tr, seq, "graph") }
	skipped, faces := map[traces.Kind]int{}, map[traces.Kind]int{}
	eachLiveUpdate(t, tr, "graph", func(e traces.Event, from int64, drawn bool, nodes []templates.Fragment) {
		switch {
		case e.Kind == traces.KindTransfer && (!drawn || len(nodes) > 0):
			t.Errorf("#%d transfer: the update carries the tree %v and %d nodes, want the tree alone", e.Seq, drawn, len(nodes))
		case e.Kind == traces.KindMessage && drawn:
			t.Errorf("#%d message by %s: the update redraws the tree", e.Seq, e.Agent)
		case (e.Kind == traces.KindModelStarted || e.Kind == traces.KindModelFinished) &&
			(drawn || len(nodes) != 1 || nodes[0].Target != templates.NodeTarget(e.Agent)):
			t.Errorf("#%d %s by %s: the update carries the tree %v and %d nodes, want its node alone", e.Seq, e.Kind, e.Agent, drawn, len(nodes))
		case !drawn:
			skipped[e.Kind]++
			before := tree(from)
			for _, f := range nodes {
				faces[e.Kind]++
				before = swapNode(t, before, f)
			}
			if after := tree(e.Seq); before != after {
				t.Errorf("#%d %s: the update's nodes in the tree before it differ from the tree after it:\nbefore: %.600s\n after: %.600s", e.Seq, e.Kind, before, after)
			}
		}
	})
	if skipped[traces.KindMessage] == 0 || skipped[traces.KindToolFinished] == 0 {
		t.Errorf("trees left out by kind: %v; want messages and finished tool calls among them", skipped)
	}
	if faces[traces.KindModelStarted] == 0 || faces[traces.KindModelFinished] == 0 {
		t.Errorf("nodes drawn alone by kind: %v; want model calls' starts and ends among them", faces)
	}
}

// TestHistoriesOnlyWhenNew: fed a recorded supervisor run one event at a time, the view state's
// update carries the whole session-histories panel when an agent starts for the first time, and
// only the section of an agent that starts again otherwise; that section, swapped into the panel
// drawn before the event, gives the same markup as the panel drawn after it.
func TestHistoriesOnlyWhenNew(t *testing.T) {
	tr := webtest.RecordedSupervisor(t)
	panel := func(seq int64) string { return drawnAt(t, tr, seq, "session-histories") }
	seen := map[string]bool{}
	restarts := 0
	eachLiveUpdate(t, tr, "session-histories", func(e traces.Event, from int64, whole bool, pieces []templates.Fragment) {
		started := e.Kind == traces.KindAgentStarted && e.AgentRun != nil
		switch {
		case started && !seen[e.Agent] && (!whole || len(pieces) > 0):
			t.Errorf("#%d %s starts first: the update carries the panel %v and %d sections, want the panel alone", e.Seq, e.Agent, whole, len(pieces))
		case started && seen[e.Agent] && (whole || len(pieces) != 1 || pieces[0].Target != templates.HistoryTarget(e.Agent)):
			t.Errorf("#%d %s starts again: the update carries the panel %v and %d sections, want its section alone", e.Seq, e.Agent, whole, len(pieces))
		case !started && (whole || len(pieces) > 0):
			t.Errorf("#%d %s: the update redraws the histories", e.Seq, e.Kind)
		case len(pieces) == 1:
			restarts++
			if before, after := swapPiece(t, "session-histories", panel(from), pieces[0]), panel(e.Seq); before != after {
				t.Errorf("#%d: the section in the panel before it differs from the panel after it:\nbefore: %.600s\n after: %.600s", e.Seq, before, after)
			}
		}
		if started {
			seen[e.Agent] = true
		}
	})
	if restarts == 0 {
		t.Error("no agent started again: the run does not exercise sections drawn alone")
	}
}

// TestEncodedEqualsRendered: the live socket's encoded fragments (EncodeParts, EncodeRow,
// EncodeSequence) decode to exactly what Parts, Rows and Sequence render, for every update of a
// recorded supervisor run fed one event at a time.
func TestEncodedEqualsRendered(t *testing.T) {
	ctx := context.Background()
	tr := webtest.RecordedSupervisor(t)
	vs := web.NewViewState(tr.Run, tr.Agents)
	for _, e := range tr.Events {
		from := vs.Seq()
		vs.Add(e)
		u := vs.Update(from)
		parts, err := templates.Parts(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		encoded, err := templates.EncodeParts(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		var got []templates.Fragment
		for _, f := range encoded {
			fr := decodeFragment(t, f.JSON)
			if fr.Target != f.Target {
				t.Fatalf("#%d: fragment %s encoded as %.200s", e.Seq, f.Target, f.JSON)
			}
			got = append(got, fr)
		}
		if !slices.Equal(got, parts) {
			t.Fatalf("#%d: encoded fragments differ from the rendered ones:\n got: %.600v\nwant: %.600v", e.Seq, got, parts)
		}
		rows := vs.Rows(from, 0)
		html, err := templates.Rows(ctx, rows)
		if err != nil {
			t.Fatal(err)
		}
		var encodedRows [][]byte
		for i, r := range rows {
			data, err := templates.EncodeRow(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			var s string
			if err := json.Unmarshal(append(append([]byte{'"'}, data...), '"'), &s); err != nil || s != html[i] {
				t.Fatalf("#%d: row encoded as %.300s (%v), want %.300s", r.Seq, data, err, html[i])
			}
			encodedRows = append(encodedRows, data)
		}
		if len(rows) > 0 {
			joined := bytes.Join(templates.AppendRows(nil, encodedRows...), nil)
			want := templates.Fragment{Target: templates.RowsTarget, Swap: templates.SwapAppend, HTML: strings.Join(html, "")}
			if fr := decodeFragment(t, joined); fr != want {
				t.Fatalf("#%d: rows fragment decodes to %.300v, want %.300v", e.Seq, fr, want)
			}
		}
		seq := vs.Sequence(from, e.Seq)
		want, err := templates.Sequence(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		data, err := templates.EncodeSequence(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		if fr := decodeFragment(t, data); fr != want {
			t.Fatalf("#%d: sequence encoded as %.300s, want %.300v", e.Seq, data, want)
		}
	}
}

// decodeFragment decodes a fragment encoded for the live socket, and fails t unless the encoding
// is the Fragment's own as encoding/json writes it with HTML left unescaped, byte for byte.
func decodeFragment(t *testing.T, data []byte) templates.Fragment {
	t.Helper()
	var fr templates.Fragment
	if err := json.Unmarshal(data, &fr); err != nil {
		t.Fatalf("fragment encoded as %.200s: %v", data, err)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fr); err != nil {
		t.Fatal(err)
	}
	if w := bytes.TrimSuffix(want.Bytes(), []byte("\n")); !bytes.Equal(data, w) {
		t.Fatalf("fragment encoded as\n%.300s\nnot as encoding/json writes it:\n%.300s", data, w)
	}
	return fr
}

// FuzzEncodeRow: a row encoded for the live socket is its rendered HTML as encoding/json writes
// it with HTML escaping off, byte for byte, whatever its text: quotes, backslashes, control
// characters, U+2028 and invalid UTF-8 included.
func FuzzEncodeRow(f *testing.F) {
	for _, s := range []string{"", `a "quoted" <b>tag</b> & more`, "tab\tnew\nline\r\b\f\x00\x1f\x7f",
		`back\slash`, "\u2028\u2029", "é ✓ 😀", "\xff\xfe bad \xe2\x82 utf-8", "\xe2\x80\xa8"} {
		f.Add(s)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, s string) {
		r := web.Row{Seq: 7, Agent: s, Colour: 1, Kind: traces.KindMessage, Summary: s, Search: s}
		html, err := templates.Rows(ctx, []web.Row{r})
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(html[0]); err != nil {
			t.Fatal(err)
		}
		got, err := templates.EncodeRow(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if w := want.Bytes(); !bytes.Equal(got, w[1:len(w)-2]) {
			t.Errorf("row with %q encoded as\n%s\nwant\n%s", s, got, w[1:len(w)-2])
		}
	})
}

// drawnAt returns the part of tr's run page whose element has id target as drawn at seq, with
// nothing flashing, as one parser writes it.
func drawnAt(t *testing.T, tr traces.Trace, seq int64, target string) string {
	t.Helper()
	parts, err := templates.Parts(context.Background(), web.ViewAt(tr, seq).Redraw())
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(parts, func(f templates.Fragment) bool { return f.Target == target })
	if i < 0 {
		t.Fatalf("the page drawn at seq %d has no %s part", seq, target)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(parts[i].HTML))
	if err != nil {
		t.Fatal(err)
	}
	return outer(t, doc.Find("#"+target))
}

// eachLiveUpdate feeds tr's events, as of a running run, one at a time to a view state, and calls
// check with each event, the seq before it, whether its update's parts carry the part whole, and
// the pieces of whole (WholeOf) they carry.
func eachLiveUpdate(t *testing.T, tr traces.Trace, whole string, check func(e traces.Event, from int64, carried bool, pieces []templates.Fragment)) {
	t.Helper()
	run := tr.Run
	run.Status, run.EndedAt, run.Error = traces.StatusRunning, nil, ""
	vs := web.NewViewState(run, tr.Agents)
	for _, e := range tr.Events {
		from := vs.Seq()
		vs.Add(e)
		parts, err := templates.Parts(context.Background(), vs.Update(from))
		if err != nil {
			t.Fatal(err)
		}
		var pieces []templates.Fragment
		for _, f := range parts {
			if templates.WholeOf(f.Target) == whole {
				pieces = append(pieces, f)
			}
		}
		check(e, from, slices.ContainsFunc(parts, func(f templates.Fragment) bool { return f.Target == whole }), pieces)
	}
}
