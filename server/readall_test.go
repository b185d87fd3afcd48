package server

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

// readAll reads a body whole in a buffer of its declared size, however the reader hands it over,
// but makes room for no more than trustedRead bytes of a body declared large until they came.
func TestReadAllMakesRoomAsTheBodyComes(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), (9<<20)/16+7) // past trustedRead, not a round size
	for _, c := range []struct {
		name string
		r    io.Reader
		size int64
	}{
		{"declared", bytes.NewReader(body), int64(len(body))},
		{"declared, a byte a read at first", io.MultiReader(iotest.OneByteReader(bytes.NewReader(body[:1000])), bytes.NewReader(body[1000:])), int64(len(body))},
		{"undeclared", bytes.NewReader(body), -1},
		{"declared short", bytes.NewReader(body), int64(len(body)) - 4096},
	} {
		got, err := readAll(c.r, c.size)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%s: read %d bytes (%v), want the %d sent", c.name, len(got), err, len(body))
		}
		// Within the allocator's rounding of its size: not grown by doubling.
		if c.size == int64(len(body)) && cap(got) > len(body)+len(body)/64 {
			t.Errorf("%s: a buffer of %d bytes for a declared body of %d: grown past its size", c.name, cap(got), len(body))
		}
	}
	got, err := readAll(bytes.NewReader([]byte(`{"format":"baton.trace"}`)), 1<<30)
	if err != nil || string(got) != `{"format":"baton.trace"}` {
		t.Fatalf("a small body declared as a GiB: %q, %v", got, err)
	}
	if cap(got) > trustedRead+512 {
		t.Errorf("a small body declared as a GiB took a buffer of %d bytes, want at most %d until more came", cap(got), trustedRead+512)
	}
}
