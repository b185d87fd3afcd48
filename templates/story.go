package templates

import (
	"fmt"
	"strings"

	"github.com/baton-dev/baton/internal/story"
)

func joinRoute(route []string, limit int) string {
	if limit > 0 && len(route) > limit {
		head, tail := route[:limit/4], route[len(route)-(limit-limit/4):]
		return fmt.Sprintf("%s → … %d more … → %s", strings.Join(head, " → "), len(route)-len(head)-len(tail), strings.Join(tail, " → "))
	}
	return strings.Join(route, " → ")
}

// PageStoryTurns bounds the turns of the story a run page shows (and each live update of it
// sends): the first quarter and the newest of them, and how many lie between. A million-event
// run has some 200,000 turns, whose story would be 70 MB of the page; the report and
// `baton story` tell it whole. The route is clipped alike.
const PageStoryTurns = 60

// storyWindow splits turns into the first and the newest that a story of at most limit turns
// shows (all of them when limit is 0), and how many it leaves out between them.
func storyWindow(turns []story.Turn, limit int) (head, tail []story.Turn, left int) {
	if limit <= 0 || len(turns) <= limit {
		return turns, nil, 0
	}
	head, tail = turns[:limit/4], turns[len(turns)-(limit-limit/4):]
	return head, tail, len(turns) - len(head) - len(tail)
}

func storyStepClass(k story.StepKind) string {
	if k == story.HandsOff {
		return "story-handoff"
	}
	return ""
}
