package traces

import (
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSpecialIn8: the eight-bytes-at-a-time test of rawString finds exactly the bytes that end a
// string's plain run, wherever they are among other bytes, special or not.
func TestSpecialIn8(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80 }
	check := func(b [8]byte) {
		want := false
		for _, c := range b {
			want = want || special(c)
		}
		if got := specialIn8(binary.LittleEndian.Uint64(b[:])); got != want {
			t.Fatalf("specialIn8(%q) = %v, want %v", b[:], got, want)
		}
	}
	for c := range 256 {
		for at := range 8 {
			for _, fill := range []byte{'a', ' ', '!', '#', '[', ']', '~', 0x7f} {
				b := [8]byte{fill, fill, fill, fill, fill, fill, fill, fill}
				b[at] = byte(c)
				check(b)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		var b [8]byte
		for i := range b {
			b[i] = byte(0x1e + r.IntN(0x64)) // around both edges: 0x1e..0x81
		}
		check(b)
	}
}

// TestParseUTC: the decoder's reading of the times Baton writes gives the time UnmarshalText
// gives, and leaves every other text to it.
func TestParseUTC(t *testing.T) {
	texts := []string{"2006-01-02T15:04:05Z", "2025-03-14T14:02:00.15Z", "2024-02-29T23:59:59.999999999Z",
		"2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2000-02-29T00:00:00Z", "0000-01-01T00:00:00Z",
		"9999-12-31T23:59:59.1Z", "2006-01-02T15:04:05.Z", "2006-01-02T15:04:05.1234567891Z",
		"2006-01-02T15:04:05+01:00", "2006-01-02T24:00:00Z", "2006-13-02T15:04:05Z", "2006-04-31T15:04:05Z",
		"2006-01-02t15:04:05Z", "2006-01-02T15:04:60Z", "2006-01-02T15:60:05Z", "2006-00-02T15:04:05Z",
		"2006-01-00T15:04:05Z", "2006-01-02T15:04:05,5Z", "-006-01-02T15:04:05Z", "2006-01-02T15:04:05.-1Z"}
	r := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		b := []byte(texts[r.IntN(4)])
		for range 1 + r.IntN(2) {
			b[r.IntN(len(b))] = "0123456789:.-TZ+ "[r.IntN(17)]
		}
		texts = append(texts, string(b))
	}
	for _, text := range texts {
		var want time.Time
		werr := want.UnmarshalText([]byte(text))
		got, ok := parseUTC([]byte(text))
		if ok && (werr != nil || got != want || got.Location() != want.Location()) {
			t.Fatalf("parseUTC(%q) = %v, UnmarshalText: %v, %v", text, got, want, werr)
		}
	}
	if _, ok := parseUTC([]byte("2025-03-14T14:02:00.15Z")); !ok {
		t.Error("parseUTC does not read the times Marshal writes")
	}
}

// TestSmallInt: the decoder's reading of short integers gives what ParseInt gives.
func TestSmallInt(t *testing.T) {
	texts := []string{"0", "-0", "7", "-7", "999999999999999999", "-999999999999999999",
		"1000000000000000000", "9223372036854775807", "-9223372036854775808", "1.5", "1e3", "-", ""}
	r := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		n := r.Int64N(1 << 62)
		if r.IntN(2) == 0 {
			n = -n
		}
		texts = append(texts, strconv.FormatInt(n>>r.IntN(62), 10))
	}
	for _, text := range texts {
		got, ok := smallInt([]byte(text))
		want, err := strconv.ParseInt(text, 10, 64)
		if ok && (err != nil || got != want) {
			t.Fatalf("smallInt(%q) = %d, ParseInt: %d, %v", text, got, want, err)
		}
		if !ok && len(strings.TrimPrefix(text, "-")) <= 18 && err == nil {
			t.Fatalf("smallInt(%q) not read", text)
		}
	}
}
