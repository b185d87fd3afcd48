package server

import (
	"context"
	"reflect"
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
// when a second has passed or the run has ended. It reports which parts changed. The caller holds
// f.mu.
func (f *feed) digestLocked(now bool) (findingsChanged, storyChanged bool) {
	head := f.view.Seq()
	if head == f.dig.at || !now && !f.view.Status().Ended() && time.Since(f.dig.made) < digestEvery {
		return false, false
	}
	tr := f.view.Trace()
	next := digest{findings: lint.Check(tr, lint.Config{}), story: story.Of(tr), at: head, made: time.Now()}
	findingsChanged = !slices.EqualFunc(next.findings, f.dig.findings, func(a, b lint.Finding) bool { return reflect.DeepEqual(a, b) })
	storyChanged = !reflect.DeepEqual(next.story, f.dig.story)
	f.dig = next
	return findingsChanged, storyChanged
}

// digestPartsLocked adds to the parts a live page gets the digest's that changed. The caller
// holds f.mu.
func (f *feed) digestPartsLocked(ctx context.Context) error {
	findingsChanged, storyChanged := f.digestLocked(false)
	put := func(target string, data []byte, err error) error {
		if err != nil {
			return err
		}
		p := part{target: target, json: data, at: f.view.Seq()}
		if i := slices.IndexFunc(f.parts, func(q part) bool { return q.target == target }); i >= 0 {
			f.parts[i] = p
		} else {
			f.parts = append(f.parts, p)
		}
		return nil
	}
	if findingsChanged {
		data, err := templates.EncodeFindings(ctx, f.dig.findings)
		if err := put(templates.FindingsTarget, data, err); err != nil {
			return err
		}
	}
	if storyChanged {
		data, err := templates.EncodeStory(ctx, f.dig.story)
		return put(templates.StoryTarget, data, err)
	}
	return nil
}
