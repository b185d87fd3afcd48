package templates

import (
	"fmt"
	"slices"
	"strings"

	"github.com/baton-dev/baton/internal/story"
)

// joinRoute is route, clipped to its first quarter of limit agents and its newest (all of it when
// limit is 0); left agents are left out of it after its first quarter already (Story.LeftHops).
func joinRoute(route []string, left, limit int) string {
	if limit > 0 && (left > 0 || len(route) > limit) {
		head := route[:min(limit/4, len(route))]
		tail := route[max(len(head), len(route)-(limit-limit/4)):]
		left += len(route) - len(head) - len(tail)
		return fmt.Sprintf("%s → … %d more … → %s", strings.Join(head, " → "), left, strings.Join(tail, " → "))
	}
	return strings.Join(route, " → ")
}

// PageStoryTurns bounds the turns of the story a run page shows (and each live update of it
// sends): the first quarter and the newest of them, and how many lie between. A million-event
// run has some 200,000 turns, whose story would be 70 MB of the page; the report and
// `baton story` tell it whole. The route is clipped alike.
const PageStoryTurns = 60

// storyWindow splits s's turns into the first and the newest that a story of at most limit turns
// shows (all of them when limit is 0), and how many it leaves out between them: a window of it
// (PageStory) keeps those only.
func storyWindow(s story.Story, limit int) (head, tail []story.Turn, left int) {
	turns := s.Turns
	if s.Left > 0 {
		k := min(limit/4, len(turns))
		return turns[:k], turns[k:], s.Left
	}
	if limit <= 0 || len(turns) <= limit {
		return turns, nil, 0
	}
	head, tail = turns[:limit/4], turns[len(turns)-(limit-limit/4):]
	return head, tail, len(turns) - len(head) - len(tail)
}

// PageStory is the part of s that a run page shows (PageStoryTurns of its turns, its route
// clipped alike), saying how much it leaves out: what a server keeps of a run's story for its
// page. A million-event run's whole story holds some 50 MB.
func PageStory(s story.Story) story.Story {
	const limit = PageStoryTurns
	if head, tail, left := storyWindow(s, limit); left > 0 && s.Left == 0 {
		s.Turns, s.Left = append(slices.Clip(head), tail...), left
	}
	if n := len(s.Route); n > limit && s.LeftHops == 0 {
		head, tail := s.Route[:limit/4], s.Route[n-(limit-limit/4):]
		s.Route, s.LeftHops = append(slices.Clip(head), tail...), n-len(head)-len(tail)
	}
	return s
}

func storyStepClass(k story.StepKind) string {
	if k == story.HandsOff {
		return "story-handoff"
	}
	return ""
}
