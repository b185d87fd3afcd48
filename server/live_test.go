package server_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
)

// rowIDs returns the ids of the timeline rows the messages append, in order.
func rowIDs(t testing.TB, msgs []server.LiveMessage) []string {
	t.Helper()
	return rowsMatching(t, msgs, `[id^="ev-"]`)
}

// rowsMatching returns the ids of the timeline rows the messages append that match sel, in order.
func rowsMatching(t testing.TB, msgs []server.LiveMessage, sel string) []string {
	t.Helper()
	var ids []string
	for _, m := range msgs {
		for _, f := range m.Fragments {
			if f.Target != "timeline-rows" {
				continue
			}
			if f.Swap != "append" {
				t.Errorf("timeline rows are swapped by %q, want append", f.Swap)
			}
			doc, err := goquery.NewDocumentFromReader(strings.NewReader("<ul>" + f.HTML + "</ul>"))
			if err != nil {
				t.Fatal(err)
			}
			doc.Find(sel).Each(func(_ int, s *goquery.Selection) { ids = append(ids, s.AttrOr("id", "")) })
		}
	}
	return ids
}

// liveEncoding returns m as encoding/json writes it with HTML left unescaped, as the live socket
// sends it.
func liveEncoding(t testing.TB, m server.LiveMessage) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// readLive reads live messages until until says it has the one it wants; each must be exactly
// a LiveMessage as encoding/json writes it (HTML unescaped), with its fragments list.
func readLive(t testing.TB, conn *websocket.Conn, until func(server.LiveMessage) bool) []server.LiveMessage {
	t.Helper()
	var msgs []server.LiveMessage
	for {
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, data, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("after %d messages: %v", len(msgs), err)
		}
		var m server.LiveMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("live message is not JSON: %v: %s", err, data)
		}
		if m.Fragments == nil {
			t.Fatalf("live message lacks a fragments list: %.300s", data)
		}
		// The feed writes the message in pieces: they must add up to the type's own encoding.
		if want := liveEncoding(t, m); !bytes.Equal(data, want) {
			i := 0
			for i < min(len(data), len(want)) && data[i] == want[i] {
				i++
			}
			t.Fatalf("live message is not server.LiveMessage's encoding: from byte %d\n got %.200s\nwant %.200s", i, data[i:], want[i:])
		}
		msgs = append(msgs, m)
		if until(m) {
			return msgs
		}
	}
}

func TestLivePage(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	rec := ts.addRecording(t, "r-live")
	emitMessages(rec, 2, "first")

	conn := ts.mustDial(t, "/runs/r-live/live?after=0")
	msgs := readLive(t, conn, func(m server.LiveMessage) bool { return m.Seq == 2 })
	all := msgs
	if m := msgs[len(msgs)-1]; m.Status != traces.StatusRunning {
		t.Errorf("status = %q, want running", m.Status)
	}

	emitMessages(rec, 3, "more")
	msgs = readLive(t, conn, func(m server.LiveMessage) bool { return m.Seq == 5 })
	all = append(all, msgs...)
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Seq <= msgs[i-1].Seq {
			t.Errorf("seq went from %d to %d", msgs[i-1].Seq, msgs[i].Seq)
		}
	}

	rec.Finish(traces.StatusFailed, "boom")
	final := readLive(t, conn, func(m server.LiveMessage) bool { return m.Status != traces.StatusRunning })
	if m := final[len(final)-1]; m.Status != traces.StatusFailed || m.Seq != 6 {
		t.Errorf("final message: seq %d status %q, want 6 failed", m.Seq, m.Status)
	}
	// Every event becomes exactly one timeline row across the batches.
	if got, want := rowIDs(t, append(all, final...)), []string{"ev-1", "ev-2", "ev-3", "ev-4", "ev-5", "ev-6"}; !slices.Equal(got, want) {
		t.Errorf("timeline rows appended: %v, want %v", got, want)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := conn.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Errorf("after the final state: %v, want a normal close", err)
	}

	// A page opened after the run ended gets the final state at once.
	late := ts.mustDial(t, "/runs/r-live/live?after=6")
	msgs = readLive(t, late, func(server.LiveMessage) bool { return true })
	if msgs[0].Seq != 6 || msgs[0].Status != traces.StatusFailed {
		t.Errorf("late page: %+v", msgs[0])
	}
	_ = late.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := late.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Errorf("late page: %v, want a normal close", err)
	}

	// A page that claims more than the run has gets its status once, and a normal close.
	ahead := ts.mustDial(t, "/runs/r-live/live?after=99")
	if msgs = readLive(t, ahead, func(server.LiveMessage) bool { return true }); msgs[0].Status != traces.StatusFailed {
		t.Errorf("page ahead of the run: %+v", msgs[0])
	}
	_ = ahead.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := ahead.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Errorf("page ahead of the run: %v, want a normal close", err)
	}
}

// TestLiveMessageCarriesMarkupAsIs checks that the run page's messages carry their HTML's tags as
// they are, not as JSON's \u003c escapes (which made every message a fifth larger), while what a
// run says stays escaped as HTML text: a tag in an agent's message never reaches the page as one.
func TestLiveMessageCarriesMarkupAsIs(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	rec := ts.addRecording(t, "r-markup")
	emitMessages(rec, 1, `<script>alert("x")</script> & more`)

	conn := ts.mustDial(t, "/runs/r-markup/live?after=0")
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, data, err := conn.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	raw := string(data)
	if strings.Contains(raw, `\u003c`) || strings.Contains(raw, `\u0026`) || !strings.Contains(raw, `<li id=\"ev-1\"`) {
		t.Errorf("the message escapes its markup for JSON, or lacks the row: %.300s", raw)
	}
	if strings.Contains(raw, "<script") || !strings.Contains(raw, "&lt;script&gt;") {
		t.Errorf("the agent's text is not escaped as HTML text: %.300s", raw)
	}
	var m server.LiveMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if got := rowsMatching(t, []server.LiveMessage{m}, "#ev-1"); len(got) != 1 {
		t.Errorf("rows decoded from the message: %v, want ev-1", got)
	}
}

// TestLivePagePace: the live socket tells every page the run's pace, at once when it changes;
// the run page shows it, fixed once the run is over, and has no slider for a run not started
// here.
func TestLivePagePace(t *testing.T) {
	runs := make(chan started, 1)
	ts := mustOpenServer(t, server.Config{})
	server.SetRunner(ts.Server, handOver(runs))
	id := ts.createRun(t, `{"flow": "echo", "pace_ms": 100}`)
	st := receive(t, runs)
	emitMessages(st.rec, 1, "hi")

	paceOf := func(m server.LiveMessage) int64 {
		if m.PaceMS == nil {
			t.Fatalf("live message without pace_ms: %+v", m)
		}
		return *m.PaceMS
	}
	conn := ts.mustDial(t, "/runs/"+id+"/live?after=0")
	if m := readLive(t, conn, func(m server.LiveMessage) bool { return m.Seq == 1 }); paceOf(m[len(m)-1]) != 100 {
		t.Errorf("first update: pace %d, want 100", paceOf(m[len(m)-1]))
	}
	if res := ts.do(t, request{method: "POST", path: "/api/runs/" + id + "/pace", body: `{"pace_ms": 300}`}); res.status != 204 {
		t.Fatalf("set pace: %d %s", res.status, res.body)
	}
	// No event arrived: the pace change alone wakes the socket.
	m := readLive(t, conn, func(server.LiveMessage) bool { return true })[0]
	if paceOf(m) != 300 || m.Seq != 1 || len(m.Fragments) != 0 {
		t.Errorf("after the pace change: %+v, want pace 300 at seq 1 and no fragments", m)
	}
	st.rec.Finish(traces.StatusCompleted, "")
	final := readLive(t, conn, func(m server.LiveMessage) bool { return m.Status != traces.StatusRunning })
	if paceOf(final[len(final)-1]) != 300 {
		t.Errorf("final update: pace %d, want 300", paceOf(final[len(final)-1]))
	}

	eventually(t, "the ended run's page shows its pace, fixed", func() bool {
		pace := page(t, ts.do(t, request{path: "/runs/" + id})).Find(`[data-testid="pace"]`)
		_, disabled := pace.Attr("disabled")
		return pace.AttrOr("value", "") == "300" && disabled
	})

	foreign := ts.addRecording(t, "r-elsewhere")
	emitMessages(foreign, 1, "hi")
	if n := page(t, ts.do(t, request{path: "/runs/r-elsewhere"})).Find(`[data-testid="pace"]`).Length(); n != 0 {
		t.Errorf("a run not started here has %d pace sliders, want none: its pace is unknown", n)
	}
	other := ts.mustDial(t, "/runs/r-elsewhere/live?after=0")
	if m := readLive(t, other, func(server.LiveMessage) bool { return true })[0]; m.PaceMS != nil {
		t.Errorf("a run not started here: pace_ms %d, want none", *m.PaceMS)
	}
}

func TestLivePageUnknownRun(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	_, res, err := ts.dial(t, "/runs/r-nothere/live", nil)
	if err == nil || res.status != 404 {
		t.Errorf("dial unknown run: %v, status %d", err, res.status)
	}
}

// TestLivePageGathersEvents: events that arrive within one window reach every page as one update
// that carries all their rows, once each, with the parts and status as of the last of them.
func TestLivePageGathersEvents(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	// Long enough that the burst below surely falls within one window, short enough to wait out.
	server.SetLiveWindow(ts.Server, time.Second)
	rec := ts.addRecording(t, "r-burst")
	emitMessages(rec, 2, "before")

	pages := []*websocket.Conn{ts.mustDial(t, "/runs/r-burst/live?after=0"), ts.mustDial(t, "/runs/r-burst/live?after=0")}
	for _, conn := range pages {
		// The first update comes at once, whatever the window.
		if m := readLive(t, conn, func(server.LiveMessage) bool { return true }); m[0].Seq != 2 {
			t.Fatalf("first update at seq %d, want 2", m[0].Seq)
		}
	}
	// In bursts, each taken in by the run's feed (its events socket has it) before the next: one
	// update per event or burst would show here.
	events := ts.mustDial(t, "/api/runs/r-burst/events?after=2")
	for range 10 {
		emitMessages(rec, 5, "burst")
		readN(t, events, 5)
	}
	rec.Finish(traces.StatusCompleted, "")

	var want []string
	for i := 3; i <= 53; i++ {
		want = append(want, "ev-"+strconv.Itoa(i))
	}
	for i, conn := range pages {
		msgs := readLive(t, conn, func(server.LiveMessage) bool { return true })
		m := msgs[0]
		if m.Seq != 53 || m.Status != traces.StatusCompleted {
			t.Errorf("page %d: update at seq %d, status %q; want all 51 events in one update: seq 53, completed", i, m.Seq, m.Status)
		}
		if got := rowIDs(t, msgs); !slices.Equal(got, want) {
			t.Errorf("page %d: rows %v, want %v", i, got, want)
		}
		if !slices.ContainsFunc(m.Fragments, func(f templates.Fragment) bool { return f.Target != "timeline-rows" }) {
			t.Errorf("page %d: the update has rows but no other part (tree, header): %+v", i, m.Fragments)
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, _, err := conn.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
			t.Errorf("page %d after the burst: %v, want a normal close (nothing left to send)", i, err)
		}
	}
}

// TestLivePageRedrawsAmendedRow: a transfer row a page already shows is sent again, failed, when
// a later error says eino refused that transfer; a page that joins after the error gets it once,
// already failed.
func TestLivePageRedrawsAmendedRow(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	tr := webtest.FailedTransfer()
	rec := traces.NewRecording(traces.Run{ID: "r-amend", Flow: tr.Run.Flow}, tr.Agents)
	if err := ts.Broker.Add(rec); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tr.Events, func(e traces.Event) bool { return e.Kind == traces.KindTransfer })
	for _, e := range tr.Events[:i+1] {
		rec.Emit(e)
	}
	transfer := "ev-" + strconv.Itoa(i+1)

	conn := ts.mustDial(t, "/runs/r-amend/live?after=0")
	before := readLive(t, conn, func(m server.LiveMessage) bool { return m.Seq == int64(i+1) })
	rec.Emit(tr.Events[i+1]) // the error that fails it
	after := readLive(t, conn, func(m server.LiveMessage) bool { return m.Seq == int64(i+2) })
	if got := rowIDs(t, before); slices.Index(got, transfer) < 0 {
		t.Fatalf("rows before the error %v lack the transfer's %s", got, transfer)
	}
	if got, want := rowIDs(t, after), []string{transfer, "ev-" + strconv.Itoa(i+2)}; !slices.Equal(got, want) {
		t.Errorf("rows after the error: %v, want the transfer's again, then the error's: %v", got, want)
	}
	if failed := failedRows(t, after); !slices.Contains(failed, transfer) {
		t.Errorf("rows marked failed after the error: %v, want the transfer's %s among them", failed, transfer)
	}

	late := ts.mustDial(t, "/runs/r-amend/live?after="+strconv.Itoa(i+2))
	rec.Emit(traces.Event{Kind: traces.KindMessage, Agent: "router", Message: &traces.Message{Role: "assistant", Content: "later"}})
	msgs := readLive(t, late, func(m server.LiveMessage) bool { return m.Seq == int64(i+3) })
	if got, want := rowIDs(t, msgs), []string{"ev-" + strconv.Itoa(i+3)}; !slices.Equal(got, want) {
		t.Errorf("a page joined after the error gets rows %v, want only the new one %v", got, want)
	}
}

// failedRows returns the ids of the timeline rows the messages append that are marked failed.
func failedRows(t *testing.T, msgs []server.LiveMessage) []string {
	t.Helper()
	return rowsMatching(t, msgs, `[id^="ev-"][data-failed="true"]`)
}

// seqData returns the bars and arrows of the seq-data fragments of msgs, by id, the later in
// place of the earlier, as the page takes them in.
func seqData(t *testing.T, frags []templates.Fragment) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, f := range frags {
		if f.Target != "seq-data" {
			continue
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(f.HTML))
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Full         bool
			Bars, Arrows []json.RawMessage
		}
		if err := json.Unmarshal([]byte(doc.Find("#seq-data").AttrOr("data-json", "")), &s); err != nil {
			t.Fatalf("seq-data: %v", err)
		}
		if s.Full {
			clear(got)
		}
		for kind, items := range map[string][]json.RawMessage{"bar": s.Bars, "arrow": s.Arrows} {
			for _, it := range items {
				var row []any
				if err := json.Unmarshal(it, &row); err != nil || len(row) == 0 {
					t.Fatalf("seq-data %s %s: %v", kind, it, err)
				}
				got[kind+strconv.FormatFloat(row[0].(float64), 'f', -1, 64)] = string(it)
			}
		}
	}
	return got
}

// TestLivePageSequence: a page far behind, whose rows come in several messages, ends with the
// sequence view of the run from the deltas alone: every message that moves it on carries what
// its events changed.
func TestLivePageSequence(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	rec := ts.addRecording(t, "r-seq")
	big := strings.Repeat("x", 100<<10) // rows of about 100 KiB: several messages' worth
	for i := range 6 {
		id := "c" + strconv.Itoa(i)
		rec.Emit(traces.Event{Kind: traces.KindToolStarted, Agent: "echo_agent", Tool: &traces.ToolCall{Name: "echo", CallID: id}})
		rec.Emit(traces.Event{Kind: traces.KindToolFinished, Agent: "echo_agent", Tool: &traces.ToolCall{Name: "echo", CallID: id, Result: big}})
	}
	rec.Finish(traces.StatusCompleted, "")

	conn := ts.mustDial(t, "/runs/r-seq/live?after=0")
	msgs := readLive(t, conn, func(m server.LiveMessage) bool { return m.Status == traces.StatusCompleted })
	var frags []templates.Fragment
	withRows := 0
	for _, m := range msgs {
		frags = append(frags, m.Fragments...)
		if slices.ContainsFunc(m.Fragments, func(f templates.Fragment) bool { return f.Target == "timeline-rows" }) {
			withRows++
		}
	}
	if withRows < 2 {
		t.Fatalf("the rows came in %d message(s): too few to test a page fed in parts", withRows)
	}
	res := ts.do(t, request{path: "/runs/r-seq/at/" + strconv.FormatInt(msgs[len(msgs)-1].Seq, 10)})
	var step struct{ Fragments []templates.Fragment }
	if err := json.Unmarshal(res.body, &step); err != nil {
		t.Fatal(err)
	}
	got, want := seqData(t, frags), seqData(t, step.Fragments)
	if len(want) != 7 { // echo_agent's visit and its six tool calls
		t.Fatalf("the whole view has %d bars and arrows, want 7: %v", len(want), want)
	}
	if !maps.Equal(got, want) {
		t.Errorf("the live deltas add up to\n%v\nwant the whole view\n%v", got, want)
	}
}

// TestLivePageNodeAlone: an event that changes only an agent's node (a model call) brings that
// node, not the tree; a later one that moves the tree brings the tree, and a page that missed
// both then gets the tree with no older node after it to undo it.
func TestLivePageNodeAlone(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	rec := ts.addRecording(t, "r-node")
	emitMessages(rec, 1, "first")
	page := ts.mustDial(t, "/runs/r-node/live?after=0")
	readLive(t, page, func(m server.LiveMessage) bool { return m.Seq == 1 })

	targets := func(m server.LiveMessage) []string {
		var out []string
		for _, f := range m.Fragments {
			if f.Target == "graph" || strings.HasPrefix(f.Target, "node-") {
				out = append(out, f.Target)
			}
		}
		return out
	}
	rec.Emit(traces.Event{Kind: traces.KindModelFinished, Agent: "echo_agent", Model: &traces.ModelCall{ID: "m1", Usage: &traces.Usage{TotalTokens: 40}}})
	msgs := readLive(t, page, func(m server.LiveMessage) bool { return m.Seq == 2 })
	if got := targets(msgs[len(msgs)-1]); !slices.Equal(got, []string{"node-echo_agent"}) {
		t.Errorf("model.finished: tree parts %v, want its node alone", got)
	}
	// The error fails the agent: its node changes again, and the tree with it (an error may end
	// transfers and frames).
	rec.Emit(traces.Event{Kind: traces.KindError, Agent: "echo_agent", Error: &traces.ErrorDetail{Message: "model unreachable"}})
	msgs = readLive(t, page, func(m server.LiveMessage) bool { return m.Seq == 3 })
	if got := targets(msgs[len(msgs)-1]); !slices.Equal(got, []string{"graph"}) {
		t.Errorf("error: tree parts %v, want the tree alone", got)
	}

	late := ts.mustDial(t, "/runs/r-node/live?after=1")
	m := readLive(t, late, func(m server.LiveMessage) bool { return m.Seq == 3 })[0]
	var tree *goquery.Document
	for _, f := range m.Fragments {
		switch {
		case f.Target == "graph":
			var err error
			if tree, err = goquery.NewDocumentFromReader(strings.NewReader(f.HTML)); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(f.Target, "node-") && tree != nil:
			tree.Find(`[id="` + f.Target + `"]`).ReplaceWithHtml(f.HTML)
		}
	}
	if tree == nil {
		t.Fatalf("a page behind the tree's change gets no tree: %v", targets(m))
	}
	if s := tree.Find(`[data-agent="echo_agent"]`).AttrOr("data-state", ""); s != "failed" {
		t.Errorf("a page behind both changes shows echo_agent %q after applying %v, want failed", s, targets(m))
	}
}

// TestBusyPageStaysConnected: a page that reads steadily but is kept busy catching up for longer
// than the server waits for a pong (the server never idles to ping in between) still gets every
// update and a normal close: the server pings between messages when one is due. It was cut (1006)
// once the pong wait ran out, as the page of a fast 100k-event run was after a minute.
func TestBusyPageStaysConnected(t *testing.T) {
	// The pong wait is longer than a send waits for the page to drain what the connection holds
	// (a few MB, at one message a pause), as the server's 60 s are longer than its write timeout.
	// 2 s, not less: a machine loaded by the rest of the suite may take that long to answer a ping.
	const n, pongWait, pause = 4000, 2 * time.Second, 50 * time.Millisecond
	ts := mustOpenServer(t, server.Config{})
	server.SetPongWait(ts.Server, pongWait)
	rec := ts.addRecording(t, "r-busy")
	// About 75 messages of 256 KiB: at one message a pause, well over the pong wait of reading.
	emitMessages(rec, n, strings.Repeat("word ", 800))
	rec.Finish(traces.StatusCompleted, "")

	page := ts.mustDial(t, "/runs/r-busy/live?after=0")
	start := time.Now()
	var last int64
	for {
		_ = page.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, data, err := page.ReadMessage()
		var closed *websocket.CloseError
		if errors.As(err, &closed) && closed.Code == websocket.CloseNormalClosure {
			break
		}
		if err != nil {
			t.Fatalf("after seq %d, %v into the run: %v; want every update, then a normal close", last, time.Since(start), err)
		}
		// Only the seq, which leads: decoding 256 KiB would slow the page, under -race, past what
		// the pong wait allows a send to wait for it.
		if _, err := fmt.Sscanf(string(data[:min(len(data), 32)]), `{"seq":%d`, &last); err != nil {
			t.Fatalf("not a live update: %.100s", data)
		}
		time.Sleep(pause) // a page busy drawing what it got
	}
	if last != n+1 {
		t.Errorf("the page's last update is at seq %d, want %d (run.finished)", last, n+1)
	}
	if took := time.Since(start); took < 3*pongWait/2 {
		t.Fatalf("the page read for %v only, not well over the pong wait: this run no longer keeps it busy", took)
	}
}

// TestLivePageOfAFastStoredRun: a page that joins a run stored in a database, which ended before
// the store committed its events, follows it to its last event: the run's own status (already
// over) is not what the page is told while the events it has stop short of run.finished.
func TestLivePageOfAFastStoredRun(t *testing.T) {
	for round := range 20 {
		broker, _, _ := storedBroker(t, filepath.Join(t.TempDir(), "baton.db"))
		ts := mustOpenServer(t, server.Config{Broker: broker, Flows: []agents.Flow{catalogueFlow(t, "supervisor")}})
		server.SetRunner(ts.Server, agents.RunFlow)
		id := ts.createRun(t, `{"flow":"supervisor","pace_ms":0}`)
		msgs := readLive(t, ts.mustDial(t, "/runs/"+id+"/live?after=0"), func(m server.LiveMessage) bool { return m.Status != traces.StatusRunning })
		last, want := msgs[len(msgs)-1], ts.ended(t, id)
		if n := int64(len(want.Events)); last.Status != traces.StatusCompleted || last.Seq != n || int64(len(rowIDs(t, msgs))) != n {
			t.Fatalf("round %d: the page was told %s at #%d with %d rows, want completed at #%d with every row", round, last.Status, last.Seq, len(rowIDs(t, msgs)), n)
		}
	}
}
