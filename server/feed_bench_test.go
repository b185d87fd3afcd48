package server_test

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// BenchmarkEventToFrame measures how long an event takes from Emit to the viewers' socket reading
// the message that carries it, on the events socket and the run page's, with 1 and 10 viewers
// that joined at event 100 or 100,000 of a supervisor-shaped run, while the run records 1,000
// events a second (b.N events, at least 500). It reports the median and the 99th percentile over
// every event and viewer, and the process's CPU time and allocated bytes per event (the viewers'
// reading included).
// The run page's socket is measured with its updates gathered over the
// server's window (2ms) and, for comparison in the same process, with one update per event
// (window=0s); -count interleaves the rounds.
//
//	go test ./server -run '^$' -bench EventToFrame -benchtime 1000x -count 3
func BenchmarkEventToFrame(b *testing.B) {
	const rate = time.Millisecond // 1,000 events a second
	// A supervisor handing work out over and over, repeated: transfers and all, as a long run has.
	shape := webtest.Big(300).Events[1:]
	for _, route := range []string{"events", "live/window=0s", "live/window=2ms"} {
		route, window, _ := strings.Cut(route, "/window=")
		for _, viewers := range []int{1, 10} {
			for _, at := range []int{100, 100_000} {
				name := fmt.Sprintf("route=%s/viewers=%d/at=%d", route, viewers, at)
				if window != "" {
					name = fmt.Sprintf("route=%s/window=%s/viewers=%d/at=%d", route, window, viewers, at)
				}
				b.Run(name, func(b *testing.B) {
					ts := mustOpenServer(b, server.Config{})
					if window != "" {
						d, _ := time.ParseDuration(window)
						server.SetLiveWindow(ts.Server, d)
					}
					rec := ts.addRecording(b, "r-bench")
					for i := range at {
						e := shape[i%len(shape)]
						e.Seq, e.Time = 0, time.Time{}
						rec.Emit(e)
					}
					n := max(b.N, 500)
					sent := make([]time.Time, at+n+3)
					ready := make(chan struct{}, viewers)
					var mu sync.Mutex
					var lat []time.Duration
					var wg sync.WaitGroup
					for range viewers {
						path := "/api/runs/r-bench/events?after=" + itoa(int64(at))
						if route == "live" {
							path = "/runs/r-bench/live?after=" + itoa(int64(at))
						}
						conn := ts.mustDial(b, path)
						wg.Go(func() {
							mine := readFrames(b, conn, route, int64(at), ready, func(seq int64, got time.Time) time.Duration {
								mu.Lock()
								defer mu.Unlock()
								if seq == int64(at+1) || seq > int64(at+n+1) {
									return -1 // the warm-up event or run.finished, not a paced one
								}
								return got.Sub(sent[seq])
							})
							mu.Lock()
							lat = append(lat, mine...)
							mu.Unlock()
						})
					}
					// One event first, to see every viewer's feed built and following.
					warm := shape[at%len(shape)]
					warm.Seq, warm.Time = 0, time.Time{}
					rec.Emit(warm)
					for range viewers {
						<-ready
					}
					runtime.GC() // not to pay for the sub-benchmark before
					b.ResetTimer()
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					cpu, allocated := cpuTime(), ms.TotalAlloc
					tick := time.NewTicker(rate)
					for i := range n {
						<-tick.C
						e := shape[(at+1+i)%len(shape)]
						e.Seq, e.Time = 0, time.Time{}
						mu.Lock()
						sent[at+i+2] = time.Now()
						mu.Unlock()
						rec.Emit(e)
					}
					tick.Stop()
					rec.Finish(traces.StatusCompleted, "")
					wg.Wait()
					cpu = cpuTime() - cpu
					runtime.ReadMemStats(&ms)
					allocated = ms.TotalAlloc - allocated
					b.StopTimer()
					slices.Sort(lat)
					if len(lat) == 0 {
						b.Fatal("no latencies")
					}
					q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
					b.ReportMetric(q(0.5), "p50-ms")
					b.ReportMetric(q(0.99), "p99-ms")
					b.ReportMetric(q(1), "max-ms")
					b.ReportMetric(cpu*1e6/float64(n), "cpu-us/event")
					// Bytes the process allocated (the viewers' reading included): the garbage the
					// collector, which shares the cores, must deal with. Load on the machine moves
					// it little.
					b.ReportMetric(float64(allocated)/1024/float64(n), "alloc-KB/event")
				})
			}
		}
	}
}

// readFrames reads a viewer's socket until it closes and returns, for every event after from,
// how long it took to arrive (of(seq, arrival), skipped when negative). A run page's message
// covers the events up to its seq. It signals ready on its first event.
func readFrames(b *testing.B, conn *websocket.Conn, route string, from int64, ready chan<- struct{}, of func(int64, time.Time) time.Duration) []time.Duration {
	var out []time.Duration
	defer func() {
		if ready != nil {
			ready <- struct{}{} // not to leave the benchmark waiting
		}
	}()
	last := from
	// One buffer for every message: a viewer is a browser, whose garbage is not the server's to
	// collect, so the reading here should add as little as it can to the process's.
	var buf bytes.Buffer
	for {
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, r, err := conn.NextReader()
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(r)
		}
		got := time.Now()
		if err != nil {
			return out
		}
		data := buf.Bytes()
		var seq int64
		if route == "live" {
			// Its seq comes first: {"seq":N,...}.
			if _, err := fmt.Sscanf(string(data[:min(30, len(data))]), `{"seq":%d`, &seq); err != nil {
				b.Errorf("live message: %v", err)
				return out
			}
		} else {
			// The last event's seq, without decoding every event.
			i := bytes.LastIndex(data, []byte(`{"seq":`))
			if _, err := fmt.Sscanf(string(data[i:min(i+30, len(data))]), `{"seq":%d`, &seq); err != nil {
				b.Errorf("events message: %v", err)
				return out
			}
		}
		if ready != nil && seq > from {
			ready <- struct{}{}
			ready = nil
		}
		for s := last + 1; s <= seq; s++ {
			if d := of(s, got); d >= 0 {
				out = append(out, d)
			}
		}
		last = max(last, seq)
	}
}

// BenchmarkLiveBurst measures what a run recording as fast as it can (10,000 events at once, as a
// run with a model that answers at once does) costs the server with 10 run pages open, with their
// updates gathered over the server's window and with one update per wake (window=0s): the time
// until every page has the whole run, the process's CPU time, and the messages a page got.
//
//	go test ./server -run '^$' -bench LiveBurst -benchtime 3x -count 5
func BenchmarkLiveBurst(b *testing.B) {
	const events, viewers = 10_000, 10
	shape := webtest.Big(300).Events[1:]
	for _, window := range []time.Duration{0, 2 * time.Millisecond} {
		b.Run("window="+window.String(), func(b *testing.B) {
			var ms, cpu, msgs []float64
			for i := 0; b.Loop(); i++ {
				ts := mustOpenServer(b, server.Config{})
				server.SetLiveWindow(ts.Server, window)
				id := "r-burst-" + itoa(int64(i))
				rec := ts.addRecording(b, id)
				rec.Emit(shape[0])
				var wg sync.WaitGroup
				var mu sync.Mutex
				got := 0
				ready := make(chan struct{}, viewers)
				for range viewers {
					conn := ts.mustDial(b, "/runs/"+id+"/live?after=0")
					wg.Go(func() {
						n := 0
						for {
							_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
							_, r, err := conn.NextReader()
							if err == nil {
								_, err = io.Copy(io.Discard, r)
							}
							if err != nil {
								break
							}
							if n++; n == 1 {
								ready <- struct{}{}
							}
						}
						mu.Lock()
						got += n
						mu.Unlock()
					})
				}
				for range viewers {
					<-ready
				}
				start, c := time.Now(), cpuTime()
				for j := range events {
					e := shape[(j+1)%len(shape)]
					e.Seq, e.Time = 0, time.Time{}
					rec.Emit(e)
				}
				rec.Finish(traces.StatusCompleted, "")
				wg.Wait()
				ms = append(ms, float64(time.Since(start))/1e6)
				cpu = append(cpu, (cpuTime()-c)*1e3)
				msgs = append(msgs, float64(got)/viewers)
			}
			report := func(unit string, v []float64) {
				slices.Sort(v)
				b.ReportMetric(v[len(v)/2], unit)
			}
			report("ms", ms)
			report("cpu-ms", cpu)
			report("msgs/page", msgs)
		})
	}
}

func cpuTime() float64 {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()).Seconds()
}

// BenchmarkFastRun runs a real eino run of about 100,000 events with a model that answers at once,
// followed from its start by five events sockets and five run pages, and fails unless every one
// receives every event in order with no drop (fastRunToViewers). It reports the events and the
// time from the run's start until the last viewer has run.finished.
//
//	go test ./server -run '^$' -bench FastRun -benchtime 1x
func BenchmarkFastRun(b *testing.B) {
	var n int64
	var secs []float64
	for b.Loop() {
		start := time.Now()
		n = fastRunToViewers(b, 34_000, 5, 5)
		secs = append(secs, time.Since(start).Seconds())
	}
	slices.Sort(secs)
	b.ReportMetric(float64(n), "events")
	b.ReportMetric(secs[len(secs)/2], "s-to-every-viewer")
	b.ReportMetric(0, "ns/op")
}
