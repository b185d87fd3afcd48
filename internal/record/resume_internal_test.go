package record

import (
	"runtime"
	"testing"
)

// TestStopsHoldSinksWeakly: the registry of runs stopped at an interrupt hands a resume the sink
// of the part before while something still holds it (its recorder, its sender), and keeps nothing
// alive once nothing does; only sinks a resumed part can follow are kept.
func TestStopsHoldSinksWeakly(t *testing.T) {
	held := newClient(Config{Buffer: 1, URL: "http://127.0.0.1:1"}).run("")
	stops.put("held", held)
	stops.put("dropped", newClient(Config{Buffer: 1, URL: "http://127.0.0.1:1"}).run(""))
	stops.put("recording", Sink(nil))
	runtime.GC()
	runtime.GC()
	if got := stops.claim("held"); got != Sink(held) {
		t.Errorf("claim(held) = %v, want the sink still held", got)
	}
	if got := stops.claim("held"); got != nil {
		t.Errorf("a second claim got %v: a stop is claimed once", got)
	}
	if got := stops.claim("dropped"); got != nil {
		t.Errorf("claim(dropped) = %v, want nothing: no one holds that sink", got)
	}
	if got := stops.claim("recording"); got != nil {
		t.Errorf("claim(recording) = %v, want nothing: only followable sinks are kept", got)
	}
	runtime.KeepAlive(held)
}
