package storetest

import (
	"bytes"
	"testing"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/traces"
)

// A run's session hash reads back as last recorded, kept byte for byte, whatever the run's writes
// around it; a run never given one has none; an unknown run is not found; a deleted run's goes
// with it.
func testSessionHash(t *testing.T, open Open) {
	s := open(t, 0)
	events := ended("f", traces.StatusInterrupted, "in", "out", 0)
	create(t, s, "r-1", "f", "in", 0, events[:1])
	createEnded(t, s, "r-2", "f", traces.StatusCompleted, "in", "out", 1)
	if h, err := s.SessionHash("r-1"); err != nil || h != nil {
		t.Errorf("SessionHash of a run never given one = %x, %v; want nil", h, err)
	}
	first, second := []byte{0, 1, 2, 0xff, 0}, bytes.Repeat([]byte{0xab}, 32)
	for _, h := range [][]byte{first, second} {
		if err := s.SetSessionHash("r-1", h); err != nil {
			t.Fatal(err)
		}
	}
	var tally live.Tally // the run's next events are saved after the hash: they leave it be
	for _, e := range events {
		tally.Add(e)
	}
	if err := s.Save(tally.Apply(traces.Run{ID: "r-1", Flow: "f", Input: "in", StartedAt: t0}), tally, nil, events[1:]); err != nil {
		t.Fatal(err)
	}
	if h, err := s.SessionHash("r-1"); err != nil || !bytes.Equal(h, second) {
		t.Errorf("SessionHash(r-1) = %x, %v; want the last one recorded, %x", h, err, second)
	}
	if h, err := s.SessionHash("r-2"); err != nil || h != nil {
		t.Errorf("SessionHash(r-2), another run, = %x, %v; want nil", h, err)
	}
	if err := s.SetSessionHash("r-nope", first); traces.ErrorCode(err) != traces.CodeNotFound {
		t.Errorf("SetSessionHash of an unknown run: %v, want not found", err)
	}
	if err := s.Delete("r-1"); err != nil {
		t.Fatal(err)
	}
	if h, err := s.SessionHash("r-1"); traces.ErrorCode(err) != traces.CodeNotFound {
		t.Errorf("SessionHash of a deleted run = %x, %v; want not found", h, err)
	}
}
