package server

import (
	"context"
	"net/http"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/lint"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// Digest returns the findings and story rec's page shows, as its feed makes them.
func Digest(s *Server, rec *traces.Recording) ([]lint.Finding, story.Story) {
	f := s.feeds.acquire(rec)
	defer s.feeds.release(f)
	d := f.digest()
	return d.findings, d.story
}

// UncachedDigest returns the findings and story of the run as rec's feed holds it, made anew.
func UncachedDigest(s *Server, rec *traces.Recording) ([]lint.Finding, story.Story) {
	f := s.feeds.acquire(rec)
	defer s.feeds.release(f)
	f.mu.Lock()
	defer f.mu.Unlock()
	tr := f.view.Trace()
	return lint.Check(tr, lint.Config{}), story.Of(tr)
}

// CachedDigest returns what s keeps of rec's digest as of its newest event, past its feed:
// whether it has one, its findings and whether it has its story.
func CachedDigest(s *Server, rec *traces.Recording) (ok bool, findings []lint.Finding, storied bool) {
	d, ok := s.feeds.digests.get(rec, rec.Len())
	return ok && d.linted, d.findings, d.storied
}

// SetRunner makes s run flows with run instead of agents.RunFlow, so tests can drive a run's
// events and its outcome.
func SetRunner(s *Server, run func(ctx context.Context, flow agents.Flow, input string, opts agents.Options, rec *traces.Recording) traces.Status) {
	s.runs.setRunner(run)
}

// Describe is s.describe: the status and message err gets, logging what is Baton's fault.
func Describe(s *Server, err error, r *http.Request) (int, string) { return s.describe(err, r) }

// SetLiveWindow sets how long s holds a run page's update to gather events into it (0: none,
// an update per event); call it before any viewer connects.
func SetLiveWindow(s *Server, d time.Duration) { s.feeds.window = d }

// SetPongWait sets how long s's websockets wait for a peer's pong (they ping at 9/10 of it); call
// it before any viewer connects.
func SetPongWait(s *Server, d time.Duration) { s.pongWait = d }

// SetFeedLinger sets how long the feed of a finished run stays after its last user; call it
// before any viewer connects.
func SetFeedLinger(s *Server, d time.Duration) { s.feeds.linger = d }

// HoldFeed acquires rec's feed and holds its lock, as a viewer taking in or reading its events
// does, until the func it returns lets it go and releases the feed.
func HoldFeed(s *Server, rec *traces.Recording) (let func()) {
	f := s.feeds.acquire(rec)
	f.mu.Lock()
	return func() {
		f.mu.Unlock()
		s.feeds.release(f)
	}
}

// AcquireFeed acquires rec's feed, as a page does; the func it returns releases it.
func AcquireFeed(s *Server, rec *traces.Recording) (release func()) {
	f := s.feeds.acquire(rec)
	return func() { s.feeds.release(f) }
}

// FeedUsers returns how many users rec's feed has, 0 when it has none.
func FeedUsers(s *Server, rec *traces.Recording) int {
	s.feeds.mu.Lock()
	defer s.feeds.mu.Unlock()
	if f := s.feeds.m[rec]; f != nil {
		return f.users
	}
	return 0
}

// SetFeedKeep sets how many of a run's newest events s's feeds keep encoded and rendered; call
// it before any viewer connects.
func SetFeedKeep(s *Server, n int) { s.feeds.keep = n }

// FeedCached returns how many events rec's feed keeps encoded, and how many timeline rows
// rendered; false when rec has no feed (no viewer follows it, and it is not a finished run's
// feed waiting for its page's next request).
func FeedCached(s *Server, rec *traces.Recording) (encoded, rows int, ok bool) {
	s.feeds.mu.Lock()
	f := s.feeds.m[rec]
	s.feeds.mu.Unlock()
	if f == nil {
		return 0, 0, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.encoded.len(), f.rows.len(), true
}

// SettleImports waits for the pages that imports make after they answer (warmRun), then lets
// go the feed they leave for the pages' next requests, as its linger would: what the server
// holds at rest is measured after them.
func SettleImports(s *Server) {
	s.feeds.warm.Wait()
	s.feeds.mu.Lock()
	if f := s.feeds.idle; f != nil {
		s.feeds.idle = nil
		s.feeds.retireLocked(f)
	}
	s.feeds.mu.Unlock()
	s.feeds.warm.Wait() // the tabs kept as it goes (keepFetches)
}

// IdleFeedRefs reports whether the feed s holds idle has, for each of its events, the input
// references a fresh encoder finds taking them in one by one.
func IdleFeedRefs(s *Server) (events int, same bool) {
	s.feeds.mu.Lock()
	f := s.feeds.idle
	s.feeds.mu.Unlock()
	if f == nil {
		return 0, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var enc traces.EventEncoder
	evs := f.view.Events(0, 0)
	if len(f.refs) != len(evs) {
		return len(evs), false
	}
	for i := range evs {
		if enc.Refs(&evs[i]) != f.refs[i] {
			return len(evs), false
		}
	}
	return len(evs), true
}

// WaitPagesMade waits for the pages that imports make after they answer (warmRun), leaving the
// feed they leave to its linger.
func WaitPagesMade(s *Server) { s.feeds.warm.Wait() }

// FakeLingers makes s's feeds' lingers (feedLinger) end only when the returned func is called,
// which ends each begun so far, and waits for what their ends begin (keepFetches): a test of what
// follows a linger without waiting it out.
func FakeLingers(s *Server) (end func()) {
	var mu sync.Mutex
	var pending []func()
	s.feeds.mu.Lock()
	s.feeds.afterFunc = func(_ time.Duration, f func()) *time.Timer {
		mu.Lock()
		pending = append(pending, f)
		mu.Unlock()
		return nil
	}
	s.feeds.mu.Unlock()
	return func() {
		mu.Lock()
		ends := pending
		pending = nil
		mu.Unlock()
		for _, f := range ends {
			f()
		}
		s.feeds.warm.Wait()
	}
}

// KeptFirstView returns the page of rec as s keeps it for its newest event (keepFirstView).
func KeptFirstView(s *Server, rec *traces.Recording) (v web.View, ok bool) {
	kept, ok := s.feeds.digests.get(rec, rec.Len())
	if !ok || kept.firstView == nil {
		return web.View{}, false
	}
	return kept.firstView.view, true
}

// FeedPage returns the page of rec as a feed made anew for it makes it, reading the recording,
// its sequence view left out as s keeps it.
func FeedPage(s *Server, rec *traces.Recording) web.View {
	f := &feed{rec: rec, wake: make(chan struct{}), live: make(chan struct{}), encoded: newSeqCache(1), rows: newSeqCache(1)}
	f.agents = rec.Agents()
	f.view = web.NewViewState(runBeforeEvents(rec), f.agents, web.WithPrices(s.feeds.prices))
	f.follow()
	v, _ := f.page(pageRows)
	if sequenceDeferred(v) {
		v.Sequence = web.Sequence{Head: v.Sequence.Head}
	}
	return v
}

// KeptDigest returns the findings and story s keeps for rec's newest event, and those a feed made
// anew for rec makes (reading the recording, linting it again), as two pairs to compare.
func KeptDigest(s *Server, rec *traces.Recording) (kept, fresh [2]any, ok bool) {
	d, ok := s.feeds.digests.get(rec, rec.Len())
	if !ok || !d.linted || !d.storied {
		return kept, fresh, false
	}
	f := &feed{rec: rec, wake: make(chan struct{}), live: make(chan struct{}), encoded: newSeqCache(1), rows: newSeqCache(1)}
	f.agents = rec.Agents()
	f.view = web.NewViewState(runBeforeEvents(rec), f.agents, web.WithPrices(s.feeds.prices))
	f.follow()
	made := f.digestOf(f.view.Trace(), false)
	return [2]any{d.findings, d.story}, [2]any{made.findings, made.story}, true
}

// FeedsHeld returns how many runs' feeds s holds.
func FeedsHeld(s *Server) int {
	s.feeds.mu.Lock()
	defer s.feeds.mu.Unlock()
	return len(s.feeds.m)
}

// FeedsMade returns how many feeds s has made so far.
func FeedsMade(s *Server) int {
	s.feeds.mu.Lock()
	defer s.feeds.mu.Unlock()
	return s.feeds.made
}

// IdleFeed returns a func that reports whether the feed s holds idle now, for its linger, has
// been collected since, after a collection.
func IdleFeed(s *Server) (collected func() bool) {
	s.feeds.mu.Lock()
	p := weak.Make(s.feeds.idle)
	s.feeds.mu.Unlock()
	return func() bool {
		runtime.GC()
		return p.Value() == nil
	}
}

// KeptRowsSize returns the bytes of the rows kept beside rec's page for its newest event
// (keptFetches), and whether any are.
func KeptRowsSize(s *Server, rec *traces.Recording) (int, bool) {
	kf := s.feeds.digests.fetchesOf(rec, rec.Len())
	if kf == nil || kf.rows == nil {
		return 0, false
	}
	return kf.rows.Size(), true
}
