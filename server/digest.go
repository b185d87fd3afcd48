package server

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/baton-dev/baton/internal/lint"
	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/templates"
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
	tr := f.view.Trace()
	f.dig = digest{findings: lint.Check(tr, lint.Config{}), story: story.Of(tr), at: head, made: time.Now()}
	return true
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
