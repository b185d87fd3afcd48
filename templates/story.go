package templates

import (
	"strings"

	"github.com/baton-dev/baton/internal/story"
)

func joinRoute(route []string) string { return strings.Join(route, " → ") }

func storyStepClass(k story.StepKind) string {
	if k == story.HandsOff {
		return "story-handoff"
	}
	return ""
}
