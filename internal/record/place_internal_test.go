package record

import (
	"context"
	"slices"
	"testing"
	"unsafe"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/compose"
)

// TestPlaceSharesTheKnownPathOnlyWhenEqual checks that a callback's place reads its agents from
// eino's address, sharing the visit's path when they are that path, and reading a path of its
// own when they are a part of it, extend it or differ from it.
func TestPlaceSharesTheKnownPathOnlyWhenEqual(t *testing.T) {
	at := func(agents ...string) context.Context {
		ctx := context.Background()
		for _, a := range agents {
			ctx = compose.AppendAddressSegment(ctx, adk.AddressSegmentAgent, a)
			ctx = compose.AppendAddressSegment(ctx, compose.AddressSegmentRunnable, a)
		}
		return compose.AppendAddressSegment(ctx, compose.AddressSegmentNode, "ChatModel")
	}
	known := []string{"root", "mid", "leaf"}
	for _, c := range []struct {
		name   string
		agents []string
		shared bool
	}{
		{"the same", known, true},
		{"a part", known[:2], false},
		{"none of it", nil, false},
		{"longer", append(slices.Clone(known), "inner"), false},
		{"another", []string{"root", "other", "leaf"}, false},
		{"another first", []string{"x", "mid", "leaf"}, false},
	} {
		p := placeOf(at(c.agents...), known)
		want := c.agents
		if want == nil {
			want = []string{}
		}
		if !slices.Equal(p.path, want) || p.path == nil {
			t.Errorf("%s: path %#v, want %#v", c.name, p.path, want)
		}
		if shared := len(p.path) > 0 && unsafe.SliceData(p.path) == unsafe.SliceData(known); shared != c.shared {
			t.Errorf("%s: path shares the known one's array: %v, want %v", c.name, shared, c.shared)
		}
		last := ""
		if len(want) > 0 {
			last = want[len(want)-1]
		}
		if p.node != "ChatModel" || p.runnable || p.agent() != last {
			t.Errorf("%s: node %q, runnable %v, agent %q; want ChatModel, false, %q", c.name, p.node, p.runnable, p.agent(), last)
		}
	}
}
