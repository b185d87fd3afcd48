package web

import (
	"fmt"
	"testing"
)

// compact, written without fmt so that the tree compares its nodes' counts at each event without
// making strings, writes what the header always wrote (950, 1.2k, 34k, 1.5M), rounding at each
// boundary as fmt rounds.
func TestCompactAsFormatted(t *testing.T) {
	want := func(n int) string {
		switch {
		case n < 1000:
			return fmt.Sprint(n)
		case n < 10_000:
			return fmt.Sprintf("%.1fk", float64(n)/1000)
		case n < 1_000_000:
			return fmt.Sprintf("%dk", n/1000)
		}
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	check := func(n int) {
		if got := compact(n); got != want(n) {
			t.Fatalf("compact(%d) = %q, want %q", n, got, want(n))
		}
		if m := n + 1; sameCompact(n, m) != (want(n) == want(m)) {
			t.Fatalf("sameCompact(%d, %d) = %v, but they read %q and %q", n, m, sameCompact(n, m), want(n), want(m))
		}
	}
	for n := range 20_000 {
		check(n)
	}
	for n := 20_000; n < 3_000_000; n += 997 {
		check(n)
	}
	for _, n := range []int{9_949, 9_950, 9_951, 999_999, 1_000_000, 1_049_999, 1_050_000, 1_250_000, 1 << 40} {
		check(n)
	}
}
