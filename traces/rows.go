package traces

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Reading a run's rows (one event a row, as a store keeps them) on several cores: the rows
// arrive a batch at a time (a store's read, row after row), and once they are many each batch
// is read by one of a few goroutines as soon as it has arrived, beside the reading of the next
// ones, each event into its place in the one array and checked on its own (ValidateEvent). The
// goroutine that hands out the batches then checks the events in order (their seqs, places and
// input references) as their batches are done, as Decode does. More rows than were counted are
// read again, counted; any problem in them drops what was read and reads the rows again one by
// one, which says what is wrong as it always has.

// batchRows is the most rows DecodeRows hands a goroutine at a time: a sixteenth of them, so
// that the goroutines end together.
const batchRows = 1024

// DecodeRows reads a whole run's events, one JSON object a row in seq order, as a new
// EventDecoder's Decode reads them one after another: the same events, and on a problem the same
// error. A long run's rows are read on several cores (see DecodeRowsFrom).
func DecodeRows(rows [][]byte) ([]Event, error) {
	rest, size := rows, max(1, min(batchRows, len(rows)/16))
	return DecodeRowsFrom(len(rows), func() [][]byte {
		batch := rest[:min(len(rest), size)]
		rest = rest[len(batch):]
		return batch
	})
}

// DecodeRowsFrom is DecodeRows of the rows next returns, a batch at a time, none at the end:
// as a store reads them back, each batch read on one of several cores as soon as it has arrived,
// once they add up to more than twice parallelPart bytes (before that, they wait for it). count
// is how many rows there are to be: more than that (a run that grew since it was counted) costs
// reading them all again as DecodeRows does, and any problem reading them again one by one,
// with the same result.
func DecodeRowsFrom(count int, next func() [][]byte) ([]Event, error) {
	p := &rowParts{count: count}
	for {
		rows := next()
		if len(rows) == 0 {
			break
		}
		p.add(rows)
	}
	if events, ok := p.finish(); ok {
		return events, nil
	}
	var rows [][]byte
	if len(p.batches) == 1 {
		rows = p.batches[0].rows
	} else {
		rows = make([][]byte, 0, p.n)
		for _, b := range p.batches {
			rows = append(rows, b.rows...)
		}
	}
	if p.over {
		return DecodeRows(rows) // counted now
	}
	dec := NewEventDecoder()
	events := make([]Event, len(rows))
	for i, data := range rows {
		ev, err := dec.Decode(data)
		if err != nil {
			return nil, err
		}
		events[i] = ev
	}
	return events, nil
}

// rowParts reads a run's rows, handed to it a batch at a time (add), on several goroutines.
type rowParts struct {
	count   int  // the rows expected
	over    bool // more rows came
	batches []*rowBatch
	n, size int // the rows and bytes added so far
	// Once the rows are worth it (start): where the goroutines read them to, and their input
	// references, by index.
	events  []Event
	refs    [][2]inputRef
	started bool
	workers sync.WaitGroup
	cores   int         // the goroutines reading once every row has arrived
	failed  atomic.Bool // a row had a problem, or there were more than counted: read in one
	// The batches handed out and not yet taken, and whether all have been: a queue the store's
	// read never waits on (a channel's room ran out, and the read waited for the decoding).
	mu     sync.Mutex
	ready  *sync.Cond // on mu: a batch was handed out, or the last
	queue  []*rowBatch
	closed bool
}

// rowBatch is consecutive rows, whose events go to events[first:first+len(rows)].
type rowBatch struct {
	rows  [][]byte
	first int
	sent  bool          // handed to the goroutines
	done  chan struct{} // closed once they have read it, or given up
}

// add takes the next batch of rows, and hands it to the goroutines reading them, started once
// the rows are worth it.
func (p *rowParts) add(rows [][]byte) {
	b := &rowBatch{rows: rows, first: p.n, done: make(chan struct{})}
	p.batches = append(p.batches, b)
	p.n += len(rows)
	for _, r := range rows {
		p.size += len(r)
	}
	if p.n > p.count && !p.over {
		p.over = true // no room for them: read again, counted
		p.failed.Store(true)
	}
	if p.failed.Load() {
		return
	}
	if !p.started && !p.start() {
		return
	}
	p.hand(b)
}

// hand hands b to the goroutines reading the rows.
func (p *rowParts) hand(b *rowBatch) {
	b.sent = true
	p.mu.Lock()
	p.queue = append(p.queue, b)
	p.mu.Unlock()
	p.ready.Signal()
}

// start starts the goroutines when the rows so far are worth reading on several, handing them
// those; false when they are not (yet).
func (p *rowParts) start() bool {
	cores := partsCores
	if cores == 0 {
		cores = runtime.GOMAXPROCS(0)
	}
	workers := min(cores, parallelParts)
	if workers < 2 || p.size < 2*parallelPart {
		return false
	}
	p.events = make([]Event, p.count)
	p.refs = make([][2]inputRef, p.count)
	p.started, p.ready = true, sync.NewCond(&p.mu)
	// One core fewer while the rows arrive: the goroutine that hands them over (a store's read,
	// its system calls) would otherwise wait for a core behind them, and the rows come slower.
	p.cores = workers
	p.spawn(workers - 1)
	for _, b := range p.batches[:len(p.batches)-1] { // add hands out the last
		p.hand(b)
	}
	return true
}

// spawn starts n more goroutines reading the batches handed out.
func (p *rowParts) spawn(n int) {
	for range n {
		p.workers.Go(func() { p.read(min(p.count/p.cores/4, recentBuckets)) })
	}
}

// read reads the batches handed out, with a table of recent strings of about buckets buckets,
// until there are none.
func (p *rowParts) read(buckets int) {
	pack := new(stringPack)
	d := &decoder{what: "event", version: FormatVersion, pack: pack, recent: newStringTable(buckets, pack)}
	var e *Event
	object := func() error { return d.object(eventPlan.fields, unsafe.Pointer(e)) }
	for {
		p.mu.Lock()
		for len(p.queue) == 0 && !p.closed {
			p.ready.Wait()
		}
		if len(p.queue) == 0 {
			p.mu.Unlock()
			return
		}
		b := p.queue[0]
		p.queue = p.queue[1:]
		p.mu.Unlock()
		for j, row := range b.rows {
			if p.failed.Load() {
				break
			}
			// One decoder for all rows, each read as a new one would read it.
			i := b.first + j
			d.data, d.pos, d.depth, d.refs = row, 0, 0, [2]inputRef{}
			d.path = append(d.path[:0], pathStep{name: "events"}, pathStep{index: i})
			e = &p.events[i]
			if d.document(object) != nil || ValidateEvent(i, *e) != nil {
				p.failed.Store(true)
				break
			}
			p.refs[i] = d.refs
		}
		close(b.done)
	}
}

// finish checks the events in order as their batches are read, and returns them; false when the
// rows were not read on several goroutines or any had a problem.
func (p *rowParts) finish() ([]Event, bool) {
	if !p.started {
		return nil, false
	}
	p.spawn(1)
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.ready.Broadcast()
	ok := p.check()
	if !ok {
		p.failed.Store(true) // the goroutines skip the rest
	}
	p.workers.Wait()
	if !ok {
		return nil, false
	}
	partsRead.Add(1)
	return p.events[:p.n], true
}

// check checks the events in order, as Decode does, each batch once it is read.
func (p *rowParts) check() bool {
	st := newEventState()
	st.validated = true
	for _, b := range p.batches {
		if !b.sent {
			return false
		}
		<-b.done
		if p.failed.Load() {
			return false
		}
		for j, row := range b.rows {
			i := b.first + j
			st.read += int64(len(row))
			if st.accept(i, &p.events[i], &p.refs[i]) != nil {
				return false
			}
		}
	}
	return true
}
