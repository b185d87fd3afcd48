package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// How the pages write words, counts and times, whichever panel they are in.

// summaryLen is the most runes a one-line summary shows.
const summaryLen = 160

// oneLine folds runs of whitespace, newlines included, into single spaces. Only the head of a
// long text is kept: a summary never shows more.
func oneLine(s string) string {
	if len(s) > 8*summaryLen {
		cut := 8 * summaryLen
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + " …"
	}
	if isOneLine(s) {
		return s // most summaries: nothing to fold, nothing to allocate
	}
	return strings.Join(strings.Fields(s), " ")
}

// isOneLine reports whether s is ASCII whose only whitespace is single spaces between words:
// what oneLine would return unchanged.
func isOneLine(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf:
			return false // a non-ASCII space is possible: let strings.Fields decide
		case c == ' ' && (i == 0 || i == len(s)-1 || s[i-1] == ' '):
			return false
		case c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
			return false
		}
	}
	return true
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// clock and stamp write an event's time in UTC, the one zone everyone reading a shared trace
// agrees on: the time of day to the millisecond, and the whole time with its zone.
func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000 UTC") }

// shorten cuts s to at most n runes, ending in "…" when it had to cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// compact writes a count the way the header does: 950, 1.2k, 34k, 1.5M.
func compact(n int) string {
	var buf [24]byte
	return string(appendCompact(buf[:0], n))
}

// appendCompact appends compact(n) to b, making no string: the tree compares the counts of its
// nodes as shown at each event.
func appendCompact(b []byte, n int) []byte {
	switch {
	case n < 1000:
		return strconv.AppendInt(b, int64(n), 10)
	case n < 10_000:
		return append(strconv.AppendFloat(b, float64(n)/1000, 'f', 1, 64), 'k')
	case n < 1_000_000:
		return append(strconv.AppendInt(b, int64(n/1000), 10), 'k')
	}
	return append(strconv.AppendFloat(b, float64(n)/1e6, 'f', 1, 64), 'M')
}

// sameCompact reports whether compact(a) == compact(b).
func sameCompact(a, b int) bool {
	var x, y [24]byte
	return string(appendCompact(x[:0], a)) == string(appendCompact(y[:0], b))
}
