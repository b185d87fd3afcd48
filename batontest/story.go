package batontest

import "github.com/baton-dev/baton/internal/story"

// Story is the run's handoff story, the text a golden file keeps: the route, then each agent's
// turn (how control reached it, what it was fed by origin, the tools it called, what it said,
// where it handed off), then the session and the final answer. Times, ids, token counts and tool
// results are left out, so the story of a replayed run equals the recorded one's.
func (r *Run) Story() string { return story.Of(r.Trace).Text() }
