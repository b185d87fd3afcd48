package server

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"time"
	"weak"

	"github.com/baton-dev/baton/internal/lint"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/traces"
)

// digestEvery is how often, at most, a running run's digest (its handoff findings and story) is
// made again: both read the whole run, so a fast run is not read at every render. A run that has
// ended is digested at once.
const digestEvery = time.Second

// digest is what the page shows of the whole run beside its panels: the linter's findings, under
// the header, and the handoff story, in the inspector while nothing is inspected.
type digest struct {
	findings []lint.Finding
	story    story.Story
	at       int64     // the seq they are as of
	made     time.Time // when
}

// digest returns the run's digest as it stands, made again when the run has news.
func (f *feed) digest() digest {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.digestLocked(true)
	return f.dig
}

// digestLocked makes the digest again when the run has news since the last one, and, unless now,
// when a second has passed or the run has ended. It reports whether it made it again. The caller
// holds f.mu.
func (f *feed) digestLocked(now bool) bool {
	head := f.view.Seq()
	if head == f.dig.at || !now && !f.view.Status().Ended() && time.Since(f.dig.made) < digestEvery {
		return false
	}
	ended := f.view.Status().Ended()
	if ended {
		if d, ok := f.digests.get(f.rec, head); ok && d.storied {
			f.dig = d.digest
			return true
		}
	}
	f.keepDigestLocked(f.digestOf(f.view.Trace(), ended))
	return true
}

// digestOf makes the digest of tr, the run's events up to its newest, which has ended or not.
// It reads tr alone, and f's kept digests: a run's events being taken in by f meanwhile (a run
// read whole, warmRun) are not in the way.
func (f *feed) digestOf(tr traces.Trace, ended bool) digest {
	var head int64
	if n := len(tr.Events); n > 0 {
		head = tr.Events[n-1].Seq
	}
	var findings []lint.Finding
	if d, ok := f.digests.get(f.rec, head); ended && ok && d.linted {
		findings = d.findings // counted at import
	} else {
		findings = lint.Check(tr, lint.Config{})
	}
	// The page shows a window of the story, read alone: a million events' whole story is 160 MB
	// to make and 50 MB to keep.
	return digest{findings: findings, story: templates.PageStory(story.Window(tr, templates.PageStoryTurns)), at: head, made: time.Now()}
}

// keepDigestLocked makes d the feed's digest, kept past it when it is of a run that ended. The
// caller holds f.mu.
func (f *feed) keepDigestLocked(d digest) {
	f.dig = d
	if f.view.Status().Ended() && f.view.Seq() == d.at {
		f.digests.put(f.rec, cachedDigest{digest: f.dig, linted: true, storied: true})
	}
}

// keptDigests is how many finished runs' digests a server keeps.
const keptDigests = 4

// digestCache keeps the digests of the finished runs digested last, by recording: a finished
// run's findings and story are a function of its events, and take half a second of CPU at a
// million events, which every first view of its page (a feed made anew) paid again, as did the
// page of a run just imported, whose findings the import had counted. An entry is as of a seq,
// and served only for that seq: a run resumed since has news, and is digested again. The
// recordings are held weakly: a run the broker forgot is not kept alive by its digest.
type digestCache struct {
	mu sync.Mutex
	m  []cachedDigest // newest last
	// linting holds the imports under way whose findings are kept (see lintOf), by their
	// events' first element: the trace the broker counts is the one imported, its events
	// shared.
	linting map[*traces.Event]*linted
}

// linted is the findings of one import, once counted.
type linted struct {
	findings []lint.Finding
	done     bool
}

type cachedDigest struct {
	rec weak.Pointer[traces.Recording]
	digest
	linted, storied bool       // whether digest's findings, story, are made
	firstView       *firstView // the page's view as it opens, once made (firstview.go)
}

func newDigestCache() *digestCache {
	return &digestCache{linting: make(map[*traces.Event]*linted)}
}

// get returns rec's digest as of seq at, if kept.
func (c *digestCache) get(rec *traces.Recording, at int64) (cachedDigest, bool) {
	if c == nil {
		return cachedDigest{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := weak.Make(rec)
	for _, d := range c.m {
		if d.rec == p && d.at == at {
			return d, true
		}
	}
	return cachedDigest{}, false
}

// put keeps d as rec's digest, in place of any before, and forgets the oldest beyond keptDigests.
func (c *digestCache) put(rec *traces.Recording, d cachedDigest) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d.rec = weak.Make(rec)
	if i := slices.IndexFunc(c.m, func(e cachedDigest) bool { return e.rec == d.rec && e.at == d.at }); i >= 0 {
		// What is kept of the run as of the same event and not given again stays.
		if old := c.m[i]; d.firstView == nil {
			d.firstView = old.firstView
		}
	}
	c.m = slices.DeleteFunc(c.m, func(e cachedDigest) bool { return e.rec == d.rec || e.rec.Value() == nil })
	c.m = append(c.m, d)
	if n := len(c.m) - keptDigests; n > 0 {
		c.m = slices.Delete(c.m, 0, n)
	}
}

// countFindings is the broker's count of a run's warnings (lint.Warnings), keeping the findings
// of an import that lintOf asked for.
func (c *digestCache) countFindings(tr traces.Trace) int {
	var kept *linted
	if len(tr.Events) > 0 {
		c.mu.Lock()
		kept = c.linting[&tr.Events[0]]
		c.mu.Unlock()
	}
	if kept == nil {
		return lint.Warnings(tr)
	}
	if !kept.done { // else counted already: the broker tried another id
		kept.findings, kept.done = lint.Check(tr, lint.Config{}), true
	}
	return lint.CountWarnings(kept.findings)
}

// lintOf runs import, which adds tr to the broker as rec, and keeps the findings the broker
// counted in it as rec's, so that its page does not check the run again. tr is the trace as the
// broker adds it (ended: traces.EndImported), its events shared.
func (c *digestCache) lintOf(tr traces.Trace, imp func() (*traces.Recording, error)) (*traces.Recording, error) {
	if len(tr.Events) == 0 {
		return imp()
	}
	key, kept := &tr.Events[0], new(linted)
	c.mu.Lock()
	_, busy := c.linting[key] // the same events imported twice at once: the first keeps them
	if !busy {
		c.linting[key] = kept
	}
	c.mu.Unlock()
	rec, err := imp()
	if busy {
		return rec, err
	}
	c.mu.Lock()
	delete(c.linting, key)
	c.mu.Unlock()
	if err == nil && kept.done && rec.Len() == tr.Events[len(tr.Events)-1].Seq {
		c.put(rec, cachedDigest{digest: digest{findings: kept.findings, at: rec.Len()}, linted: true})
	}
	return rec, err
}

// digestPartsLocked adds to the parts a live page gets those of the digest that read otherwise
// than before, once it was made again. The caller holds f.mu.
func (f *feed) digestPartsLocked(ctx context.Context) error {
	if !f.digestLocked(false) {
		return nil
	}
	findings, err := templates.EncodeFindings(ctx, f.dig.findings)
	if err != nil {
		return err
	}
	story, err := templates.EncodeStory(ctx, f.dig.story)
	if err != nil {
		return err
	}
	for _, p := range []part{{target: templates.FindingsTarget, json: findings}, {target: templates.StoryTarget, json: story}} {
		p.at = f.view.Seq()
		target, data := p.target, p.json
		switch i := slices.IndexFunc(f.parts, func(q part) bool { return q.target == target }); {
		case i < 0:
			f.parts = append(f.parts, p)
		case !bytes.Equal(f.parts[i].json, data): // a page that has it needs it not again
			f.parts[i] = p
		}
	}
	return nil
}
