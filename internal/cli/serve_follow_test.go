package cli_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/internal/postgres/pgtest"
	"github.com/baton-dev/baton/traces"
)

// viewer is a websocket on a run's events socket (GET /api/runs/:id/events) and what it read.
type viewer struct {
	conn   *websocket.Conn
	events []traces.Event
	msgs   int        // messages read
	closed error      // how the socket ended
	got    chan int64 // each message's last seq, as it comes (buffered)
	done   chan struct{}
}

// follow opens a viewer of run id on the server at base and reads it until the socket ends.
func follow(t testing.TB, base, id string) *viewer {
	t.Helper()
	return followAfter(t, base, id, 0)
}

// followAfter is follow from the event after seq after.
func followAfter(t testing.TB, base, id string, after int64) *viewer {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial("ws://"+strings.TrimPrefix(base, "http://")+"api/runs/"+id+"/events?after="+strconv.FormatInt(after, 10), nil)
	if err != nil {
		t.Fatalf("viewer of %s on %s: %v", id, base, err)
	}
	v := &viewer{conn: conn, got: make(chan int64, 1024), done: make(chan struct{})}
	t.Cleanup(func() { conn.Close(); <-v.done })
	go func() {
		defer close(v.done)
		for {
			_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			var evs []traces.Event
			if err := conn.ReadJSON(&evs); err != nil {
				v.closed = err
				return
			}
			v.events = append(v.events, evs...)
			v.msgs++
			if len(evs) > 0 {
				v.got <- evs[len(evs)-1].Seq
			}
		}
	}()
	return v
}

// until waits for the viewer to have read through seq, and fails the test after 30 s.
func (v *viewer) until(t testing.TB, seq int64) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case last := <-v.got:
			if last >= seq {
				return
			}
		case <-v.done:
			t.Fatalf("the viewer's socket ended (%v) before event %d", v.closed, seq)
		case <-timeout:
			t.Fatalf("the viewer has not read event %d within 30s", seq)
		}
	}
}

// TestViewersFollowAnotherServersRun: two servers on one PostgreSQL database; a run recorded by
// A is followed live by the viewers of its events socket on B: one there from the start, one that
// joins mid-run. Each gets every event of A's trace once, in order, while the run goes on on A,
// then its end, then a normal close.
func TestViewersFollowAnotherServersRun(t *testing.T) {
	db := pgtest.Database(t)
	a := serveHere(t, "--db", db)
	b := serveHere(t, "--db", db)
	res, err := http.Post(a.url+"api/runs", "application/json", strings.NewReader(`{"flow": "supervisor", "pace_ms": 300}`))
	if err != nil {
		t.Fatal(err)
	}
	id := createdID(t, res)

	first := follow(t, b.url, id)
	first.until(t, 3)
	if st := runStatus(t, a.url, id); st != traces.StatusRunning {
		t.Fatalf("the run is %s on A once B's viewer has its third event; want it still running, for a live test", st)
	}
	late := follow(t, b.url, id)
	late.until(t, 1)
	if st := runStatus(t, a.url, id); st != traces.StatusRunning {
		t.Fatalf("the run is %s on A once the late viewer is on; want it still running", st)
	}
	<-first.done
	<-late.done

	want := traceOn(t, a.url, id)
	if want.Run.Status != traces.StatusCompleted {
		t.Fatalf("the run ended %s on A; want completed", want.Run.Status)
	}
	for name, v := range map[string]*viewer{"first": first, "late": late} {
		var closed *websocket.CloseError
		if !errors.As(v.closed, &closed) || closed.Code != websocket.CloseNormalClosure {
			t.Errorf("the %s viewer's socket ended with %v; want a normal close after the run's end", name, v.closed)
		}
		if len(v.events) != len(want.Events) {
			t.Errorf("the %s viewer on B got %d events; A recorded %d", name, len(v.events), len(want.Events))
		}
		for i, e := range v.events {
			if i >= len(want.Events) {
				break
			}
			w := want.Events[i]
			if e.Seq != int64(i+1) || e.Seq != w.Seq || e.Kind != w.Kind || e.Agent != w.Agent || !e.Time.Equal(w.Time) {
				t.Errorf("the %s viewer's event %d is %d %s %q at %s; A recorded %d %s %q at %s", name, i+1,
					e.Seq, e.Kind, e.Agent, e.Time, w.Seq, w.Kind, w.Agent, w.Time)
				break
			}
		}
		if n := len(v.events); n == 0 || v.events[n-1].Kind != traces.KindRunFinished || v.events[n-1].Run.Status != traces.StatusCompleted {
			t.Errorf("the %s viewer's last event is not the run's end, completed", name)
		}
	}
	if first.msgs < 2 {
		t.Errorf("the first viewer got the run in %d message(s); want it live, as it went on", first.msgs)
	}
}

// createdID reads the id of a run from the answer to POST /api/runs.
func createdID(t *testing.T, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	var created struct{ ID string }
	if err := json.NewDecoder(res.Body).Decode(&created); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("start a run: %d, %v", res.StatusCode, err)
	}
	return created.ID
}

// TestViewersSeeADeadServersRunEnd: a server recording a run on PostgreSQL is killed (SIGKILL,
// in a process of its own); the viewer following the run on another server gets every event the
// dead one committed and then the run's end, interrupted, once its lease has expired: with
// --lease-heartbeat 200ms --lease-expiry 1s, within seconds.
func TestViewersSeeADeadServersRunEnd(t *testing.T) {
	db := pgtest.Database(t)
	lease := []string{"--lease-heartbeat", "200ms", "--lease-expiry", "1s"}
	a := startServe(t, db, lease...)
	b := serveHere(t, append([]string{"--db", db}, lease...)...)
	id := a.start(t, "supervisor", 5000)
	v := follow(t, b.url, id)
	v.until(t, 2)
	a.kill()
	select {
	case <-v.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the viewer on B has not seen the run end within 20 s of A's death")
	}
	want := traceOn(t, b.url, id)
	n := len(v.events)
	if n == 0 || n != len(want.Events) {
		t.Fatalf("the viewer got %d events; the database has %d", n, len(want.Events))
	}
	for i, e := range v.events {
		if e.Seq != int64(i+1) || e.Kind != want.Events[i].Kind {
			t.Fatalf("the viewer's event %d is %d %s; want %d %s", i+1, e.Seq, e.Kind, i+1, want.Events[i].Kind)
		}
	}
	if last := v.events[n-1]; last.Kind != traces.KindRunFinished || last.Run.Status != traces.StatusInterrupted || want.Run.Status != traces.StatusInterrupted {
		t.Errorf("the viewer's last event is %s %+v, the run %s; want the run ended interrupted", last.Kind, last.Run, want.Run.Status)
	}
}

// TestIngestOnAnotherServerIsRefusedClearly: an app streams a run to server A; a post of it that
// reaches server B (a proxy that moved the app) is refused 409, saying the run is another
// server's and where to post, not that Baton runs it itself; A still takes the app's posts.
func TestIngestOnAnotherServerIsRefusedClearly(t *testing.T) {
	db := pgtest.Database(t)
	a := serveHere(t, "--db", db)
	b := serveHere(t, "--db", db)
	res, err := http.Post(a.url+"api/ingest", "application/json", strings.NewReader(`{"run": {"flow": "app", "input": "hi"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var started struct{ ID, Secret string }
	err = json.NewDecoder(res.Body).Decode(&started)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("POST /api/ingest: %d, %v", res.StatusCode, err)
	}
	post := func(base string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, base+"api/ingest/"+started.ID, strings.NewReader(`{"events": []}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Baton-Run-Secret", started.Secret)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var answer struct{ Error string }
		json.NewDecoder(res.Body).Decode(&answer)
		return res.StatusCode, answer.Error
	}
	if code, msg := post(b.url); code != http.StatusConflict || !strings.Contains(msg, "recorded by another baton serve sharing this database") {
		t.Errorf("a post of A's run to B: %d %q; want 409 saying another server records it", code, msg)
	}
	if code, msg := post(a.url); code != http.StatusOK {
		t.Errorf("the app's post to A after: %d %q; want 200", code, msg)
	}
}
