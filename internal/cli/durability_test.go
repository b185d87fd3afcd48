package cli_test

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/baton-dev/baton/traces"
)

// seen is what one viewer of a run received over its events socket.
type seen struct {
	kinds map[int64]traces.Kind // by seq
	ended traces.Status         // the status of the run.finished it received, if any
}

// watch follows run id's events socket on b until the socket ends, into s; connected is called
// once the socket is open, and ended signalled, without blocking, when the run.finished arrives.
func watch(t *testing.T, b *baton, id string, s *seen, connected func(), ended chan<- string) {
	conn, _, err := websocket.DefaultDialer.Dial("ws://"+strings.TrimPrefix(b.base, "http://")+"api/runs/"+id+"/events", nil)
	connected()
	if err != nil {
		t.Errorf("viewer of %s: %v", id, err)
		return
	}
	defer conn.Close()
	for {
		_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		var evs []traces.Event
		if err := conn.ReadJSON(&evs); err != nil {
			return // the run ended, or the server was killed
		}
		for _, e := range evs {
			s.kinds[e.Seq] = e.Kind
			if e.Kind == traces.KindRunFinished && e.Run != nil {
				s.ended = e.Run.Status
				select {
				case ended <- id:
				default:
				}
			}
		}
	}
}

// TestKillLosesNothingAViewerSaw is the durability promise: a viewer sees an event only once the
// database has committed it. A server with runs going on, some quick and some paced, each with a
// viewer on its events socket, is killed with SIGKILL the moment a viewer sees a run end; started
// again on the database, it has every event any viewer saw, and every run a viewer saw end ends
// as the viewer saw it. (Before the promise, a kill lost runs viewers had seen completed.)
func TestKillLosesNothingAViewerSaw(t *testing.T) {
	db := t.TempDir() + "/runs.db"
	first := startServe(t, db)
	const runs = 16
	ids := make([]string, runs)
	views := make([]seen, runs)
	for i := range ids {
		pace := 0
		if i%2 == 1 {
			pace = 20 // these go on for seconds: the kill finds them mid-run
		}
		ids[i] = first.start(t, "supervisor", pace)
		views[i].kinds = make(map[int64]traces.Kind)
	}
	ended := make(chan string, 1)
	var viewers, connected sync.WaitGroup
	for i, id := range ids {
		viewers.Add(1)
		connected.Add(1)
		go func() {
			defer viewers.Done()
			watch(t, first, id, &views[i], connected.Done, ended)
		}()
	}
	connected.Wait()
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("no viewer saw a run end within 30s")
	}
	first.kill()
	viewers.Wait()

	second := startServe(t, db)
	var saw, lost, endedSeen, kept int
	for i, id := range ids {
		status, body := second.do(t, http.MethodGet, "/api/runs/"+id+"/trace", "")
		tr, err := traces.Unmarshal(body)
		if status != http.StatusOK || err != nil {
			t.Errorf("run %s after the restart: %d %v", id, status, err)
			continue
		}
		stored := make(map[int64]traces.Kind, len(tr.Events))
		for _, e := range tr.Events {
			stored[e.Seq] = e.Kind
		}
		var gone []int64
		for seq, kind := range views[i].kinds {
			saw++
			if stored[seq] != kind {
				gone = append(gone, seq)
			}
		}
		if lost += len(gone); len(gone) > 0 {
			t.Errorf("run %s: a viewer saw %d events the database does not have, such as %d", id, len(gone), slices.Min(gone))
		}
		kept += len(tr.Events)
		if st := views[i].ended; st != "" {
			endedSeen++
			if tr.Run.Status != st {
				t.Errorf("run %s: a viewer saw it end %s; after the restart it is %s", id, st, tr.Run.Status)
			}
		}
	}
	if endedSeen == 0 {
		t.Error("no viewer saw a run end before the kill")
	}
	t.Logf("viewers saw %d events and %d runs end; the database kept %d events; lost of what viewers saw: %d", saw, endedSeen, kept, lost)
}
