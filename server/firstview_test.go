package server_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// TestImportedRunPageMadeOnce: a large run's page is made once it is imported, from the events in
// hand, and kept; its first view is then served as kept, with no feed taking the run in again
// (once the feed the import left for the page's next requests has gone), and what is kept is
// what a feed reading the recording makes.
func TestImportedRunPageMadeOnce(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	tr, _ := traces.EndImported(webtest.Large(30_000))
	last := tr.Events[len(tr.Events)-1].Seq
	ts.importRun(t, tr)
	server.SettleImports(ts.Server)
	rec, err := ts.Broker.Get(tr.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	kept, ok := server.KeptFirstView(ts.Server, rec)
	if !ok {
		t.Fatal("the imported run's page is not kept")
	}
	if n := server.FeedsHeld(ts.Server); n != 0 { // the import's left for the page's next requests is let go
		t.Fatalf("%d feeds held once settled; want none", n)
	}
	// Pages at once share the kept view: drawing it must not change it.
	pages := make([]response, 3)
	var wg sync.WaitGroup
	for i := range pages {
		wg.Go(func() { pages[i] = ts.do(t, request{path: "/runs/" + tr.Run.ID}) })
	}
	wg.Wait()
	newest := `id="ev-` + strconv.FormatInt(last, 10) + `"`
	for _, res := range pages {
		if res.status != 200 || !strings.Contains(string(res.body), newest) || string(res.body) != string(pages[0].body) {
			t.Fatalf("the run's page: %d, its newest row present: %v, as the others: %v", res.status,
				strings.Contains(string(res.body), newest), string(res.body) == string(pages[0].body))
		}
	}
	if n := server.FeedsHeld(ts.Server); n != 0 {
		t.Fatalf("the page made %d feeds; want it served as kept", n)
	}
	if want := server.FeedPage(ts.Server, rec); !reflect.DeepEqual(kept, want) {
		t.Fatalf("the kept page differs from the one a feed makes: stats %+v against %+v; %d rows against %d",
			kept.Stats, want.Stats, len(kept.Timeline), len(want.Timeline))
	}
}

// TestFinishedRunPageKept: the feed of a run that ends while a page follows it makes and keeps
// the run's page; the run's next first view, once that feed has gone, is served as kept, as the
// run ended.
func TestFinishedRunPageKept(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	server.SetFeedLinger(ts.Server, 0) // the feed goes with its last user
	rec := ts.addRecording(t, "r-followed")
	emitMessages(rec, 3, "hi")
	conn, res, err := ts.dial(t, "/runs/r-followed/live?after=0", nil)
	if err != nil {
		t.Fatalf("live socket: %v %d %s", err, res.status, res.body)
	}
	defer conn.Close()
	rec.Emit(traces.Event{Kind: traces.KindMessage, Agent: "echo_agent", Message: &traces.Message{Role: "assistant", Content: "the last word"}})
	rec.Finish(traces.StatusCompleted, "")
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for { // until the server closes it: the page has the run to its end
		if _, _, err := conn.ReadMessage(); err != nil {
			if !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
				t.Fatalf("live socket ended with %v; want a normal close at the run's end", err)
			}
			break
		}
	}
	kept, ok := server.KeptFirstView(ts.Server, rec)
	if !ok || kept.Stats.Status != traces.StatusCompleted || kept.Stats.Events != int(rec.Len()) {
		t.Fatalf("kept page: %v, status %q, %d events; want the ended run's, %d events", ok, kept.Stats.Status, kept.Stats.Events, rec.Len())
	}
	deadline := time.Now().Add(10 * time.Second)
	for server.FeedsHeld(ts.Server) != 0 { // the socket's handler lets it go as it returns
		if time.Now().After(deadline) {
			t.Fatal("the run's feed is still held after its socket closed")
		}
		time.Sleep(time.Millisecond)
	}
	made := server.FeedsMade(ts.Server)
	page := ts.do(t, request{path: "/runs/r-followed"})
	if page.status != 200 || !strings.Contains(string(page.body), "the last word") {
		t.Fatalf("the run's page: %d, with its last message: %v", page.status, strings.Contains(string(page.body), "the last word"))
	}
	if n := server.FeedsMade(ts.Server) - made; n != 0 {
		t.Fatalf("the page made %d feeds; want it served as kept", n)
	}
}

// TestReplacedIdleFeedCollected: the feed a finished run's page leaves for its next requests,
// once another run's takes its place, is let go at once, not held until its linger ends: at a
// million events each is a gigabyte.
func TestReplacedIdleFeedCollected(t *testing.T) {
	ts := mustOpenServer(t, server.Config{}) // a linger of 20 s
	finished := func(id string) *traces.Recording {
		rec := ts.addRecording(t, id)
		emitMessages(rec, 3, "hi")
		rec.Finish(traces.StatusCompleted, "")
		return rec
	}
	server.AcquireFeed(ts.Server, finished("r-first"))() // as a page: acquired, released, idle
	collected := server.IdleFeed(ts.Server)
	if collected() {
		t.Fatal("the idle feed is gone before another took its place")
	}
	server.AcquireFeed(ts.Server, finished("r-second"))()
	deadline := time.Now().Add(5 * time.Second)
	for !collected() {
		if time.Now().After(deadline) {
			t.Fatal("the first run's feed is still alive 5 s after the second's took its place")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStoredRunPageReadBack: a large run that a server restarted on its store reads back makes
// its page from the events it read (warmRun), which is the page a feed reading the recording
// makes, and keeps it.
func TestStoredRunPageReadBack(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	tr, _ := traces.EndImported(webtest.Large(30_000))
	last := tr.Events[len(tr.Events)-1].Seq
	broker, _, closeStore := storedBroker(t, db)
	first := mustOpenServer(t, server.Config{Broker: broker})
	first.importRun(t, tr)
	server.SettleImports(first.Server)
	closeStore()

	broker, _, _ = storedBroker(t, db)
	ts := mustOpenServer(t, server.Config{Broker: broker})
	res := ts.do(t, request{path: "/runs/" + tr.Run.ID})
	if newest := `id="ev-` + strconv.FormatInt(last, 10) + `"`; res.status != 200 || !strings.Contains(string(res.body), newest) {
		t.Fatalf("the read-back run's page: %d, its newest row present: %v", res.status, strings.Contains(string(res.body), newest))
	}
	server.SettleImports(ts.Server)
	rec, err := ts.Broker.Get(tr.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	kept, ok := server.KeptFirstView(ts.Server, rec)
	if !ok {
		t.Fatal("the read-back run's page is not kept")
	}
	if want := server.FeedPage(ts.Server, rec); !reflect.DeepEqual(kept, want) {
		t.Fatalf("the kept page differs from the one a feed reading the recording makes: stats %+v against %+v; %d rows against %d",
			kept.Stats, want.Stats, len(kept.Timeline), len(want.Timeline))
	}
	// Its findings and story, made beside the view state from the events read, are those of the
	// recording, linted anew.
	keptDigest, fresh, ok := server.KeptDigest(ts.Server, rec)
	if !ok {
		t.Fatal("the read-back run's findings and story are not kept")
	}
	if !reflect.DeepEqual(keptDigest, fresh) {
		t.Fatalf("the kept findings and story differ from those of the recording: %+v against %+v", keptDigest[0], fresh[0])
	}
}

// importedLargeRun serves a large run, imported, its page made, whose feed lingers until
// endLingers is called.
func importedLargeRun(t *testing.T) (ts *testServer, tr traces.Trace, endLingers func()) {
	t.Helper()
	ts = mustOpenServer(t, server.Config{})
	endLingers = server.FakeLingers(ts.Server)
	tr, _ = traces.EndImported(webtest.Large(30_000))
	ts.importRun(t, tr)
	server.WaitPagesMade(ts.Server)
	return ts, tr, endLingers
}

// TestKeptPageTabsAfterLinger: the tabs of a large run's kept page (its Sequence data, its
// Session histories), first shown once the feed that made the page has gone (its linger, 20 s,
// is over), are served as they were while it stayed, without taking the run in again; gzipped
// to a client that takes gzip, plain to one that does not.
func TestKeptPageTabsAfterLinger(t *testing.T) {
	ts, tr, endLingers := importedLargeRun(t)
	// The import's feed found its events' input references beside its view state: those the
	// events socket sends, as one by one.
	if n, same := server.IdleFeedRefs(ts.Server); n != len(tr.Events) || !same {
		t.Fatalf("the import's feed holds %d events (want %d), their input references as found one by one: %v", n, len(tr.Events), same)
	}
	page := "/runs/" + tr.Run.ID
	tabs := []string{page + "/sequence", page + "/histories"}
	// While the import's feed stays, the tabs are made from it.
	want := map[string]string{}
	for _, path := range tabs {
		res := ts.do(t, request{path: path, header: map[string]string{"Accept-Encoding": "identity"}})
		if res.status != 200 || len(res.body) < 1000 {
			t.Fatalf("GET %s while the feed stays: %d, %d bytes", path, res.status, len(res.body))
		}
		want[path] = string(res.body)
	}
	made := server.FeedsMade(ts.Server)
	endLingers()
	if n := server.FeedsHeld(ts.Server); n != 0 {
		t.Fatalf("%d feeds held once the linger is over; want none", n)
	}
	if res := ts.do(t, request{path: page}); res.status != 200 {
		t.Fatalf("the run's page: %d", res.status)
	}
	for _, accept := range []string{"identity", "gzip"} {
		for _, path := range tabs {
			// Go's client unzips what it asked for itself, not what a request asks for.
			res := ts.do(t, request{path: path, header: map[string]string{"Accept-Encoding": accept}})
			body := res.body
			if enc := res.header.Get("Content-Encoding"); (enc == "gzip") != (accept == "gzip") {
				t.Fatalf("GET %s, accepting %s: Content-Encoding %q", path, accept, enc)
			} else if enc == "gzip" {
				body = gunzip(t, body)
			}
			if res.status != 200 || string(body) != want[path] {
				t.Fatalf("GET %s, accepting %s, after the linger: %d, %d bytes, the same as before: %v",
					path, accept, res.status, len(body), string(body) == want[path])
			}
		}
		if n := server.FeedsMade(ts.Server) - made; n != 0 {
			t.Fatalf("the kept page and its tabs, after the linger, made %d feeds; want none", n)
		}
	}
}

// TestKeptPageRowsAfterLinger: the timeline's rows of a large run's kept page, asked for once the
// feed that made the page has gone (its linger is over) — older rows scrolled to, forward and
// backward, the rows that pass an agent and kind filter, failed rows, searches with their counts
// — are exactly those the feed answered while it stayed, and no feed takes the run in again.
func TestKeptPageRowsAfterLinger(t *testing.T) {
	ts, tr, endLingers := importedLargeRun(t)
	rows := "/runs/" + tr.Run.ID + "/rows?"
	queries := []string{
		"before=15000&dir=backward&limit=400",
		"after=100&before=900&dir=forward&limit=50",
		"after=29990&dir=forward",
		"agent=math_agent&kind=tool,session&dir=backward&limit=400&count=1",
		"agent=math_agent&kind=tool&before=2000&dir=backward&limit=30",
		"failed=1&dir=backward&limit=400&count=1",
		"kind=message&dir=forward&limit=20&count=1",
		"q=Result+123&dir=backward&limit=400&count=1",
		"q=result+123&before=20000&dir=backward&limit=5",
		"q=research&agent=supervisor&dir=forward&limit=400&count=1",
		"q=no+such+words&dir=backward&limit=400&count=1",
	}
	// While the import's feed stays, it answers.
	want := map[string]string{}
	for _, q := range queries {
		res := ts.do(t, request{path: rows + q})
		if res.status != 200 || !strings.Contains(string(res.body), `"head":`) {
			t.Fatalf("GET %s while the feed stays: %d %.200s", q, res.status, res.body)
		}
		want[q] = string(res.body)
	}
	if !strings.Contains(want[queries[0]], `id=\"ev-14999\"`) || !strings.Contains(want[queries[7]], `"matches":`) {
		t.Fatalf("the feed's answers lack the rows asked for: %.300s", want[queries[0]])
	}
	made := server.FeedsMade(ts.Server)
	endLingers()
	if n := server.FeedsHeld(ts.Server); n != 0 {
		t.Fatalf("%d feeds held once the linger is over; want none", n)
	}
	for range 2 { // the second time, a search's matches as kept by the first
		for _, q := range queries {
			res := ts.do(t, request{path: rows + q})
			if res.status != 200 || string(res.body) != want[q] {
				t.Fatalf("GET %s after the linger: %d\n%.300s\nwant, as the feed answered:\n%.300s", q, res.status, res.body, want[q])
			}
		}
	}
	if n := server.FeedsMade(ts.Server) - made; n != 0 {
		t.Fatalf("the rows asked for after the linger made %d feeds; want none", n)
	}
}

func gunzip(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
