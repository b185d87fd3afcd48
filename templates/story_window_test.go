package templates_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/story"
	"github.com/baton-dev/baton/internal/webtest"
	"github.com/baton-dev/baton/templates"
	"github.com/baton-dev/baton/web"
)

// TestStoryWindow: a run page shows at most PageStoryTurns turns of a long run's story, the first
// and the newest, and says how many lie between; the report tells every turn.
func TestStoryWindow(t *testing.T) {
	tr := webtest.Large(3_000)
	st := story.Of(tr)
	if len(st.Turns) < 4*templates.PageStoryTurns {
		t.Fatalf("%d turns: too few to need a window", len(st.Turns))
	}
	vs := web.NewViewState(tr.Run, tr.Agents)
	vs.Add(tr.Events...)
	doc := mustDoc(t, templates.RunView(vs.Page(400), templates.PageOptions{Story: st}))
	turns := byTestID(doc, "story-turn")
	if turns.Length() != templates.PageStoryTurns {
		t.Fatalf("the page shows %d turns of %d, want %d", turns.Length(), len(st.Turns), templates.PageStoryTurns)
	}
	seqOf := func(i int) string { return turns.Eq(i).Find(".seq-link").First().AttrOr("data-seq", "") }
	if first, last := seqOf(0), seqOf(turns.Length()-1); first != itoa(st.Turns[0].Seq) || last != itoa(st.Turns[len(st.Turns)-1].Seq) {
		t.Errorf("the window runs from #%s to #%s, want the first turn #%d to the newest #%d", first, last, st.Turns[0].Seq, st.Turns[len(st.Turns)-1].Seq)
	}
	left := len(st.Turns) - templates.PageStoryTurns
	if gap := strings.TrimSpace(byTestID(doc, "story-gap").Text()); !strings.Contains(gap, itoa(int64(left))+" turns more") {
		t.Errorf("the gap says %q, want %d turns more", gap, left)
	}
	if route := byTestID(doc, "story-route").Text(); strings.Count(route, "→") > templates.PageStoryTurns+1 {
		t.Errorf("the route names %d hops: not clipped", strings.Count(route, "→"))
	}

	// What a server keeps of the story for the page (PageStory) draws the same.
	kept := templates.PageStory(st)
	if len(kept.Turns) != templates.PageStoryTurns || kept.Left != left {
		t.Errorf("PageStory keeps %d turns and says %d left out; want %d and %d", len(kept.Turns), kept.Left, templates.PageStoryTurns, left)
	}
	keptDoc := mustDoc(t, templates.RunView(vs.Page(400), templates.PageOptions{Story: kept}))
	whole, _ := byTestID(doc, "run-story").Html()
	window, _ := byTestID(keptDoc, "run-story").Html()
	if whole != window {
		t.Errorf("the page's story drawn from PageStory differs from the whole story's:\n%.600s\nagainst\n%.600s", window, whole)
	}
	if again := templates.PageStory(kept); !reflect.DeepEqual(again, kept) {
		t.Error("PageStory of a window is not that window")
	}
	// The window read alone (what a server keeps for the page) is the whole story's window.
	if alone := templates.PageStory(story.Window(tr, templates.PageStoryTurns)); !reflect.DeepEqual(alone, kept) {
		t.Errorf("the story's window read alone differs from the whole story's window:\n%+v\nagainst\n%+v", alone.Turns[:2], kept.Turns[:2])
	}
	small := webtest.Large(200)
	if whole, alone := story.Of(small), story.Window(small, 10_000); !reflect.DeepEqual(whole, alone) {
		t.Error("a window wider than the story is not the whole story")
	}

	var b strings.Builder
	if err := templates.Report(context.Background(), &b, tr, nil); err != nil {
		t.Fatal(err)
	}
	if got := byTestID(mustParse(t, b.String()), "story-turn").Length(); got != len(st.Turns) {
		t.Errorf("the report tells %d turns of %d", got, len(st.Turns))
	}
}
