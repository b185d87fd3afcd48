package web

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/baton-dev/baton/traces"
)

// KeptRows is a run's timeline as FindRows and CountRows serve it, kept once its ViewState has
// gone: of each event, what its row needs that the event alone does not say (its agent, its
// kind's group, whether it failed, the call it echoes, whether it was seen through callbacks
// only: 4 bytes), with the order numbers of its transfers and where its inputs' new messages
// begin. The rows themselves are made from the run's events, read back from its recording as a
// request needs them: the rows asked for, and, for a search, every event's search text, whose
// matches of the text searched last are kept (a bit an event), for the page's next requests of
// the same search. The rows are those the ViewState it was kept from serves, as of its newest
// event. Safe for concurrent use.
type KeptRows struct {
	rows    []keptRow  // by seq - 1
	agents  []string   // by keptRow.agent
	colours []int      // the agents' colours, likewise
	groups  []string   // by keptRow.group
	orders  []seqValue // the transfers' order numbers, by seq
	fresh   []seqValue // where each input's new messages begin, when past 0, by seq
	echoes  int        // how many rows the timeline folds into their call's

	mu     sync.Mutex // held through a search's pass over the events
	text   string     // the text searched last ("": none yet)
	found  []uint64   // the events whose search text holds text, a bit by seq - 1
	passes int        // how many passes over the events searches made: what a test reads
}

// keptRow is what the row of one event needs beyond the event.
type keptRow struct {
	agent uint16
	group uint8
	// bits: keptFailed, keptCallbacksOnly, then, from keptEchoShift on, how many events back the
	// call it echoes is (echoed looks at most echoWindow back).
	bits uint8
}

const (
	keptFailed = 1 << iota
	keptCallbacksOnly
	keptEchoShift = iota
)

// seqValue is a number kept for one event, by its seq.
type seqValue struct{ seq, n uint32 }

// KeepRows returns what FindRows and CountRows need of the run, beside its events, to serve its
// rows once v has gone (KeptRows), as of v's newest event; nil when the run is too large to be
// kept so (more than 65,536 agents, 256 kinds' groups or 2³² events). It reads every event's
// notes once, not their content.
func (v *ViewState) KeepRows() *KeptRows {
	a := v.a
	ev, x, t := a.tr.Events, a.timeline, a.tree
	if len(ev) >= math.MaxUint32 {
		return nil
	}
	k := &KeptRows{rows: make([]keptRow, len(ev))}
	agents, groups := map[string]int{}, map[string]int{}
	index := func(m map[string]int, list *[]string, s string, most int) (int, bool) {
		i, ok := m[s]
		if !ok {
			if len(*list) > most {
				return 0, false
			}
			// A copy: an event's strings may be read in place from its recording's log, which
			// whoever keeps k does not mean to keep alive.
			s = strings.Clone(s)
			i = len(*list)
			m[s], *list = i, append(*list, s)
		}
		return i, true
	}
	for i := range ev {
		e := &ev[i]
		if e.Seq != int64(i+1) {
			return nil // a run's events are numbered from 1 with no gaps (traces.Validate)
		}
		agent, ok1 := index(agents, &k.agents, e.Agent, math.MaxUint16)
		group, ok2 := index(groups, &k.groups, KindGroup(e.Kind), math.MaxUint8)
		if !ok1 || !ok2 {
			return nil
		}
		r := keptRow{agent: uint16(agent), group: uint8(group)}
		if rowFailed(e, t) {
			r.bits |= keptFailed
		}
		if x.callbacksOnly[e.Seq] {
			r.bits |= keptCallbacksOnly
		}
		if of := x.echoOf[e.Seq]; of > 0 {
			r.bits |= uint8(e.Seq-of) << keptEchoShift
			k.echoes++
		}
		k.rows[i] = r
		if o := transferOrder(e, t); o > 0 {
			k.orders = append(k.orders, seqValue{uint32(e.Seq), uint32(o)})
		}
		if n := x.freshFrom[e.Seq]; n > 0 {
			k.fresh = append(k.fresh, seqValue{uint32(e.Seq), uint32(n)})
		}
	}
	for _, name := range k.agents {
		k.colours = append(k.colours, t.roster.colour(name))
	}
	k.orders, k.fresh = slices.Clone(k.orders), slices.Clone(k.fresh) // not the room appends left
	return k
}

// Seq returns the seq of the newest event k serves the rows of.
func (k *KeptRows) Seq() int64 { return int64(len(k.rows)) }

// Size returns about how many bytes k holds: its notes and the matches of the text searched
// last, not the names it shares with the run.
func (k *KeptRows) Size() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	const row, value, word, name = 4, 8, 8, 16 + 8 // a string's header, an int
	return len(k.rows)*row + (len(k.orders)+len(k.fresh))*value + len(k.found)*word + (len(k.agents)+len(k.groups))*name
}

// Searches returns how many passes over the run's events k's searches have made.
func (k *KeptRows) Searches() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.passes
}

// echoOf returns the seq of the call the row of event i (seq i+1) echoes, 0 when none.
func (k *KeptRows) echoOf(i int) int64 {
	if back := k.rows[i].bits >> keptEchoShift; back > 0 {
		return int64(i+1) - int64(back)
	}
	return 0
}

// admits reports whether the row of event i passes f, but for f's text.
func (k *KeptRows) admits(f RowFilter, i int) bool {
	r := k.rows[i]
	return f.admits(k.agents[r.agent], k.groups[r.group], r.bits>>keptEchoShift > 0, r.bits&keptFailed != 0)
}

// valueAt returns the value vs keeps for seq, 0 when none.
func valueAt(vs []seqValue, seq int64) int {
	i, ok := slices.BinarySearchFunc(vs, seq, func(v seqValue, s int64) int { return cmp.Compare(int64(v.seq), s) })
	if !ok {
		return 0
	}
	return int(vs[i].n)
}

// CountRows is ViewState.CountRows of the run k was kept from, whose recording is rec. With a
// text it reads every event back, unless the last search was of the same text.
func (k *KeptRows) CountRows(rec *traces.Recording, f RowFilter) (matches, rows int) {
	if !f.Active() {
		return len(k.rows) - k.echoes, len(k.rows)
	}
	f.Text = strings.ToLower(strings.TrimSpace(f.Text))
	var found []uint64
	if f.Text != "" {
		found = k.search(rec, f.Text)
	}
	for i := range k.rows {
		if k.admits(f, i) && (found == nil || found[i>>6]&(1<<(i&63)) != 0) {
			matches++
		}
	}
	return matches, len(k.rows)
}

// FindRows is ViewState.FindRows of the run k was kept from, whose recording is rec (holding
// its events through Seq at least): it reads back the events of the rows it returns (with a
// text, every event once, as CountRows says).
func (k *KeptRows) FindRows(rec *traces.Recording, f RowFilter, after, before int64, limit int, forward bool) RowPage {
	n := int64(len(k.rows))
	lo, hi := int(min(max(after, 0), n)), int(n)
	if before > 0 {
		hi = int(min(max(before-1, 0), n))
	}
	hi = max(hi, lo)
	var p RowPage
	limit = max(limit, 1)
	var found []uint64
	if f.Text = strings.ToLower(strings.TrimSpace(f.Text)); f.Text != "" {
		found = k.search(rec, f.Text)
	}
	step, i, end := 1, lo, hi
	if !forward {
		step, i, end = -1, hi-1, lo-1
	}
	var picked []int
	for ; i != end && len(picked) < limit; i += step {
		if k.admits(f, i) && (found == nil || found[i>>6]&(1<<(i&63)) != 0) {
			picked = append(picked, i)
		}
	}
	p.Reached = reached(i, end, forward, after, before, func(j int) int64 { return int64(j + 1) })
	if !forward {
		slices.Reverse(picked)
	}
	p.Rows = k.rowsOf(rec, picked)
	return p
}

// rowsOf returns the rows of the events picked (indices, ascending), read back from rec a run of
// consecutive ones at a time.
func (k *KeptRows) rowsOf(rec *traces.Recording, picked []int) []Row {
	var rows []Row
	var batch []traces.Event
	var sub *traces.Subscription // one reader: the inputs it decodes for a row serve the next
	for len(picked) > 0 {
		n := 1
		for n < len(picked) && picked[n] == picked[n-1]+1 {
			n++
		}
		batch = slices.Grow(batch[:0], n)[:n]
		if sub == nil {
			sub = rec.Subscribe(int64(picked[0]))
		}
		sub.Skip(int64(picked[0]))
		got := readEvents(sub, batch)
		for j := range got {
			rows = append(rows, k.row(&batch[j]))
		}
		picked = picked[n:]
	}
	return rows
}

// row returns the row of e, one of the run's events.
func (k *KeptRows) row(e *traces.Event) Row {
	i := int(e.Seq - 1)
	r := k.rows[i]
	return rowOf(e, rowNotes{colour: k.colours[r.agent], order: valueAt(k.orders, e.Seq), failed: r.bits&keptFailed != 0,
		echoOf: k.echoOf(i), callbacksOnly: r.bits&keptCallbacksOnly != 0, fresh: valueAt(k.fresh, e.Seq)})
}

// readEvents reads into p the events sub has next, as many as fit, and returns how many.
func readEvents(sub *traces.Subscription, p []traces.Event) int {
	n := 0
	for n < len(p) {
		got, _ := sub.Poll(p[n:])
		if got == 0 {
			break
		}
		n += got
	}
	return n
}

// searchBatch is how many events a search reads back at a time.
const searchBatch = 256

// search returns the events whose search text holds text (lower-cased and trimmed), a bit by
// seq - 1: kept from the last search when it was of text, else found by reading every event
// back from rec, on every core, each core a range of the run.
func (k *KeptRows) search(rec *traces.Recording, text string) []uint64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.found != nil && k.text == text {
		return k.found
	}
	n := len(k.rows)
	found := make([]uint64, (n+63)/64)
	parts := max(1, min(runtime.GOMAXPROCS(0), n/(4*searchBatch)))
	per := (len(found) + parts - 1) / parts * 64 // whole words: no two parts write one
	var wg sync.WaitGroup
	for from := 0; from < n; from += per {
		to := min(from+per, n)
		wg.Go(func() {
			sub := rec.Subscribe(int64(from))
			batch := make([]traces.Event, searchBatch)
			for i := from; i < to; {
				got := readEvents(sub, batch[:min(searchBatch, to-i)])
				if got == 0 {
					return // the recording holds fewer: none of them is found
				}
				for j := range got {
					e := &batch[j]
					if strings.Contains(searchText(e, rowSummary(e), valueAt(k.fresh, e.Seq)), text) {
						found[(i+j)>>6] |= 1 << ((i + j) & 63)
					}
				}
				i += got
			}
		})
	}
	wg.Wait()
	k.text, k.found = text, found
	k.passes++
	return found
}
