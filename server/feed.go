package server

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/baton-dev/baton/internal/prices"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// maxFrame bounds the bytes of events or rows one websocket message carries (one event or row
// more when a single one is larger).
const maxFrame = 256 << 10

// liveWindow is how long a run's page parts stay as rendered before news renders them again: at
// 1,000 events a second, a page gets one update every few events with all their rows rather than
// one per event, and the server renders the tree, header and session once per window, not once
// per event. An event after a quiet spell is rendered at once.
const liveWindow = 2 * time.Millisecond

// feeds holds one feed per run that a page or a websocket follows.
type feeds struct {
	mu      sync.Mutex
	m       map[*traces.Recording]*feed
	window  time.Duration // liveWindow, unless a benchmark compares another
	keep    int           // keptEvents, unless a test asks for fewer
	travels []travelOf    // the runs travelled in last, newest first, at most keptTravels
	prices  prices.Table  // what model calls cost, on every view
	// idle is the feed of a finished run that its last user released within linger, kept for
	// the requests that follow a page of it (see release); nil when none.
	idle    *feed
	idleGen int // counts the feeds made idle, so that a timer knows its own
	linger  time.Duration
	// afterFunc is time.AfterFunc, which a test replaces to end a linger without waiting for it.
	afterFunc func(time.Duration, func()) *time.Timer
	made      int // feeds made so far: what a test reads to see a page served without one
	digests   *digestCache
	warm      sync.WaitGroup // the imports' pages being made (warmRun)
	cold      bool           // no page is begun any more (waitWarm): guarded by mu, as warm's Add is
}

// feedLinger is how long the feed of a finished run stays after its last user released it: a
// page's own requests come right after it (its socket, while it may be resumed; its Session and
// Sequence tabs; its older rows; a step in time), and each would otherwise build the run's view
// state again from every event (seconds, for a million). One feed at most waits so: the newest.
const feedLinger = 20 * time.Second

// travelOf is a run's time-travel copies (web.Travel).
type travelOf struct {
	rec    *traces.Recording
	travel *web.Travel
}

// keptTravels is how many runs keep their time-travel copies: those of the runs travelled in
// last, whether a page still follows them or not (a finished run's page holds no feed).
const keptTravels = 4

// travel returns rec's web.Travel, made when rec is not one of the runs travelled in last.
func (fs *feeds) travel(rec *traces.Recording) *web.Travel {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	i := slices.IndexFunc(fs.travels, func(t travelOf) bool { return t.rec == rec })
	t := travelOf{rec: rec, travel: web.NewTravel(web.WithPrices(fs.prices))}
	if i >= 0 {
		t = fs.travels[i]
		fs.travels = slices.Delete(fs.travels, i, i+1)
	}
	fs.travels = slices.Insert(fs.travels, 0, t)
	fs.travels = fs.travels[:min(len(fs.travels), keptTravels)]
	return t.travel
}

// feed is what a run's viewers share: one subscription to the recording, read by one goroutine,
// one view state fed by it, and what was encoded or rendered from it, each once for all viewers:
// the newest events' JSON and timeline rows' HTML, and the latest of each replaceable part of the
// page. Viewers read it from where they are (a seq) without a queue of their own, so a viewer that
// reads is never dropped for being behind; only one that does not take a message in time is cut.
type feed struct {
	rec *traces.Recording

	mu     sync.Mutex
	users  int                // guarded by feeds.mu
	stop   context.CancelFunc // ends the goroutine that reads the run; nil once stopped or done
	view   *web.ViewState
	agents []traces.Agent // the tree view was built on
	done   bool           // the run ended: no events until it is resumed
	wake   chan struct{}  // closed, and replaced, when events arrive or done is set

	// Run pages wait on live, closed and replaced at most once per window: at once when news
	// comes after a quiet spell, else by a timer (armed) at the window's end.
	window time.Duration
	live   chan struct{}
	armed  bool

	enc      traces.EventEncoder // the input references of the events taken in
	refs     []traces.InputRefs  // by seq-1: those each event is sent with on the events socket
	encoded  seqCache            // the newest events' JSON, with refs, made on first demand
	rows     seqCache            // the newest timeline rows' HTML as JSON string content, made on first demand
	prices   prices.Table        // what model calls cost, on every view
	parts    []part              // the latest render of each replaceable part
	rendered int64               // the seq the parts were rendered at
	shown    traces.Status       // the run's status as of rendered
	lastDraw time.Time           // when the parts were last rendered
	draws    int                 // renders so far
	msg      *liveMsg            // the live message built last, for the next page at its place

	dig     digest       // the handoff findings and story (digest.go)
	digests *digestCache // those of the finished runs, kept past their feeds
}

// part is the latest render of one replaceable fragment of the run page, as JSON, with the seq
// it was rendered at: a viewer whose page is older needs it.
type part struct {
	target string
	json   []byte
	at     int64
}

// acquire returns rec's feed, started and holding every event recorded so far. Call release when
// done with it. The feed takes in the run's events after fs is let go: the first viewer of a run
// of a million events waits seconds for them, and the viewers of every other run must not.
func (fs *feeds) acquire(rec *traces.Recording) *feed {
	f := fs.join(rec)
	f.follow()
	return f
}

// join returns rec's feed, made when it has none, counting one user more.
func (fs *feeds) join(rec *traces.Recording) *feed {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.m == nil {
		fs.m = make(map[*traces.Recording]*feed)
	}
	f := fs.m[rec]
	if f != nil && f == fs.idle {
		fs.idle = nil
	}
	if f == nil {
		keep := fs.keep
		if keep <= 0 {
			keep = keptEvents
		}
		f = &feed{rec: rec, wake: make(chan struct{}), live: make(chan struct{}), window: fs.window,
			encoded: newSeqCache(keep), rows: newSeqCache(keep), prices: fs.prices, digests: fs.digests}
		f.agents = rec.Agents()
		f.view = web.NewViewState(runBeforeEvents(rec), f.agents, web.WithPrices(f.prices))
		fs.m[rec] = f
		fs.made++
	}
	f.users++
	return f
}

// release gives back a feed from acquire; the last user stops it, at once for a run that goes
// on, after fs.linger for a finished one (unless it is acquired again meanwhile).
func (fs *feeds) release(f *feed) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f.users--; f.users > 0 {
		return
	}
	f.mu.Lock()
	done := f.done
	f.mu.Unlock()
	if !done || fs.linger <= 0 {
		fs.retireLocked(f)
		return
	}
	if fs.idle != nil {
		fs.retireLocked(fs.idle)
	}
	fs.idle = f
	fs.idleGen++
	gen := fs.idleGen
	after := fs.afterFunc
	if after == nil {
		after = time.AfterFunc
	}
	// The timer knows its feed by gen, not by holding it: one acquired or replaced meanwhile (a
	// gigabyte for a million events) is not kept alive by the timer until it fires.
	after(fs.linger, func() {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		if fs.idle != nil && fs.idleGen == gen { // else acquired since, or another took its place
			idle := fs.idle
			fs.idle = nil
			fs.retireLocked(idle)
		}
	})
}

// retireLocked drops f, which has no user, as dropLocked does, and, when f's run's page is kept,
// keeps beside it what its script fetches (its tabs, its older rows), made from f's view state
// on a goroutine (keepFetches): a page shown after f has gone is then served whole without
// taking the run in again. The caller holds fs.mu.
func (fs *feeds) retireLocked(f *feed) {
	fs.dropLocked(f)
	f.mu.Lock()
	done := f.done
	f.mu.Unlock()
	if !done || fs.cold {
		return // shutting down, or a run going on: its page is not kept
	}
	fs.warm.Add(1) // never once waitWarm waits (cold, under mu)
	go func() {
		defer fs.warm.Done()
		f.keepFetches()
	}()
}

// dropLocked forgets f, which has no user, and stops its reading. The caller holds fs.mu.
func (fs *feeds) dropLocked(f *feed) {
	delete(fs.m, f.rec)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stop != nil {
		f.stop()
		f.stop = nil
	}
}

// runBeforeEvents is rec's run as it stood before its events: running. The events then say how it
// went on, its run.finished how it ended. The run's own status can be ahead of the events a feed
// has: a viewer reads only what the store has committed, and a run may have ended meanwhile.
func runBeforeEvents(rec *traces.Recording) traces.Run {
	run := rec.Run()
	run.Status, run.EndedAt, run.Error = traces.StatusRunning, nil, ""
	return run
}

// feedBatch is how many events the feed takes in at a time.
const feedBatch = 64

// follow subscribes f to the run after its newest event, unless it follows it already, and takes
// in what the recording holds so far before returning. A run that ended is followed again when it
// was resumed since, even when the resumed part has ended too.
func (f *feed) follow() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stop != nil {
		return
	}
	if f.done {
		select {
		case <-f.rec.Done():
			if f.view.Seq() >= f.rec.Len() {
				return // still over
			}
			// Resumed and ended again while no one followed: take in the rest below.
		default:
		}
		f.done = false
	}
	sub := f.rec.Subscribe(f.view.Seq())
	// Room for what the recording holds already: a large run opened at once would otherwise be
	// copied, and its copies collected, at each doubling of the events it has taken in.
	more := int(max(0, f.rec.Len()-f.view.Seq()))
	f.view.Grow(more)
	f.refs = slices.Grow(f.refs, more)
	// Take in what the recording holds now, so that what is rendered next is the run as it stands.
	batch := make([]traces.Event, feedBatch)
	for {
		n, err := sub.Poll(batch)
		f.addLocked(batch[:n], false)
		if err == io.EOF {
			f.endLocked()
			return
		}
		if n == 0 { // nothing more yet
			break
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	f.stop = stop
	go f.consume(ctx, sub, batch)
}

// consume takes in sub's events as they come, as many at a time as batch holds, until the run
// ends or ctx does (the feed was released).
func (f *feed) consume(ctx context.Context, sub *traces.Subscription, batch []traces.Event) {
	for {
		n, err := sub.Read(ctx, batch)
		f.mu.Lock()
		if ctx.Err() != nil { // released: stopped on purpose
			f.mu.Unlock()
			return
		}
		f.addLocked(batch[:n], false)
		if err != nil { // io.EOF: the run has ended
			f.stop()
			f.endLocked()
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
	}
}

// endLocked marks f done: the run ended and f has every event. Its page is made and kept then
// (pageLocked), for the run's next first view: a feed of a million events takes seconds to make
// again once it has gone. The caller holds f.mu.
func (f *feed) endLocked() {
	f.stop, f.done = nil, true
	if f.view.Status().Ended() {
		f.pageLocked(pageRows)
	}
	f.signalLocked()
}

// addLocked takes in events. When the recording's agent tree changed meanwhile (an app declares
// agents as it meets them), the view is rebuilt on the new tree, which is rare: once per change
// of the tree, not per event. keep: the events are f's to keep (web.ViewState.Keep), not a
// buffer the caller reuses. The caller holds f.mu.
func (f *feed) addLocked(events []traces.Event, keep bool) {
	if len(events) == 0 {
		return
	}
	if agents := f.rec.Agents(); !slices.EqualFunc(agents, f.agents, sameAgent) {
		old := f.view
		f.agents = agents
		f.view = web.NewViewState(runBeforeEvents(f.rec), agents, web.WithPrices(f.prices))
		f.view.Add(old.Events(0, 0)...)
		// Colours and the tree may have changed: render everything again.
		f.rows.clear()
		f.rendered, f.msg = 0, nil
	}
	refs := func() {
		for i := range events {
			f.refs = append(f.refs, f.enc.Refs(&events[i]))
		}
	}
	if keep {
		// A run taken in whole (warmRun): its input references, which read the events alone,
		// are found beside the view state, on the other core.
		var wg sync.WaitGroup
		wg.Go(refs)
		f.view.Keep(events)
		wg.Wait()
	} else {
		refs()
		f.view.Add(events...)
	}
	f.signalLocked()
}

func sameAgent(a, b traces.Agent) bool {
	return a.Name == b.Name && a.Description == b.Description && a.Kind == b.Kind && a.Parent == b.Parent &&
		a.Relation == b.Relation && a.OutputKey == b.OutputKey && slices.Equal(a.Tools, b.Tools)
}

// signalLocked wakes the events viewers now and the run pages when their window allows. The
// caller holds f.mu.
func (f *feed) signalLocked() {
	close(f.wake)
	f.wake = make(chan struct{})
	f.scheduleLocked()
}

// scheduleLocked makes sure the run pages are woken once the parts may be rendered again: at once
// when the window since the last render has passed, else by a timer at its end. The caller holds
// f.mu.
func (f *feed) scheduleLocked() {
	if f.armed {
		return
	}
	wait := f.window - time.Since(f.lastDraw)
	if wait <= 0 {
		f.wakeLiveLocked()
		return
	}
	f.armed = true
	time.AfterFunc(wait, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.armed = false
		f.wakeLiveLocked()
	})
}

func (f *feed) wakeLiveLocked() {
	close(f.live)
	f.live = make(chan struct{})
}

// page returns the run page's model as it stands, with the rows of its newest rows events. The
// session panel's histories are left out (deferred) of a finished run's past deferHistoriesOver
// events: its page fetches them from historiesRoute when the Session tab is first shown. Should
// an interrupted one be resumed, the live updates of the agents that start again find no section
// of theirs to replace until then, and what is fetched is as of the fetch.
//
// The page of a finished run is kept (keepFirstView) for its next first view.
func (f *feed) page(rows int) (v web.View, deferred bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pageLocked(rows)
}

// pageLocked is page; the caller holds f.mu.
func (f *feed) pageLocked(rows int) (v web.View, deferred bool) {
	ended := f.view.Status().Ended()
	if ended && rows == pageRows {
		if kept, ok := f.digests.get(f.rec, f.view.Seq()); ok && kept.firstView != nil {
			return kept.firstView.view, kept.firstView.deferred // made when the run ended
		}
	}
	if deferred = f.view.Seq() > deferHistoriesOver && ended; deferred {
		v = f.view.PageDeferred(rows)
	} else {
		v = f.view.Page(rows)
	}
	if ended && rows == pageRows {
		f.digests.keepFirstView(f.rec, f.view.Seq(), v, deferred)
	}
	return v, deferred
}

// deferHistoriesOver is the number of events past which a finished run's page leaves the session
// panel's histories for its script to fetch: classifying what each agent was fed reads every
// message of the run (0.5 s of a million events), for a tab that is hidden when the page opens.
const deferHistoriesOver = 20_000

// histories returns the session panel's histories as they stand.
func (f *feed) histories() []web.History {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.view.Histories()
}

// inspection returns the inspector of event seq as the run stands.
func (f *feed) inspection(seq int64) (web.Inspection, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.view.Inspection(seq)
}

// agentSummary returns the summary of agent name as the run stands.
func (f *feed) agentSummary(name string) (web.AgentSummary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.view.AgentSummary(name)
}

// sequence returns the run's sequence view, whole, as it stands.
func (f *feed) sequence() web.Sequence {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.view.Sequence(0, f.view.Seq())
}

// events returns the next message of an events viewer that joined after event since and has
// every event up to seq after: a JSON array of the events after it, as many as fit in maxFrame,
// with the seq of its last event (nil when there is none yet). over is set once the run has
// ended and the viewer has it all. wake is closed when there may be more.
//
// Inputs go as input references (docs/live-streams.md): an event's JSON, made once for all
// viewers, refers to the earlier event its input extends, so that a run of n calls each fed the
// history before it costs the socket its messages once, not n times. A viewer that joined after
// the event referred to gets that input whole, once: the events after it refer to it.
func (f *feed) events(since, after int64) (msg []byte, last int64, over bool, wake <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	evs := f.view.Events(after, 0)
	if len(evs) == 0 {
		return nil, after, f.done, f.wake
	}
	msg = append(make([]byte, 0, 4096), '[')
	for i := range evs {
		refs := f.refs[evs[i].Seq-1]
		var data []byte
		if whole := refersBefore(refs, since); whole || !f.encodedLocked(evs[i].Seq, &data) {
			if whole {
				refs = traces.InputRefs{}
			}
			data = encodeEvent(&evs[i], refs)
			if !whole {
				f.encoded.put(evs[i].Seq, f.view.Seq(), data)
			}
		}
		if i > 0 && len(msg)+len(data) > maxFrame {
			break
		}
		if i > 0 {
			msg = append(msg, ',')
		}
		msg = append(msg, data...)
		last = evs[i].Seq
	}
	msg = append(msg, ']')
	return msg, last, false, f.wake
}

// encodedLocked sets *data to event seq's cached JSON, if it is cached.
func (f *feed) encodedLocked(seq int64, data *[]byte) bool {
	var ok bool
	*data, ok = f.encoded.get(seq)
	return ok
}

// refersBefore reports whether an input of refs refers to an event up to since.
func refersBefore(refs traces.InputRefs, since int64) bool {
	return refs.Model.Keep > 0 && refs.Model.From <= since || refs.AgentRun.Keep > 0 && refs.AgentRun.From <= since
}

// encodeEvent is e's JSON in the trace format, with its inputs' references refs.
func encodeEvent(e *traces.Event, refs traces.InputRefs) []byte {
	data, err := traces.AppendEventRefs(nil, e, refs)
	if err != nil {
		// Every recorded event is valid JSON; were one not, say which rather than skip it.
		data, _ = json.Marshal(map[string]any{"seq": e.Seq, "kind": "error", "agent": e.Agent,
			"error": map[string]string{"message": "this event could not be encoded: " + err.Error()}})
	}
	return data
}

// findRows returns the timeline rows ViewState.FindRows finds, with (when count) the matches of
// the whole run that ViewState.CountRows counts. A run's first search makes its events' search
// texts in turns of web.SearchTurn, letting go of f between them: the run's live viewers wait
// for a turn at most, never for a pass over the run (a waiter's wait past 1 ms makes Go's mutex
// hand itself over).
func (f *feed) findRows(filter web.RowFilter, after, before int64, limit int, forward, count bool) rowsAnswer {
	f.mu.Lock()
	for strings.TrimSpace(filter.Text) != "" && !f.view.IndexSearch(web.SearchTurn) {
		f.mu.Unlock()
		f.mu.Lock()
	}
	defer f.mu.Unlock()
	p := f.view.FindRows(filter, after, before, limit, forward)
	ans := rowsAnswer{Reached: p.Reached, Head: f.view.Seq(), rows: p.Rows}
	if count {
		ans.Matches, ans.Events = f.view.CountRows(filter)
	}
	return ans
}
