package record

import (
	"sync"
	"testing"
)

// TestSessionChanges: the values changed since the last look come in the order of their keys,
// each once; a value equal to the one seen (plain, or of the same JSON) is no change; a resume's
// restored values count as seen; eino's lock is let go.
func TestSessionChanges(t *testing.T) {
	s := newSession()
	s.restore(map[string]any{"restored": 1})
	var lock sync.Mutex
	keys := func(sets []sessionSet) (out []string) {
		for _, set := range sets {
			out = append(out, set.key+"="+set.js)
		}
		return out
	}
	values := map[string]any{"b": "two", "a": 1, "restored": 1, "m": map[string]int{"x": 1}}
	if got := keys(s.changes(values, &lock)); len(got) != 3 || got[0] != "a=1" || got[1] != `b="two"` || got[2] != `m={"x":1}` {
		t.Errorf("first look = %v, want a, b and m in order (restored was seen)", got)
	}
	if !lock.TryLock() {
		t.Fatal("changes kept eino's lock")
	}
	lock.Unlock()
	values["m"] = map[string]int{"x": 1} // another value, the same JSON
	if got := s.changes(values, &lock); got != nil {
		t.Errorf("second look, nothing changed = %v, want none", keys(got))
	}
	values["b"] = "three"
	if got := keys(s.changes(values, nil)); len(got) != 1 || got[0] != `b="three"` {
		t.Errorf("after b changed = %v, want only b", got)
	}
	if js, changed := s.changedValue("b", "three"); changed || js != "" {
		t.Errorf("changedValue of the value just seen = %q, %v; want no change", js, changed)
	}
}
