package traces

import (
	"bytes"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
)

// Reading a large trace's events on several cores: the "events" array is cut where an event
// seems to start, each part is read by a goroutine of its own into its place in the one array,
// each event checked on its own there (ValidateEvent), and the events are then checked in order
// (their seqs, places and input references) as the one-goroutine reading checks them. A cut is
// trusted only once the part before it, read from a real event, ends exactly there. Any problem
// at all (a cut that was not between two events, a count that was off, a file at fault) drops
// what the parts read and reads the array again on one goroutine, which says what is wrong as it
// always has: a faulty file costs two readings, a sound one half of one on two cores.

var (
	// parallelPart is the least text a part takes: below it a goroutine costs more than it saves.
	parallelPart = 4 << 20
	// parallelParts bounds the parts: past a few cores the collector and the single-threaded
	// checking that follows take most of the time anyway. 0 takes one a core (GOMAXPROCS).
	parallelParts = 4
	// partsCores is the cores counted; 0 for GOMAXPROCS. Tests set both.
	partsCores = 0
	// partsRead counts the arrays read in parts, for tests to see that they were.
	partsRead atomic.Int64
)

// eventPart is one part of the events array: the events from offset from (an event's opening
// brace) up to offset to (the next part's from; -1 for the last part, which ends at the array's
// closing bracket), read into events[first:limit].
type eventPart struct {
	from, to     int
	first, limit int
	n            int       // events read
	end          int       // where reading stopped: to, or the closing bracket
	refs         []partRef // the input references of its events that have some
	err          error     // nil when the part was read whole
	d            *decoder
}

// partRef is the input references of the event at index i of its part.
type partRef struct {
	i    int
	refs [2]inputRef
}

var errPartBounds = errors.New("traces: a part of the events array was not between two events")

// parallelEvents reads the events array whose opening bracket is at d.pos into events, a slice
// of length 0 whose capacity eventsIn counted, when it is large enough to be worth cutting. It
// returns the events read and the input references of each, or ok false, with nothing changed
// but the array's contents (cleared again), when the array is to be read on one goroutine.
func (d *decoder) parallelEvents(events []Event) (read []Event, refs func(i int) [2]inputRef, end int, ok bool) {
	start := d.pos + 1 // past '['
	for start < len(d.data) && isSpace(d.data[start]) {
		start++
	}
	rest := len(d.data) - start
	cores := partsCores
	if cores == 0 {
		cores = runtime.GOMAXPROCS(0)
	}
	parts := min(cores, parallelParts, rest/parallelPart)
	if parts < 2 || start >= len(d.data) || d.data[start] != '{' {
		return nil, nil, 0, false
	}
	list := []*eventPart{{from: start}}
	for k := 1; k < parts; k++ {
		cut := nextEventStart(d.data, start+k*rest/parts)
		if cut < 0 || cut <= list[len(list)-1].from {
			break
		}
		list = append(list, &eventPart{from: cut})
	}
	if len(list) < 2 {
		return nil, nil, 0, false
	}
	// Each part's events go where the events before it end, as counted.
	total := 0
	for k, p := range list {
		p.to = -1
		if k+1 < len(list) {
			p.to = list[k+1].from
		}
		p.first = total
		to := p.to
		if to < 0 {
			to = len(d.data)
		}
		total += seqCount(d.data[p.from:to])
	}
	if total > cap(events) {
		return nil, nil, 0, false
	}
	all := events[:total]
	for k, p := range list {
		p.limit = total
		if k+1 < len(list) {
			p.limit = list[k+1].first
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for _, p := range list {
		p.d = &decoder{data: d.data, what: d.what, version: d.version, depth: d.depth + 1,
			path: []pathStep{{name: "events"}}, pack: new(stringPack)}
		p.d.recent = newStringTable(min((p.limit-p.first)/4, recentBuckets), p.d.pack)
		for s := range d.kept {
			p.d.recent.put(s)
		}
		wg.Go(func() {
			p.read(all, &stop)
			if p.err != nil {
				stop.Store(true)
			}
		})
	}
	wg.Wait()
	if stop.Load() {
		clear(all)
		return nil, nil, 0, false
	}
	// Close the gaps a count too high left between parts, and clear what moved.
	n := 0
	for _, p := range list {
		if p.first != n {
			copy(all[n:], all[p.first:p.first+p.n])
		}
		n += p.n
	}
	clear(all[n:])
	// Index the references by the events' final places.
	offsets := make([]int, len(list))
	n = 0
	for k, p := range list {
		offsets[k] = n
		n += p.n
	}
	k, r := 0, 0
	refs = func(i int) [2]inputRef { // called with i increasing
		for k+1 < len(list) && i >= offsets[k+1] {
			k, r = k+1, 0
		}
		p := list[k]
		for r < len(p.refs) && offsets[k]+p.refs[r].i < i {
			r++
		}
		if r < len(p.refs) && offsets[k]+p.refs[r].i == i {
			return p.refs[r].refs
		}
		return [2]inputRef{}
	}
	partsRead.Add(1)
	return all[:n], refs, list[len(list)-1].end, true
}

// read reads the part's events into all[p.first:p.limit].
func (p *eventPart) read(all []Event, stop *atomic.Bool) {
	d := p.d
	d.pos = p.from
	for i := p.first; ; i++ {
		if stop.Load() {
			p.err = errPartBounds
			return
		}
		if i >= p.limit { // more events than counted
			p.err = errPartBounds
			return
		}
		d.path = append(d.path[:1], pathStep{index: i})
		d.refs = [2]inputRef{}
		if err := d.event(&all[i]); err != nil {
			p.err = err
			return
		}
		if err := ValidateEvent(i, all[i]); err != nil { // here, on the part's core, not in order after
			p.err = err
			return
		}
		if d.refs != ([2]inputRef{}) {
			p.refs = append(p.refs, partRef{i: i - p.first, refs: d.refs})
		}
		p.n++
		c, err := d.peek()
		switch {
		case err != nil:
			p.err = err
			return
		case c == ']':
			if p.to >= 0 { // the array ended before the next part began
				p.err = errPartBounds
			}
			p.end = d.pos
			return
		case c != ',':
			p.err = errPartBounds
			return
		}
		d.pos++
		if _, err := d.peek(); err != nil {
			p.err = err
			return
		}
		if p.to >= 0 && d.pos >= p.to {
			if d.pos > p.to { // the cut was inside an event
				p.err = errPartBounds
			}
			p.end = d.pos
			return
		}
	}
}

// nextEventStart returns the offset of the first object at or after from whose first field is
// "seq" and that follows a comma, as an event does in the array: outside any string, since a
// quote in a string is escaped. It may still be an object within an event (a session value),
// which reading the part before it finds out. -1 for none.
func nextEventStart(data []byte, from int) int {
	for from < len(data) {
		i := bytes.Index(data[from:], []byte(`"seq"`))
		if i < 0 {
			return -1
		}
		at := from + i
		from = at + 1
		colon := skipSpace(data, at+len(`"seq"`), 1)
		open := skipSpace(data, at-1, -1)
		if colon >= len(data) || data[colon] != ':' || open < 0 || data[open] != '{' {
			continue
		}
		if comma := skipSpace(data, open-1, -1); comma >= 0 && data[comma] == ',' {
			return open
		}
	}
	return -1
}

// skipSpace returns the offset of the first byte from p on, going by step, that is not JSON
// white space: -1 or len(data) for none.
func skipSpace(data []byte, p, step int) int {
	for p >= 0 && p < len(data) && isSpace(data[p]) {
		p += step
	}
	return p
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
