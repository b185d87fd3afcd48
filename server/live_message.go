package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
)

// The run page's live messages: what a feed renders of the page's parts, once per window, and
// the message that brings a page at one seq to that render, built once for every page there.

// LiveMessage is one message of the run page's websocket (GET /runs/:id/live): the HTML fragments
// that bring the page from its previous seq to Seq, in the order the page applies them; the run's
// status as of Seq; and the run's pace, absent for a run not started here, which another page may
// have changed. Seq comes first, so that a reader may take it without decoding the rest.
//
// The feed writes it in pieces (liveMsg): the head is the type's own encoding/json encoding with
// no fragments, cut where its empty list would close (so Fragments stays the last field), then the
// fragments as templates encoded them, once for every page. A test reads the socket's messages
// back through this type and holds that each is its encoding, byte for byte, with HTML unescaped.
type LiveMessage struct {
	Seq       int64                `json:"seq"`
	Status    traces.Status        `json:"status"`
	PaceMS    *int64               `json:"pace_ms,omitempty"`
	Fragments []templates.Fragment `json:"fragments"`
}

// head returns m's JSON up to the first of its fragments, which it leaves out: the caller follows
// it with the fragments' JSON, comma-separated, then liveEnd.
func (m LiveMessage) head() ([]byte, error) {
	m.Fragments = []templates.Fragment{}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode live message at %d: %w", m.Seq, err)
	}
	n := len(data) - len(liveEnd)
	return data[:n:n], nil
}

// liveEnd closes a live message after its fragments.
var liveEnd = []byte(`]}`)

// liveMessage returns the next message of a run page that shows page, or nil when the page is up
// to date (pace is the run's pace, nil when unknown); see LiveMessage for its shape. It returns the
// page as the message leaves it. The page is brought to the seq the parts were last rendered at,
// which is the newest event, or one at most a window old: all events since then come in the next
// message, woken by wake. A page far behind gets the timeline rows in parts of about maxFrame,
// the other parts with the last of them. over is set once the run has ended and the page has it
// all.
func (f *feed) liveMessage(ctx context.Context, page pageState, pace *int64) (msg [][]byte, next pageState, over bool, wake <-chan struct{}, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	head := f.view.Seq()
	wake = f.live
	paced := pace == nil || *pace == page.paceMS
	if head <= page.seq && f.view.Status() == page.status && paced {
		return nil, page, f.done, wake, nil
	}
	if f.parts == nil || f.rendered < head && time.Since(f.lastDraw) >= f.window {
		if err := f.renderLocked(ctx, page.seq); err != nil {
			return nil, page, false, wake, err
		}
	}
	shown := f.rendered
	if shown <= page.seq && f.shown == page.status && paced {
		if shown < head {
			f.scheduleLocked() // the news waits for the window's end
		}
		return nil, page, false, wake, nil
	}
	// Pages at the same place (the usual case: every page follows the run) share one message.
	key := liveKey{page: page, pace: -1, draws: f.draws}
	if pace != nil {
		key.pace = *pace
	}
	if f.msg == nil || f.msg.key != key {
		m, err := f.buildLocked(ctx, page, pace)
		if err != nil {
			return nil, page, false, wake, err
		}
		m.key = key
		f.msg = m
	}
	m := f.msg
	return m.pieces, m.next, f.done && m.caughtUp && shown >= head, wake, nil
}

// liveKey says what a live message was built for: the page it starts from, the pace it tells
// (-1: none) and the render it carries.
type liveKey struct {
	page  pageState
	pace  int64
	draws int
}

// liveMsg is a live message built once for every page at its key's place. Its pieces, joined,
// are the message: they are the feed's own parts and rows as encoded once (never changed after,
// only replaced), which each socket copies straight into its write buffer, so that the message
// is never put together in a buffer of its own.
type liveMsg struct {
	key      liveKey
	pieces   [][]byte
	next     pageState
	caughtUp bool // the page has every row of the render, and its parts
}

// buildLocked builds the live message that brings page to the render (see liveMessage). The
// caller holds f.mu.
func (f *feed) buildLocked(ctx context.Context, page pageState, pace *int64) (*liveMsg, error) {
	shown := f.rendered
	var rows [][]byte // the rows' HTML as JSON string content
	size := 0         // their bytes
	// Rows the page has that were drawn again since: the view state keeps which, for the run's life.
	for _, seq := range f.view.Amended(page.seq, shown) {
		r, err := f.rowLocked(ctx, seq)
		if err != nil {
			return nil, err
		}
		rows, size = append(rows, r), size+len(r)
	}
	seq := page.seq
scan:
	for size < maxFrame && seq < shown {
		for _, e := range f.view.Events(seq, 64) {
			if e.Seq > shown {
				break scan
			}
			r, err := f.rowLocked(ctx, e.Seq)
			if err != nil {
				return nil, err
			}
			rows, size, seq = append(rows, r), size+len(r), e.Seq
			if size >= maxFrame {
				break
			}
		}
	}
	// A page at or past the render (after may be beyond it) has the rows: it gets the status and
	// parts now; else the rest, and those with it, come next.
	caughtUp := seq >= shown
	next := pageState{seq: seq, status: page.status, paceMS: page.paceMS}
	if caughtUp {
		next.status = f.shown
	}
	if pace != nil {
		next.paceMS = *pace
	}
	// The sequence view's delta depends on what the page has, so it is made per page place
	// rather than per render: what the events this message moves the page over changed. It
	// goes with every message that moves the page on, caught up or not, so that a page fed
	// its rows in parts gets each part's share once, and what it costs is what it holds.
	var seqData []byte
	if seq > page.seq {
		var err error
		if seqData, err = templates.EncodeSequence(ctx, f.view.Sequence(page.seq, seq)); err != nil {
			return nil, err
		}
	}
	// The head, then the fragments, each piece encoded once for all pages.
	head, err := LiveMessage{Seq: next.seq, Status: next.status, PaceMS: pace}.head()
	if err != nil {
		return nil, err
	}
	pieces := make([][]byte, 1, len(f.parts)*2+len(rows)+8)
	pieces[0] = head
	sep := func() {
		if len(pieces) > 1 {
			pieces = append(pieces, comma)
		}
	}
	for _, p := range f.parts {
		if caughtUp && p.at > page.seq { // a page caught up gets the parts rendered since its seq
			sep()
			pieces = append(pieces, p.json)
		}
	}
	if seqData != nil {
		sep()
		pieces = append(pieces, seqData)
	}
	if len(rows) > 0 {
		sep()
		pieces = templates.AppendRows(pieces, rows...)
	}
	pieces = append(pieces, liveEnd)
	return &liveMsg{pieces: pieces, next: next, caughtUp: caughtUp}, nil
}

// comma parts a live message's fragments.
var comma = []byte(`,`)

// renderLocked renders the parts of the page that changed since they were last rendered, and
// forgets the rows drawn again since; a first render flashes the transfers after seq fresh. The
// caller holds f.mu.
func (f *feed) renderLocked(ctx context.Context, fresh int64) error {
	head := f.view.Seq()
	if f.rendered >= head && f.parts != nil {
		return nil
	}
	f.lastDraw = time.Now()
	// Only the parts that changed since the last render are rendered: at a fast pace most events
	// (a message, a tool call) leave the tree, the costliest part, as it was.
	u := f.view.Update(f.rendered)
	if f.rendered == 0 {
		// The first render, or the tree changed: every part, the agent filter included.
		u = f.view.Update(-1)
		u.From = fresh
		f.parts = nil
	}
	frags, err := templates.EncodeParts(ctx, u)
	if err != nil {
		return err
	}
	for _, fr := range frags {
		// A whole part (the tree, the histories) holds every piece of it (a node, an agent's
		// history) as it is now: a page that takes it needs no older piece, and a piece
		// rendered later comes after it, so that it is applied after it.
		f.parts = slices.DeleteFunc(f.parts, func(q part) bool { return templates.WholeOf(q.target) == fr.Target })
		p := part{target: fr.Target, json: fr.JSON, at: head}
		if i := slices.IndexFunc(f.parts, func(q part) bool { return q.target == fr.Target }); i >= 0 {
			if !bytes.Equal(f.parts[i].json, fr.JSON) { // a page that has it needs it not again
				f.parts[i] = p
			}
		} else {
			f.parts = append(f.parts, p)
		}
	}
	if err := f.digestPartsLocked(ctx); err != nil {
		return err
	}
	for _, r := range u.Amended {
		f.rows.drop(r.Seq) // rendered again on demand
	}
	f.rendered, f.shown = head, f.view.Status()
	f.draws++
	return nil
}

// rowLocked returns the HTML of event seq's timeline row as JSON string content, rendered once.
// The caller holds f.mu.
func (f *feed) rowLocked(ctx context.Context, seq int64) ([]byte, error) {
	if r, ok := f.rows.get(seq); ok {
		return r, nil
	}
	rows := f.view.Rows(seq-1, 1)
	if len(rows) == 0 || rows[0].Seq != seq {
		return nil, fmt.Errorf("no timeline row for event %d", seq)
	}
	r, err := templates.EncodeRow(ctx, rows[0])
	if err != nil {
		return nil, err
	}
	f.rows.put(seq, f.view.Seq(), r)
	return r, nil
}
