package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// importedRunPage imports webtest.Large(events) into a server of its own and returns the server,
// the trace file, its number of events, the run's id and its page.
func importedRunPage(t *testing.T, events int) (ts *testServer, file []byte, n int, id string, doc *goquery.Document) {
	t.Helper()
	file, n = largeTrace(t, events)
	ts = mustOpenServer(t, server.Config{MaxIngestBody: int64(len(file)) + 1})
	id = ts.importBig(t, file)
	page := ts.do(t, request{path: "/runs/" + id})
	if page.status != http.StatusOK {
		t.Fatalf("page: %d", page.status)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(page.body)))
	if err != nil {
		t.Fatal(err)
	}
	return ts, file, n, id, doc
}

// deferredPart GETs the route a page named for a part it left out, which must answer HTML.
func (ts *testServer) deferredPart(t *testing.T, src string) response {
	t.Helper()
	res := ts.do(t, request{path: src})
	if res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET %s: %d %s", src, res.status, res.header.Get("Content-Type"))
	}
	return res
}

// TestLargeRunPageDefersSequence: the page of a finished run of more than 20,000 events leaves
// the Sequence view's data out, naming where its script fetches it, and that route answers it
// whole, as of the run's last event; a smaller run's page carries it.
func TestLargeRunPageDefersSequence(t *testing.T) {
	for _, c := range []struct {
		events int
		defers bool
	}{{1_000, false}, {25_000, true}} {
		ts, _, n, id, doc := importedRunPage(t, c.events)
		slot := doc.Find("#seq-data")
		src, deferred := slot.Attr("data-src")
		if deferred != c.defers || slot.AttrOr("data-json", "") != "" == c.defers {
			t.Fatalf("%d events: #seq-data has data-src %v, data-json %d bytes; want it deferred: %v", n, deferred, len(slot.AttrOr("data-json", "")), c.defers)
		}
		if !deferred {
			continue
		}
		if src != "/runs/"+id+"/sequence" {
			t.Errorf("data-src %q", src)
		}
		res := ts.deferredPart(t, src)
		got, err := goquery.NewDocumentFromReader(strings.NewReader(string(res.body)))
		if err != nil {
			t.Fatal(err)
		}
		var seq struct {
			Full bool              `json:"full"`
			Head int               `json:"head"`
			Bars []json.RawMessage `json:"bars"`
		}
		if err := json.Unmarshal([]byte(got.Find("#seq-data").AttrOr("data-json", "")), &seq); err != nil {
			t.Fatalf("the sequence data: %v", err)
		}
		if !seq.Full || seq.Head != n || len(seq.Bars) < n/10 {
			t.Errorf("the sequence data: full %v, head %d, %d bars; want whole, as of %d, with a bar for each visit and call", seq.Full, seq.Head, len(seq.Bars), n)
		}
	}
}

// TestLargeRunPageDefersHistories: the page of a finished run of more than 20,000 events leaves
// the session panel's histories (what each agent was fed, by origin) out, naming where its script
// fetches them, and that route answers them as the whole view of the run has them; a smaller
// run's page carries them.
func TestLargeRunPageDefersHistories(t *testing.T) {
	for _, c := range []struct {
		events int
		defers bool
	}{{1_000, false}, {25_000, true}} {
		ts, file, n, id, doc := importedRunPage(t, c.events)
		slot := doc.Find("#session-histories")
		src, deferred := slot.Attr("data-src")
		if sections := slot.Find("section.history").Length(); deferred != c.defers || (sections == 0) != c.defers {
			t.Fatalf("%d events: #session-histories has data-src %v, %d sections; want it deferred: %v", n, deferred, sections, c.defers)
		}
		if !deferred {
			continue
		}
		if src != "/runs/"+id+"/histories" {
			t.Errorf("data-src %q", src)
		}
		res := ts.deferredPart(t, src)
		tr, err := traces.Unmarshal(file)
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		if err := templates.HistoriesHTML(web.NewView(tr).Session.Histories).Render(context.Background(), &want); err != nil {
			t.Fatal(err)
		}
		if got := string(res.body); got != want.String() {
			t.Errorf("GET %s: %d bytes, not the %d of the whole view's histories:\n%.500s\nwant\n%.500s", src, len(got), want.Len(), got, want.String())
		}
		if !strings.Contains(want.String(), `data-testid="session-history-supervisor"`) {
			t.Errorf("the whole view's histories have no supervisor: %.300s", want.String())
		}
	}
}

// TestFinishedRunFeedLingers: the feed of a finished run stays a while after its page released
// it, for the requests the page makes next (each would otherwise read every event again), and
// only the newest such feed stays; it goes once the time is up. The feed of a run that goes on
// goes with its last viewer (TestLongRunFeedKeepsTheNewest and the live tests).
func TestFinishedRunFeedLingers(t *testing.T) {
	file, _ := largeTrace(t, 200)
	ts := mustOpenServer(t, server.Config{MaxIngestBody: int64(len(file)) + 1})
	server.SetFeedLinger(ts.Server, time.Hour)
	held := func(id string) bool {
		rec, err := ts.Broker.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		_, _, ok := server.FeedCached(ts.Server, rec)
		return ok
	}
	view := func(id string) {
		if res := ts.do(t, request{path: "/runs/" + id}); res.status != http.StatusOK {
			t.Fatalf("page %s: %d", id, res.status)
		}
	}
	first, second := ts.importBig(t, file), ts.importBig(t, file)
	view(first)
	if !held(first) {
		t.Fatal("the finished run's feed went with its page")
	}
	view(second)
	if held(first) || !held(second) {
		t.Fatalf("after a second run's page, the feeds held: first %v, second %v; want only the second's", held(first), held(second))
	}
	server.SetFeedLinger(ts.Server, time.Millisecond)
	view(first)
	for deadline := time.Now().Add(10 * time.Second); held(first); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the finished run's feed stays past its time")
		}
	}
}

// TestLingeringFeedTakesInAResumedRun: the kept feed of a run that ended interrupted, resumed
// and ended again while no one viewed it, gives the next viewer the resumed part, not the first
// end (a replica following another's run sees it so: TestAResumedRunGoesOnAtAnotherServer).
func TestLingeringFeedTakesInAResumedRun(t *testing.T) {
	ts := mustOpenServer(t, server.Config{IngestTimeout: 50 * time.Millisecond})
	server.SetFeedLinger(ts.Server, time.Hour)
	id := ts.startIngest(t, `{}`, nil, http.StatusCreated).ID
	ts.postEvents(t, id, nil, 3, appEvents(1, traces.KindRunStarted, traces.KindMessage)...)
	rec := ts.recording(t, id)
	receive(t, rec.Done()) // ended interrupted: the app went quiet
	first, _ := readEvents(t, ts.mustDial(t, "/api/runs/"+id+"/events"))
	if _, _, ok := server.FeedCached(ts.Server, rec); !ok {
		t.Fatal("the interrupted run's feed went with its viewer")
	}
	ts.postEvents(t, id, nil, 6, appEvents(3, traces.KindMessage, traces.KindMessage, traces.KindRunFinished)...)
	receive(t, rec.Done())
	rest, _ := readEvents(t, ts.mustDial(t, "/api/runs/"+id+"/events?after="+strconv.Itoa(len(first))))
	if got, want := len(first)+len(rest), int(rec.Len()); got != want || rest[len(rest)-1].Run.Status != traces.StatusCompleted {
		t.Fatalf("the viewers read %d then %d events; want the run's %d, the last its completed end", len(first), len(rest), want)
	}
}
