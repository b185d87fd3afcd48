package storetest

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// CatalogueReadsBack runs every flow of the catalogue on real eino agents with the scripted
// model, written as it goes by a broker into store, and checks that each run reads back byte for
// byte as its recording holds it, from store and from the store again returns once the broker
// has closed (the database opened anew, as another process or replica would).
func CatalogueReadsBack(t *testing.T, store live.Store, again func() live.Store) {
	t.Helper()
	b := live.NewStoredBroker(0, store, slog.New(slog.DiscardHandler))
	var recs []*traces.Recording
	for _, flow := range agents.Catalogue() {
		rec := traces.NewRecording(traces.Run{ID: "run-" + flow.Name, Flow: flow.Name, Input: flow.DefaultInput, Model: "scripted"}, flow.Agents)
		if err := b.Add(rec); err != nil {
			t.Fatal(err)
		}
		agents.RunFlow(context.Background(), flow, flow.DefaultInput, agents.Options{Pace: agents.NewPace(0)}, rec)
		recs = append(recs, rec)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	stores := map[string]live.Store{"same store": store, "opened again": again()}
	for _, rec := range recs {
		want := marshal(t, rec.Snapshot())
		for name, s := range stores {
			tr, err := s.Load(rec.ID())
			if err != nil {
				t.Fatalf("%s: Load(%s): %v", name, rec.ID(), err)
			}
			if got := marshal(t, tr); !bytes.Equal(got, want) {
				t.Errorf("%s: run %s reads back different from the recording:\n got %.300s\nwant %.300s", name, rec.ID(), got, want)
			}
		}
	}
}
