package cli_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/internal/postgres/pgtest"
	"github.com/baton-dev/baton/traces"
)

// resumer is a viewer of a run's events socket that, like a page, comes back whenever its socket
// ends before the run does, from the seq after the last event it has (?after=).
type resumer struct {
	seqs       []int64 // every event read, in order; read once done is closed
	last       atomic.Int64
	reconnects atomic.Int64
	mu         sync.Mutex
	conn       *websocket.Conn // the socket open now
	done       chan struct{}
}

// resume follows run id on the server at base until the run's end, reconnecting for up to 60 s.
func resume(b testing.TB, base, id string) *resumer {
	r := &resumer{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
			url := "ws://" + strings.TrimPrefix(base, "http://") + "api/runs/" + id + "/events?after=" + strconv.FormatInt(r.last.Load(), 10)
			conn, _, err := websocket.DefaultDialer.Dial(url, nil)
			if err != nil {
				time.Sleep(100 * time.Millisecond) // a page backs off so too
				continue
			}
			r.mu.Lock()
			r.conn = conn
			r.mu.Unlock()
			for {
				var evs []traces.Event
				if err := conn.ReadJSON(&evs); err != nil {
					break
				}
				for _, e := range evs {
					r.seqs = append(r.seqs, e.Seq)
					r.last.Store(e.Seq)
					if e.Kind == traces.KindRunFinished {
						conn.Close()
						return
					}
				}
			}
			conn.Close()
			r.reconnects.Add(1)
		}
	}()
	return r
}

// cut closes the viewer's socket, as a page's connection lost: it comes back.
func (r *resumer) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conn != nil {
		r.conn.Close()
	}
}

// answer is what a replica answered one request, and how fast.
type answer struct {
	route  string
	status int
	took   time.Duration
	retry  string
	body   string
}

// BenchmarkDatabaseDown: two replicas, A and B, on one PostgreSQL (durable defaults); an app
// streams a run to A (10 events every 50 ms), 5 viewers follow it on B's events socket.
// PostgreSQL goes away 2 s in, for 3 s: stopped (a fast shutdown: connections refused at once),
// or frozen (SIGSTOP to all its processes: nothing answers, as behind a network partition). As it stops, every viewer's socket is
// cut, and the viewer comes back to B with ?after= its last seq, as a page does. Meanwhile B is
// asked, every 100 ms, for the run list (GET /api/runs), the page of a run it does not hold (GET
// /runs/:id) and a new app run (POST /api/ingest). Reported: each route's slowest answer while
// the database was down, and the answers that were not a 503 with a Retry-After and the cause
// ("bad-answers"); after PostgreSQL is up again, how long until each viewer has every event the
// app had posted when it came back (caught-up-ms: the viewers' min, median and max); once the run
// has ended, the events a viewer missed or got twice.
//
//	go test ./internal/cli -run '^$' -bench DatabaseDown -benchtime 1x -count 3 -v
func BenchmarkDatabaseDown(b *testing.B) {
	c := durableCluster(b)
	faults := []struct {
		name     string
		down, up func() error
	}{
		{"stopped", c.Down, c.Up},
		{"frozen", c.Freeze, c.Thaw},
	}
	for _, f := range faults {
		b.Run(f.name, func(b *testing.B) { databaseDown(b, c, f.down, f.up) })
	}
}

func databaseDown(b *testing.B, c *pgtest.Cluster, down, up func() error) {
	for range b.N {
		db, err := c.NewDatabase()
		if err != nil {
			b.Fatal(err)
		}
		a := serveHere(b, "--db", db)
		onB := serveHere(b, "--db", db)
		old := finishedRun(b, a.url)
		app := startBenchApp(b, a.url, "down")
		var posted atomic.Int64
		stop := make(chan struct{})
		appDone := make(chan struct{})
		go func() {
			defer close(appDone)
			t := time.NewTicker(50 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					app.post(b, 0, true)
					posted.Store(app.next - 1)
					return
				case <-t.C:
				}
				app.post(b, 10, false)
				posted.Store(app.next - 1)
			}
		}()
		viewers := make([]*resumer, 5)
		for i := range viewers {
			viewers[i] = resume(b, onB.url, app.id)
		}
		time.Sleep(2 * time.Second)

		if err := down(); err != nil {
			b.Fatal(err)
		}
		downAt := time.Now()
		for _, v := range viewers {
			v.cut()
		}
		var answers []answer
		probe := func(route, method, path, body string) {
			req, _ := http.NewRequest(method, onB.url+strings.TrimPrefix(path, "/"), strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			start := time.Now()
			res, err := http.DefaultClient.Do(req)
			a := answer{route: route, took: time.Since(start)}
			if err != nil {
				a.body = err.Error()
			} else {
				data, _ := io.ReadAll(res.Body)
				res.Body.Close()
				a.took, a.status, a.retry, a.body = time.Since(start), res.StatusCode, res.Header.Get("Retry-After"), string(data)
			}
			answers = append(answers, a)
		}
		for time.Since(downAt) < 3*time.Second || len(answers) < 3 {
			probe("list", http.MethodGet, "/api/runs", "")
			probe("page", http.MethodGet, "/runs/"+old, "")
			probe("ingest", http.MethodPost, "/api/ingest", `{"run": {"flow": "down", "input": "x"}}`)
			time.Sleep(100 * time.Millisecond)
		}
		if err := up(); err != nil {
			b.Fatal(err)
		}
		upAt, target := time.Now(), posted.Load()
		b.Logf("PostgreSQL was down %s; the app had posted %d events when it came back", upAt.Sub(downAt).Round(time.Millisecond), target)
		var caught []float64
		for _, v := range viewers {
			for v.last.Load() < target {
				if time.Since(upAt) > 60*time.Second {
					b.Fatalf("a viewer on B has event %d of %d a minute after PostgreSQL came back", v.last.Load(), target)
				}
				time.Sleep(2 * time.Millisecond)
			}
			caught = append(caught, float64(time.Since(upAt).Microseconds())/1000)
		}
		close(stop)
		<-appDone
		missed, dupes := 0, 0
		for _, v := range viewers {
			<-v.done
			for i, s := range v.seqs {
				if i > 0 && s <= v.seqs[i-1] {
					dupes++
				}
			}
			missed += int(app.next-1) - len(slices.Compact(slices.Clone(v.seqs)))
		}
		bad := 0
		slowest := map[string]time.Duration{}
		seen := map[string]int{}
		for _, a := range answers {
			slowest[a.route] = max(slowest[a.route], a.took)
			seen[a.route+" "+strconv.Itoa(a.status)]++
			if a.status != http.StatusServiceUnavailable || a.retry == "" || !strings.Contains(a.body, "check that PostgreSQL is up") {
				if bad == 0 {
					b.Logf("%s answered %d (Retry-After %q) in %s: %.300s", a.route, a.status, a.retry, a.took, a.body)
				}
				bad++
			}
		}
		b.Logf("answers while down: %v; viewers reconnected %v times", seen, func() []int64 {
			var n []int64
			for _, v := range viewers {
				n = append(n, v.reconnects.Load())
			}
			return n
		}())
		slices.Sort(caught)
		b.ReportMetric(caught[0], "caught-up-min-ms")
		b.ReportMetric(caught[len(caught)/2], "caught-up-median-ms")
		b.ReportMetric(caught[len(caught)-1], "caught-up-max-ms")
		for _, r := range []string{"list", "page", "ingest"} {
			b.ReportMetric(float64(slowest[r].Microseconds())/1000, "max-"+r+"-ms")
		}
		b.ReportMetric(float64(slices.Max(app.posts).Microseconds())/1000, "app-max-post-ms")
		b.ReportMetric(float64(bad), "bad-answers")
		b.ReportMetric(float64(missed), "viewer-missed")
		b.ReportMetric(float64(dupes), "viewer-dupes")
		b.ReportMetric(0, "ns/op")
		onB.close()
		a.close()
	}
}

// finishedRun runs the supervisor flow at full speed on the server at base, and returns its id
// once it has completed.
func finishedRun(b *testing.B, base string) string {
	res, err := http.Post(base+"api/runs", "application/json", strings.NewReader(`{"flow": "supervisor", "pace_ms": 0}`))
	if err != nil {
		b.Fatal(err)
	}
	var created struct{ ID string }
	err = json.NewDecoder(res.Body).Decode(&created)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusCreated {
		b.Fatalf("start a run: %d %v", res.StatusCode, err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if runStatus(b, base, created.ID) == traces.StatusCompleted {
			return created.ID
		}
		if time.Now().After(deadline) {
			b.Fatalf("run %s has not completed within 30 s", created.ID)
		}
	}
}
