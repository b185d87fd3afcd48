package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-dev/baton/internal/postgres/pgtest"
	"github.com/baton-dev/baton/traces"
)

// benchApp is an app streaming one run over the ingestion protocol, by hand, so that each
// post's time is measured as the app sees it.
type benchApp struct {
	base, id, secret string
	next             int64
	at               time.Time
	posts            []time.Duration
}

func startBenchApp(b testing.TB, base, flow string) *benchApp {
	body := fmt.Sprintf(`{"run": {"flow": %q, "input": "load"}, "agents": [{"name": "bot", "kind": "chat_model"}]}`, flow)
	res, err := http.Post(base+"api/ingest", "application/json", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	var created struct{ ID, Secret string }
	if err := json.NewDecoder(res.Body).Decode(&created); err != nil || res.StatusCode != http.StatusCreated {
		b.Fatalf("POST /api/ingest: %d %v", res.StatusCode, err)
	}
	return &benchApp{base: base, id: created.ID, secret: created.Secret, next: 1, at: time.Now().UTC()}
}

// post sends n message events (run.started first, run.finished last when asked) and records
// how long the answer took; it fails the benchmark unless the answer is 200.
func (a *benchApp) post(b testing.TB, n int, last bool) {
	events := make([]traces.Event, 0, n+2)
	if a.next == 1 {
		events = append(events, traces.Event{Kind: traces.KindRunStarted, Run: &traces.RunMark{Flow: "load", Input: "load", Status: traces.StatusRunning}})
	}
	for range n {
		events = append(events, traces.Event{Kind: traces.KindMessage, Agent: "bot",
			Message: &traces.Message{Role: "assistant", Content: fmt.Sprintf("message %d of a run under load", a.next+int64(len(events)))}})
	}
	if last {
		events = append(events, traces.Event{Kind: traces.KindRunFinished, Run: &traces.RunMark{Status: traces.StatusCompleted}})
	}
	for i := range events {
		events[i].Seq = a.next + int64(i)
		a.at = a.at.Add(time.Millisecond)
		events[i].Time = a.at
	}
	data, err := json.Marshal(map[string]any{"events": events})
	if err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, a.base+"api/ingest/"+a.id, bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Baton-Run-Secret", a.secret)
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	answer := new(bytes.Buffer)
	answer.ReadFrom(res.Body)
	res.Body.Close()
	a.posts = append(a.posts, time.Since(start))
	if res.StatusCode != http.StatusOK {
		b.Fatalf("post to %s: %d %s", a.id, res.StatusCode, answer)
	}
	a.next += int64(len(events))
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// durableCluster starts a throwaway PostgreSQL with its durable defaults (each commit flushed).
func durableCluster(b *testing.B) *pgtest.Cluster {
	c, err := pgtest.Start(pgtest.Options{Durable: true})
	if err != nil {
		if _, berr := pgtest.Bin(); berr != nil && !pgtest.Required() {
			b.Skip(berr)
		}
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Stop() })
	return c
}

// BenchmarkIngestApps: 50 apps stream a run each at once, as fast as each gets its answers (one
// post of 25 message events after another, 20 posts, then run.finished), to one replica or
// spread over two on one PostgreSQL (durable defaults): events a second from the first start
// until the database holds every run completed, and the 99th percentile of an app's post.
//
//	go test ./internal/cli -run '^$' -bench IngestApps -benchtime 3x
func BenchmarkIngestApps(b *testing.B) {
	c := durableCluster(b)
	for _, replicas := range []int{1, 2} {
		b.Run(fmt.Sprintf("replicas=%d", replicas), func(b *testing.B) {
			db, err := c.NewDatabase()
			if err != nil {
				b.Fatal(err)
			}
			var bases []string
			for range replicas {
				bases = append(bases, serveHere(b, "--db", db).url)
			}
			const apps, posts, perPost = 50, 20, 25
			var rates, p99s []float64
			for round := 0; round < b.N; round++ {
				flow := fmt.Sprintf("load%d", round)
				start := time.Now()
				all := make([]*benchApp, apps)
				var wg sync.WaitGroup
				for i := range apps {
					wg.Add(1)
					go func() {
						defer wg.Done()
						a := startBenchApp(b, bases[i%replicas], flow)
						for p := range posts {
							a.post(b, perPost, p == posts-1)
						}
						all[i] = a
					}()
				}
				wg.Wait()
				total := 0
				for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
					_, done := storedEventsOf(b, db, all)
					if done == apps {
						break
					}
					if time.Now().After(deadline) {
						b.Fatalf("%d of %d runs completed in the database after 60 s", done, apps)
					}
				}
				elapsed := time.Since(start)
				var lat []time.Duration
				for _, a := range all {
					lat = append(lat, a.posts...)
					total += int(a.next - 1)
				}
				rates = append(rates, float64(total)/elapsed.Seconds())
				p99s = append(p99s, float64(percentile(lat, 0.99).Microseconds())/1000)
			}
			b.ReportMetric(median(rates), "events/s")
			b.ReportMetric(median(p99s), "p99-post-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// storedEventsOf returns how many of apps' events the database at db holds, and how many of
// their runs have ended completed there.
func storedEventsOf(b testing.TB, db string, apps []*benchApp) (events int64, completed int) {
	ids := make([]string, len(apps))
	for i, a := range apps {
		ids[i] = a.id
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	err = conn.QueryRow(ctx, `SELECT coalesce(sum((SELECT count(*) FROM baton_events e WHERE e.run = r.key)), 0),
		count(*) FILTER (WHERE r.status = 'completed') FROM baton_runs r WHERE r.id = ANY($1)`, ids).Scan(&events, &completed)
	if err != nil {
		b.Fatal(err)
	}
	return events, completed
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkIngestDatabaseFault: 10 apps stream a run each to one replica, a post of 10 message
// events every 50 ms for 8 s, while PostgreSQL (durable defaults) is slow (a transaction holds an
// exclusive lock on the events table for 3 s) or restarts (a fast shutdown and start, as
// `pg_ctl restart -m fast`), 2 s in. What it reports: the slowest post and the 99th percentile
// (the apps' side), the events the apps posted that the database lacks 20 s after they ended,
// the runs not completed there, and a viewer of one run on the replica: the events it missed.
// What the replica says meanwhile is in its log (-v).
//
//	go test ./internal/cli -run '^$' -bench IngestDatabaseFault -benchtime 1x -count 3 -v
func BenchmarkIngestDatabaseFault(b *testing.B) {
	c := durableCluster(b)
	faults := map[string]func(b *testing.B, db string){
		"slow": func(b *testing.B, db string) {
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, db)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close(ctx)
			tx, err := conn.Begin(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tx.Exec(ctx, `LOCK TABLE baton_events IN ACCESS EXCLUSIVE MODE`); err != nil {
				b.Fatal(err)
			}
			time.Sleep(3 * time.Second)
			tx.Commit(ctx)
		},
		"restart": func(b *testing.B, db string) {
			if err := c.Restart(); err != nil {
				b.Fatal(err)
			}
		},
	}
	for _, name := range []string{"slow", "restart"} {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				db, err := c.NewDatabase()
				if err != nil {
					b.Fatal(err)
				}
				srv := serveHere(b, "--db", db)
				const apps = 10
				all := make([]*benchApp, apps)
				for i := range all {
					all[i] = startBenchApp(b, srv.url, "fault")
				}
				v := follow(b, srv.url, all[0].id)
				var wg sync.WaitGroup
				for _, a := range all {
					wg.Add(1)
					go func() {
						defer wg.Done()
						t := time.NewTicker(50 * time.Millisecond)
						defer t.Stop()
						for end := time.Now().Add(8 * time.Second); time.Now().Before(end); <-t.C {
							a.post(b, 10, false)
						}
						a.post(b, 0, true)
					}()
				}
				time.Sleep(2 * time.Second)
				faultAt := time.Now()
				faults[name](b, db)
				b.Logf("%s: the fault lasted %s", name, time.Since(faultAt).Round(time.Millisecond))
				wg.Wait()
				var want int64
				var lat []time.Duration
				for _, a := range all {
					want += a.next - 1
					lat = append(lat, a.posts...)
				}
				var got int64
				var done int
				for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
					if got, done = storedEventsOf(b, db, all); done == apps && got == want {
						break
					}
				}
				select {
				case <-v.done:
				case <-time.After(10 * time.Second):
				}
				missed := all[0].next - 1 - int64(len(v.events))
				b.ReportMetric(float64(slices.Max(lat).Microseconds())/1000, "max-post-ms")
				b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "p99-post-ms")
				b.ReportMetric(float64(want-got), "events-missing")
				b.ReportMetric(float64(apps-done), "runs-not-completed")
				b.ReportMetric(float64(missed), "viewer-missed")
				b.ReportMetric(0, "ns/op")
				srv.close()
			}
		})
	}
}
