// Package grow grows a slice by doubling its room. A run's inputs share one array as long as each
// extends the one before, and append's growth by a quarter would leave every outgrown array
// alive, held by earlier events: the recorder and the trace decoder grow inputs alike, through
// Doubling, so that a trace read back keeps what its recording kept. Baton's own, not API.
package grow

import "slices"

// Doubling returns s with room for n more elements, doubling its room when it must grow.
func Doubling[S ~[]E, E any](s S, n int) S {
	if need := len(s) + n; need > cap(s) {
		s = slices.Grow(s, max(need, 2*cap(s))-len(s))
	}
	return s
}
