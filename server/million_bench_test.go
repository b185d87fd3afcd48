package server_test

import (
	"bytes"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// BenchmarkLargeRun: issue 23's "ten times larger" goals, on a supervisor-shaped run
// (webtest.Large: a supervisor handing work to two agents by model-chosen and deterministic
// transfers, each turn a model call, a tool call and a session write) of 100k and 1M events,
// each way a whole run goes in or out of the server:
//
//   - import: POST /api/traces of its trace file, into memory / into SQLite (as `baton serve`);
//     kept-B/event is the live heap the imported run holds, after a collection
//   - page: GET /runs/:id (its newest rows only), the server's part of opening it, asked for once
//     the import has answered and the forced collection below has run, while the page the
//     import leaves to be made (warmRun) may still be under way: the page waits for it
//   - page/readback: the same page, cold, by a server started on the SQLite store the run was
//     imported into by another (as after a restart)
//   - inspector/event, inspector/agent: GET /runs/:id/inspector?seq=N (an event in the middle
//     of the run) and ?agent=supervisor, a click in the page once it is there
//   - export: GET /api/runs/:id/trace?download=1, read by the client as it arrives
//   - rows/older, rows/filter, rows/search, rows/search/older: GET /runs/:id/rows of the run's
//     page once its feed has gone (after its linger): older rows scrolled to, the newest rows
//     that pass an agent and kind filter, and a search, with their counts, then the search's
//     older rows
//
// Each reports seconds, the process's CPU seconds (every goroutine's, the collector's too: what
// the machine's other load moves less), and the peak live heap above the start, per event. One invocation per
// size and way, repeated and interleaved by -count:
//
//	go test ./server -run '^$' -bench 'LargeRun/events=1000000' -benchtime 1x -count 3
func BenchmarkLargeRun(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run("events="+strconv.Itoa(n), func(b *testing.B) {
			file, events := largeTrace(b, n)
			b.Logf("%d events, %d bytes of trace (%.0f an event)", events, len(file), float64(len(file))/float64(events))
			perEvent := func(b *testing.B, run func()) {
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				peak := watchHeap()
				stopProfile := profileLoop(b)
				t0, cpu := time.Now(), cpuTime()
				for b.Loop() {
					run()
				}
				took, cpu := time.Since(t0), cpuTime()-cpu
				stopProfile()
				top := peak()
				b.ReportMetric(took.Seconds()/float64(b.N), "s/op")
				b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
				b.ReportMetric(float64(top-min(top, before.HeapAlloc))/float64(events), "peak-B/event")
			}
			for _, stored := range []bool{false, true} {
				name := "import/memory"
				if stored {
					name = "import/sqlite"
				}
				b.Run(name, func(b *testing.B) {
					cfg := server.Config{MaxIngestBody: int64(len(file)) + 1}
					var closeStore func()
					if stored {
						cfg.Broker, _, closeStore = storedBroker(b, filepath.Join(b.TempDir(), "baton.db"))
					}
					ts := mustOpenServer(b, cfg)
					runtime.GC()
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					perEvent(b, func() { ts.importBig(b, file) })
					server.SettleImports(ts.Server) // a large run's page is made beside its import
					if closeStore != nil {
						closeStore() // waits for the store's last write
					}
					runtime.GC()
					runtime.ReadMemStats(&after)
					b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(events)/float64(b.N), "kept-B/event")
				})
			}
			ts := mustOpenServer(b, server.Config{MaxIngestBody: int64(len(file)) + 1})
			id := ts.importBig(b, file)
			b.Run("page", func(b *testing.B) {
				var size int64
				perEvent(b, func() { size = ts.drain(b, "/runs/"+id) })
				b.ReportMetric(float64(size), "html-B")
			})
			// inspector: a click on an event in the middle of the run, and on its root agent: the
			// inspector's panel, asked for once the page is there.
			b.Run("inspector/event", func(b *testing.B) {
				var size int64
				perEvent(b, func() { size = ts.drain(b, "/runs/"+id+"/inspector?seq="+strconv.Itoa(events/2)) })
				b.ReportMetric(float64(size), "html-B")
			})
			b.Run("inspector/agent", func(b *testing.B) {
				var size int64
				perEvent(b, func() { size = ts.drain(b, "/runs/"+id+"/inspector?agent=supervisor") })
				b.ReportMetric(float64(size), "html-B")
			})
			// page/readback: the page's first view by a server started on the SQLite store the run
			// was imported into by another: nothing of it is kept in memory, so the page reads the
			// run back and builds its view state, cold (as after a restart). The feed the
			// benchmarks above left idle is let go first: 20 s after its last use it kept its tabs
			// (keepTabs, a third of a second of CPU at 1M events), within the read-back's time
			// when the import below took long enough (on a loaded machine).
			server.SettleImports(ts.Server)
			db := filepath.Join(b.TempDir(), "baton.db")
			broker, _, closeStore := storedBroker(b, db)
			first := mustOpenServer(b, server.Config{Broker: broker, MaxIngestBody: int64(len(file)) + 1})
			stored := first.importBig(b, file)
			server.SettleImports(first.Server)
			closeStore()
			b.Run("page/readback", func(b *testing.B) {
				var size int64
				perEvent(b, func() {
					broker, _, _ := storedBroker(b, db) // closed at the end, after its server
					again := mustOpenServer(b, server.Config{Broker: broker})
					size = again.drain(b, "/runs/"+stored)
				})
				b.ReportMetric(float64(size), "html-B")
			})
			b.Run("export", func(b *testing.B) {
				var size int64
				perEvent(b, func() { size = ts.drain(b, "/api/runs/"+id+"/trace?download=1") })
				b.ReportMetric(float64(size)/float64(events), "out-B/event")
			})
			// rows/*: the timeline's requests of a page that outlived its run's feed (its linger, 20 s,
			// is over: here none, so that each request meets the run with no feed): older rows
			// scrolled to, the newest rows that pass filters and a search, each with its count.
			after := mustOpenServer(b, server.Config{MaxIngestBody: int64(len(file)) + 1})
			server.SetFeedLinger(after.Server, 0)
			kept := after.importBig(b, file)
			server.SettleImports(after.Server)
			keptRec, err := after.Broker.Get(kept)
			if err != nil {
				b.Fatal(err)
			}
			for _, q := range []struct{ name, query string }{
				{"rows/older", "before=" + strconv.Itoa(events/2) + "&dir=backward&limit=400"},
				{"rows/filter", "agent=math_agent&kind=tool&dir=backward&limit=400&count=1"},
				{"rows/search", "q=result+4242&dir=backward&limit=400&count=1"},
				// the same search's older rows, scrolled to next
				{"rows/search/older", "q=result+4242&before=" + strconv.Itoa(events/2) + "&dir=backward&limit=400"},
			} {
				b.Run(q.name, func(b *testing.B) {
					perEvent(b, func() { after.drain(b, "/runs/"+kept+"/rows?"+q.query) })
					// What the page keeps of its rows, past its feed (with a search's matches).
					if size, ok := server.KeptRowsSize(after.Server, keptRec); ok {
						b.ReportMetric(float64(size)/float64(events), "kept-rows-B/event")
					}
				})
			}
		})
	}
}

// loopProfile names the file a CPU profile of BenchmarkLargeRun's measured loops is written to
// (the last one run): -test.cpuprofile also covers the imports and the trace file each sets up.
var loopProfile = flag.String("largerun.cpuprofile", "", "write a CPU profile of BenchmarkLargeRun's measured loop to `file`")

// profileLoop starts the CPU profile -largerun.cpuprofile asks for, if any, and returns what
// stops it.
func profileLoop(b *testing.B) (stop func()) {
	if *loopProfile == "" {
		return func() {}
	}
	f, err := os.Create(*loopProfile)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// largeTrace is the trace file of webtest.Large(n), ended, and its number of events.
func largeTrace(tb testing.TB, n int) ([]byte, int) {
	tb.Helper()
	tr := webtest.Large(n)
	tr, _ = traces.EndImported(tr)
	data, err := traces.Marshal(tr)
	if err != nil {
		tb.Fatal(err)
	}
	return data, len(tr.Events)
}

// importBig posts file to /api/traces and returns the run's id.
func (ts *testServer) importBig(tb testing.TB, file []byte) string {
	tb.Helper()
	res, err := http.Post(ts.base+"/api/traces", "application/json", bytes.NewReader(file))
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated {
		tb.Fatalf("POST /api/traces: %d %.300s", res.StatusCode, body)
	}
	id := res.Header.Get("Location")
	if len(id) < len("/runs/x") {
		tb.Fatalf("POST /api/traces: no Location: %s", body)
	}
	return id[len("/runs/"):]
}

// drain GETs path and reads its body as it arrives, without keeping it; it returns its size.
func (ts *testServer) drain(tb testing.TB, path string) int64 {
	tb.Helper()
	res, err := http.Get(ts.base + path)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	n, err := io.Copy(io.Discard, res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		tb.Fatalf("GET %s: %d %v", path, res.StatusCode, err)
	}
	return n
}
