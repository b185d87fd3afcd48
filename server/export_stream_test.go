package server_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// An ended run of many events (the export reads it a batch at a time, its buffers in turn) is
// exported byte for byte as the trace file it was imported from, and as its snapshot encodes;
// a run still going is exported from its snapshot as before.
func TestExportOfALargeEndedRunIsItsFile(t *testing.T) {
	file, events := largeTrace(t, 30_000)
	ts := mustOpenServer(t, server.Config{MaxIngestBody: int64(len(file)) + 1})
	id := ts.importBig(t, file)
	got := getBody(t, ts.base+"/api/runs/"+id+"/trace?download=1")
	if !bytes.Equal(got, file) {
		t.Fatalf("export of the imported %d-event run: %d bytes unlike the %d of its file", events, len(got), len(file))
	}
	rec, err := ts.Broker.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	want, err := traces.Marshal(rec.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("export of the ended run: %d bytes unlike the %d of its snapshot", len(got), len(want))
	}

	live := traces.NewRecording(traces.Run{ID: "going", Flow: "export"}, nil)
	if err := ts.Broker.Add(live); err != nil {
		t.Fatal(err)
	}
	live.Emit(traces.Event{Kind: traces.KindMessage, Agent: "a", Message: &traces.Message{Role: "assistant", Content: "still going"}})
	got = getBody(t, ts.base+"/api/runs/going/trace")
	if want, err = traces.Marshal(live.Snapshot()); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("export of a run going on: %s\nwant %s (%v)", got, want, err)
	}
	live.Finish(traces.StatusCompleted, "")
}

func getBody(tb testing.TB, url string) []byte {
	tb.Helper()
	res, err := http.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		tb.Fatalf("GET %s: %d %v %.300s", url, res.StatusCode, err, body)
	}
	return body
}
