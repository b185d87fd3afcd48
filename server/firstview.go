package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"weak"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/templates"

	"github.com/baton-dev/baton/traces"
	"github.com/baton-dev/baton/web"
)

// firstView is a finished run's page as it opens (its header, tree and newest rows: the feed's
// page), kept beside its digest: a function of the run's events, which a million-event run's
// feed takes seconds to read back and take in. A feed makes it when its run ends (a large
// import's feed: right after the import, warmRun). A page of a finished run kept so is served
// without a feed, and so, once the feed that made it has gone, is what the page then fetches
// (keptFetches): its Session and Sequence tabs, its older rows; a step in time uses a feed.
type firstView struct {
	view     web.View // without the sequence view's bars when deferred (the page fetches them)
	deferred bool     // the session panel's histories are left out (feed.page)
	// fetches is what the page's script fetches, kept once the feed that made the page has gone
	// (keepFetches): nil until then. Guarded by the digestCache's mu.
	fetches *keptFetches
}

// keptFetches is what a kept page's script fetches, kept past the feed that made the page: the
// HTML, gzipped, of what its tabs fetch when first shown, its sequence view's data
// (sequenceRoute) and its session panel's histories (historiesRoute), each nil when the page
// carries it; and its timeline's rows (rowsRoute), with filters and search, nil when the page
// holds them all. Without them, each took the whole run in again once the page's feed had gone
// (feedLinger after it made the page), seconds at 1M events. Gzipped, the tabs are a few bytes
// an event (the sequence data about 35 uncompressed); the rows' notes, 4 (web.KeptRows).
type keptFetches struct {
	sequence, histories []byte
	rows                *web.KeptRows
}

// keepFetches renders, gzipped, what the tabs of f's page fetch, and keeps it beside the page
// with its rows' notes, as f's view state stands, when f's run's page is kept as of f's newest
// event and has none kept yet. f has gone, or is going: no page follows it any more (see
// feeds.retireLocked).
func (f *feed) keepFetches() {
	f.mu.Lock()
	head := f.view.Seq()
	kept, ok := f.digests.get(f.rec, head)
	if !ok || kept.firstView == nil || f.digests.fetchesOf(f.rec, head) != nil {
		f.mu.Unlock()
		return
	}
	o := kept.firstView
	var seq *web.Sequence
	if sequenceDeferred(o.view) {
		s := f.view.Sequence(0, head)
		seq = &s
	}
	var hs []web.History
	if o.deferred {
		hs = f.view.Histories()
	}
	var rows *web.KeptRows
	if head > pageRows { // else the page holds every row
		rows = f.view.KeepRows()
	}
	f.mu.Unlock()
	if seq == nil && !o.deferred && rows == nil {
		return
	}
	kf := keptFetches{rows: rows}
	var err error
	// A tab that fails to render is left out: it takes the run in again, as before.
	if seq != nil {
		if kf.sequence, err = gzipped(templates.SequenceHTML(*seq)); err != nil {
			kf.sequence = nil
		}
	}
	if o.deferred {
		if kf.histories, err = gzipped(templates.HistoriesHTML(hs)); err != nil {
			kf.histories = nil
		}
	}
	f.digests.keepFetches(f.rec, head, o, &kf)
}

// gzipped renders comp, gzipped.
func gzipped(comp templ.Component) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed) // a valid level
	if err := comp.Render(context.Background(), zw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil // not the buffer's spare room
}

// fetchesOf returns what is kept of rec's page's fetches as of event at, nil when none is.
func (c *digestCache) fetchesOf(rec *traces.Recording, at int64) *keptFetches {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := weak.Make(rec)
	for _, d := range c.m {
		if d.rec == p && d.at == at && d.firstView != nil {
			return d.firstView.fetches
		}
	}
	return nil
}

// keepFetches keeps kf beside o, rec's page as of event at, if it is still kept.
func (c *digestCache) keepFetches(rec *traces.Recording, at int64, o *firstView, kf *keptFetches) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := weak.Make(rec)
	for _, d := range c.m {
		if d.rec == p && d.at == at && d.firstView == o {
			o.fetches = kf
		}
	}
}

// serveTab answers a kept page's tab (sequenceRoute, historiesRoute) with its HTML kept gzipped
// (keptFetches): as it is to a client that takes gzip (a browser), else unzipped.
func serveTab(c echo.Context, html []byte) error {
	c.Response().Header().Add(echo.HeaderVary, echo.HeaderAcceptEncoding)
	if acceptsGzip(c.Request().Header.Get(echo.HeaderAcceptEncoding)) {
		c.Response().Header().Set(echo.HeaderContentEncoding, "gzip")
		return c.Blob(http.StatusOK, echo.MIMETextHTMLCharsetUTF8, html)
	}
	zr, err := gzip.NewReader(bytes.NewReader(html))
	if err != nil {
		return err
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		return err
	}
	return c.HTMLBlob(http.StatusOK, plain)
}

// acceptsGzip reports whether an Accept-Encoding header's value takes gzip (not at q=0).
func acceptsGzip(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// keepFirstView keeps v, the page of rec as of event at, which has ended, beside its digest. The
// sequence view of a page that fetches it is left out: at about 35 bytes an event it would be
// most of what is kept, for a page that does not draw it.
func (c *digestCache) keepFirstView(rec *traces.Recording, at int64, v web.View, deferred bool) {
	if c == nil {
		return
	}
	if sequenceDeferred(v) {
		v.Sequence = web.Sequence{Head: v.Sequence.Head}
	}
	o := &firstView{view: v, deferred: deferred}
	c.mu.Lock()
	p := weak.Make(rec)
	i := slices.IndexFunc(c.m, func(e cachedDigest) bool { return e.rec == p && e.at == at })
	if i >= 0 {
		c.m[i].firstView = o
	}
	c.mu.Unlock()
	if i < 0 {
		c.put(rec, cachedDigest{digest: digest{at: at}, firstView: o})
	}
}

// sequenceDeferred reports whether the page of v leaves its Sequence and Waterfall views' data
// for its script to fetch (deferSequenceOver).
func sequenceDeferred(v web.View) bool {
	return v.Sequence.Head > deferSequenceOver && v.Stats.Status.Ended()
}

// opened returns the page of rec and its digest as kept for its newest event, if both are.
func (c *digestCache) opened(rec *traces.Recording) (o *firstView, d digest, ok bool) {
	kept, ok := c.get(rec, rec.Len())
	if !ok || kept.firstView == nil || !kept.linted || !kept.storied {
		return nil, digest{}, false
	}
	return kept.firstView, kept.digest, true
}

// openOver is the number of events past which an imported run's page is made as it is imported
// (see warmRun): below it, a page's feed takes its events in within a few tens of ms.
const openOver = deferHistoriesOver

// warmRun makes the page of rec, a run just imported from tr or read back from the store as tr
// (a server restarted on its database: live.Broker.GetLoaded), past openOver events, and keeps
// it (keepFirstView), on a goroutine of its own: the page asked for next (an import links to it)
// is then served as kept. It takes in tr's events, in hand, rather than read them back from the
// recording. After an import, call it once the import has answered: it would compete with the
// import for the CPU. rec's feed is made at once and held until then, so that a page asking for it meanwhile
// waits for this one rather than taking the run in again. tr's events are used only when the
// feed would have read the same run: the same start and agents (an import can give the run
// another id), as many events, none taken in yet; otherwise the feed reads the run as usual.
func (fs *feeds) warmRun(rec *traces.Recording, tr traces.Trace) {
	if len(tr.Events) <= openOver {
		return
	}
	fs.mu.Lock()
	if fs.cold {
		fs.mu.Unlock()
		return // shutting down: the page is made when asked for, if ever
	}
	fs.warm.Add(1) // never once waitWarm waits: an Add racing a Wait at zero is a misuse
	fs.mu.Unlock()
	f := fs.join(rec)
	f.mu.Lock() // unlocked by the goroutine below, once tr's events are in
	go func() {
		defer fs.warm.Done()
		if f.view.Seq() == 0 && sameRunStart(runBeforeEvents(rec), tr.Run) &&
			slices.EqualFunc(f.agents, tr.Agents, sameAgent) && int64(len(tr.Events)) == rec.Len() {
			// The digest (findings, story) reads the events alone: it is made beside the view
			// state, on the other core, rather than after it.
			var dig digest
			var digested sync.WaitGroup
			run, agents, events := runBeforeEvents(rec), f.agents, tr.Events[:len(tr.Events):len(tr.Events)]
			digested.Go(func() {
				dig = f.digestOf(traces.Trace{Run: run, Agents: agents, Events: events}, tr.Run.Status.Ended())
			})
			f.refs = slices.Grow(f.refs, len(tr.Events))
			f.addLocked(tr.Events, true) // the import is done with them
			digested.Wait()
			if f.view.Seq() == dig.at {
				f.keepDigestLocked(dig)
			}
		}
		f.mu.Unlock()
		f.follow() // the rest, if any (all of it when tr's events were not taken); the page is kept at its end
		f.digest()
		fs.release(f) // as a page does: it stays a while for the page's next requests
	}()
}

// waitWarm stops pages from being begun by warmRun and waits for those begun.
func (fs *feeds) waitWarm() {
	fs.mu.Lock()
	fs.cold = true
	fs.mu.Unlock()
	fs.warm.Wait()
}

// sameRunStart reports whether feed's run, as a feed starts it (runBeforeEvents), is imported's.
func sameRunStart(feed, imported traces.Run) bool {
	return feed.ID == imported.ID && feed.Flow == imported.Flow && feed.Input == imported.Input &&
		feed.Model == imported.Model && feed.StartedAt.Equal(imported.StartedAt) &&
		feed.Conversation == imported.Conversation
}
