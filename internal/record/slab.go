package record

import "sync/atomic"

// slabs hands out zero values of T allocated 32 together, to callbacks that may take them on
// several goroutines at once: one allocation of 32 costs the allocator about what one of a
// single value did. A slab lives as long as any of its values is reachable, so what a value
// holds after its use should be let go of, or be small.
type slabs[T any] struct{ cur atomic.Pointer[slab[T]] }

type slab[T any] struct {
	items [32]T
	taken atomic.Int32 // values handed out, or claimed by callers racing for the last ones
}

// next returns a zero value of its own to the caller.
func (s *slabs[T]) next() *T {
	for {
		sl := s.cur.Load()
		if sl != nil {
			if i := sl.taken.Add(1) - 1; int(i) < len(sl.items) {
				return &sl.items[i]
			}
		}
		s.cur.CompareAndSwap(sl, new(slab[T])) // full (or none yet): whoever swaps first wins
	}
}
