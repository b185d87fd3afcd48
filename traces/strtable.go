package traces

import (
	"hash/maphash"
	"math/bits"
	"strings"
)

// stringTable keeps one copy of each string read lately, for a decoder reading many events: a
// run repeats its strings close together (an agent's name event after event, a tool call's id
// in the reply, the message and the transfer that follow), so sharing the strings seen lately
// shares nearly all a recording shares. A table of every string read would grow with the run's
// unique strings (a tool's result, a call id), and looking them up there was a quarter of the
// time taken to read a large trace; here a string goes in a bucket of two chosen by its hash,
// the one read last in front, and the one read longest ago leaves when a third comes.
type stringTable struct {
	seed  maphash.Seed
	mask  uint64
	slots []string // two per bucket
	pack  *stringPack
	// paths keeps, the same way, the string arrays read lately (a run path, a model's tools),
	// keyed by their JSON text: each is one array shared by every event that repeats it.
	pathKeys []string
	paths    [][]string
	// fields holds, for each string field of the format's types (field.slot), the value it had
	// last, when that was written plainly (see decoder.fieldStr).
	fields []string
}

// recentBuckets is the size of the table for a long run: 4096 buckets of two strings take 128
// KB, which stay in a core's cache, and a string read every few thousand events stays in them.
const recentBuckets = 4096

// newStringTable returns a table of about n buckets (a power of two, at least 64) whose new
// strings pack copies.
func newStringTable(n int, pack *stringPack) *stringTable {
	n = 1 << bits.Len(uint(max(n, 64)-1))
	return &stringTable{seed: maphash.MakeSeed(), mask: uint64(n - 1), slots: make([]string, 2*n), pack: pack,
		pathKeys: make([]string, 2*64), paths: make([][]string, 2*64), fields: make([]string, stringSlots.Load())}
}

// get returns the string b holds, the copy read lately when there is one.
func (r *stringTable) get(b []byte) string {
	i := 2 * (maphash.Bytes(r.seed, b) & r.mask)
	s := r.slots[i : i+2 : i+2]
	switch {
	case s[0] == string(b):
		return s[0]
	case s[1] == string(b):
		s[0], s[1] = s[1], s[0]
		return s[0]
	}
	kept := r.pack.add(b)
	s[0], s[1] = kept, s[0]
	return kept
}

// put makes s the copy get returns of its bytes, until it leaves the table.
func (r *stringTable) put(s string) {
	i := 2 * (maphash.String(r.seed, s) & r.mask)
	if r.slots[i] != s {
		r.slots[i], r.slots[i+1] = s, r.slots[i]
	}
}

// path returns the string array read lately whose JSON text is raw, and the copy of raw kept
// with it, or nil.
func (r *stringTable) path(raw []byte) (string, []string) {
	i := 2 * (maphash.Bytes(r.seed, raw) & 63)
	switch {
	case r.pathKeys[i] == string(raw):
	case r.pathKeys[i+1] == string(raw):
		r.pathKeys[i], r.pathKeys[i+1] = r.pathKeys[i+1], r.pathKeys[i]
		r.paths[i], r.paths[i+1] = r.paths[i+1], r.paths[i]
	default:
		return "", nil
	}
	return r.pathKeys[i], r.paths[i]
}

// keepPath records p, read from the JSON text raw, for path to return, and returns the copy of
// raw it keeps.
func (r *stringTable) keepPath(raw []byte, p []string) string {
	i := 2 * (maphash.Bytes(r.seed, raw) & 63)
	r.pathKeys[i+1], r.paths[i+1] = r.pathKeys[i], r.paths[i]
	r.pathKeys[i], r.paths[i] = r.pack.add(raw), p
	return r.pathKeys[i]
}

// stringPack copies strings side by side into blocks, for a trace's tens of thousands of short
// ids, arguments and results: a string allocated alone is rounded up to its size class (17 to 24
// bytes take 24). A nil pack copies each string on its own. A string kept keeps its whole block:
// pack only what lives and dies together.
type stringPack struct{ block strings.Builder }

const (
	// packedMax is the longest string a pack takes: beyond it a string allocated alone wastes
	// little (at most an eighth), and the tail a block leaves unused when the next string does
	// not fit stays small.
	packedMax = 256
	// packBlock is the size blocks grow to, doubling from 512 bytes so that a small trace does
	// not hold a mostly empty block.
	packBlock = 8 << 10
)

// add returns a copy of b, in the current block when it fits there.
func (p *stringPack) add(b []byte) string {
	if p == nil || len(b) > packedMax {
		return string(b)
	}
	if p.block.Cap()-p.block.Len() < len(b) {
		size := max(2*packedMax, min(2*p.block.Cap(), packBlock))
		p.block = strings.Builder{} // the strings already returned keep the old block
		p.block.Grow(size)
	}
	n := p.block.Len()
	p.block.Write(b) // within its capacity: earlier strings of the block stay as they were
	return p.block.String()[n:]
}
