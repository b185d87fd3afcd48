package record

import (
	"sync"
	"testing"
)

// TestToolCallSlabsHandEachCallOnce: callbacks starting on several goroutines at once, over many
// slabs, each get a zero call that no other got.
func TestToolCallSlabsHandEachCallOnce(t *testing.T) {
	var slabs toolCallSlabs
	const goroutines, each = 8, 100 // 25 slabs, raced for at each change
	got := make([][]*call, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for range each {
				c := slabs.next()
				if c.info != nil || c.v != nil || c.toolCallID != "" || c.ended.Load() {
					t.Error("a call handed out was not zero")
				}
				c.toolCallID = "taken" // as newCall fills it: the race detector sees two owners
				got[g] = append(got[g], c)
			}
		})
	}
	wg.Wait()
	seen := make(map[*call]bool)
	for _, calls := range got {
		for _, c := range calls {
			if seen[c] {
				t.Fatalf("a call was handed out twice")
			}
			seen[c] = true
		}
	}
	if len(seen) != goroutines*each {
		t.Fatalf("%d calls handed out, want %d", len(seen), goroutines*each)
	}
}
