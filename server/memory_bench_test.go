package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-dev/baton/server"
)

// branchingEvents are the events of a run of n model calls where each call keeps all but the
// last message of the call before and adds two: no input can share another's messages, and the
// inputs written whole grow as n², up to what the expansion budget takes.
func branchingEvents(n int) []string {
	pad := strings.Repeat("x", 10)
	lines := []string{`{"seq":1,"time":"2026-01-02T03:04:05Z","kind":"run.started","run":{"status":"running"}}`}
	for i := range n {
		seq := i + 2
		ref := ""
		if i > 0 {
			ref = fmt.Sprintf(`"input_from":%d,"input_keep":%d,`, seq-1, i+1) // call i has i+2 messages
		}
		lines = append(lines, fmt.Sprintf(`{"seq":%d,"time":"2026-01-02T03:04:05Z","kind":"model.started","agent":"a","model":{"id":"m%d",%s"input":[{"role":"user","content":"%d %s"},{"role":"user","content":"%s"}]}}`, seq, seq, ref, i, pad, pad))
	}
	return append(lines, fmt.Sprintf(`{"seq":%d,"time":"2026-01-02T03:04:06Z","kind":"run.finished","run":{"status":"completed"}}`, n+2))
}

// growingEvents are the events of a run of n model calls (or, with agents, n starts of its
// agent) where each is fed the whole input of the one before and one message of pad bytes more:
// a growing conversation, the shape of issue 20's hostile trace (small on disk, quadratic once
// every input is written out whole), whose inputs share one array.
func growingEvents(n, pad int, agents bool) []string {
	text := strings.Repeat("x", pad)
	lines := []string{`{"seq":1,"time":"2026-01-02T03:04:05Z","kind":"run.started","run":{"status":"running"}}`}
	for i := range n {
		seq := i + 2
		ref := ""
		if i > 0 {
			ref = fmt.Sprintf(`"input_from":%d,"input_keep":%d,`, seq-1, i) // input i has i+1 messages
		}
		input := fmt.Sprintf(`%s"input":[{"role":"user","content":"%d %s"}]`, ref, i, text)
		if agents {
			lines = append(lines, fmt.Sprintf(`{"seq":%d,"time":"2026-01-02T03:04:05Z","kind":"agent.started","agent":"a","agent_run":{%s}}`, seq, input))
		} else {
			lines = append(lines, fmt.Sprintf(`{"seq":%d,"time":"2026-01-02T03:04:05Z","kind":"model.started","agent":"a","model":{"id":"m%d",%s}}`, seq, seq, input))
		}
	}
	return append(lines, fmt.Sprintf(`{"seq":%d,"time":"2026-01-02T03:04:06Z","kind":"run.finished","run":{"status":"completed"}}`, n+2))
}

func branchingFile(lines []string) string {
	return `{"format":"baton.trace","version":2,"run":{"id":"r-branch","flow":"f","input":"","model":"m","status":"completed","started_at":"2026-01-02T03:04:05Z"},` +
		`"agents":[{"name":"a","kind":"chat_model"}],"events":[` + strings.Join(lines, ",\n") + "]}\n"
}

// BenchmarkMemoryPerTraceByte: the memory the whole process allocates for a trace, per byte of
// the trace, on each way a trace goes in or out: importing it, an app streaming it (posts of 100
// events), its page, its report (out-B/in-B is the report's size) and the events socket
// (sent-B/in-B is what one viewer receives).
// Two shapes: branching, whose input references cannot be shared (up to what the expansion
// budget takes), and growing, a conversation whose every call is fed the history before it, the
// shape of issue 20's hostile trace (10,000 calls: 2 MB of trace, 2 GB of inputs written out
// whole); and the same growing history fed to an agent at each of its starts.
//
//	go test ./server -run '^$' -bench 'MemoryPerTraceByte/.*/growing' -benchtime 1x -count 3
//	go test ./server -run '^$' -bench 'MemoryPerTraceByte/.*/branching' -benchtime 1x -count 3
func BenchmarkMemoryPerTraceByte(b *testing.B) {
	type shape struct {
		name  string
		lines []string
	}
	var shapes []shape
	for _, calls := range []int{250, 500, 1000, 1400} {
		shapes = append(shapes, shape{fmt.Sprintf("branching/calls=%d", calls), branchingEvents(calls)})
	}
	for _, calls := range []int{1000, 3000, 10000} {
		shapes = append(shapes, shape{fmt.Sprintf("growing/calls=%d", calls), growingEvents(calls, 20, false)})
	}
	for _, starts := range []int{3000, 10000} {
		shapes = append(shapes, shape{fmt.Sprintf("growing/starts=%d", starts), growingEvents(starts, 20, true)})
	}
	for _, sh := range shapes {
		lines := sh.lines
		file := branchingFile(lines)
		ts := mustOpenServer(b, server.Config{})
		id := ts.importTrace(b, []byte(file)).ID
		perByte := func(b *testing.B, run func()) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			peak := watchHeap()
			for b.Loop() {
				run()
			}
			top := peak()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(file)), "alloc-B/in-B")
			b.ReportMetric(float64(top-min(top, before.HeapAlloc))/float64(len(file)), "peak-heap-B/in-B")
		}
		name := fmt.Sprintf("%s/bytes=%d", sh.name, len(file))
		b.Run("import/"+name, func(b *testing.B) {
			perByte(b, func() { ts.importTrace(b, []byte(file)) })
		})
		b.Run("ingest/"+name, func(b *testing.B) {
			perByte(b, func() {
				run := ts.startIngest(b, `{"agents":[{"name":"a","kind":"chat_model"}]}`, nil, http.StatusCreated).ID
				for i := 0; i < len(lines); i += 100 {
					body := `{"events":[` + strings.Join(lines[i:min(i+100, len(lines))], ",") + `]}`
					if res := ts.do(b, request{method: http.MethodPost, path: "/api/ingest/" + run, body: body}); res.status != http.StatusOK {
						b.Fatalf("post: %d %s", res.status, res.body)
					}
				}
			})
		})
		b.Run("page/"+name, func(b *testing.B) {
			perByte(b, func() {
				if res := ts.do(b, request{path: "/runs/" + id}); res.status != http.StatusOK {
					b.Fatalf("page: %d", res.status)
				}
			})
		})
		b.Run("report/"+name, func(b *testing.B) {
			var size int
			perByte(b, func() {
				res := ts.do(b, request{path: "/runs/" + id + "/report.html"})
				if res.status != http.StatusOK {
					b.Fatalf("report: %d", res.status)
				}
				size = len(res.body)
			})
			b.ReportMetric(float64(size)/float64(len(file)), "out-B/in-B")
		})
		b.Run("events/"+name, func(b *testing.B) {
			var sent int
			perByte(b, func() {
				conn := ts.mustDial(b, "/api/runs/"+id+"/events")
				defer conn.Close()
				sent = 0
				for {
					_, data, err := conn.ReadMessage()
					if err != nil {
						break // closed after run.finished
					}
					sent += len(data)
					var events []json.RawMessage
					if json.Unmarshal(data, &events) != nil {
						b.Fatalf("not an array of events: %.100s", data)
					}
				}
			})
			b.ReportMetric(float64(sent)/float64(len(file)), "sent-B/in-B")
		})
	}
}

// watchHeap samples the live heap every millisecond until the function it returns is called,
// which returns the highest sample: the heap the work held at its peak, give or take a GC cycle.
func watchHeap() func() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var top atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > top.Load() {
				top.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		return top.Load()
	}
}
