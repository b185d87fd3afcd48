package record

import (
	"testing"

	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// TestInputCacheSharesWhatAnInputExtends: an input that extends the one before shares its
// converted messages (the array they are in, once it has room); one that does not starts over,
// leaving the earlier conversions as they were.
func TestInputCacheSharesWhatAnInputExtends(t *testing.T) {
	var c inputCache
	convert := func(in []*schema.Message) []traces.Message { return c.convert(in, c.extends(in)) }
	sys, user, reply := schema.SystemMessage("be brief"), schema.UserMessage("hi"), schema.AssistantMessage("hello", nil)
	in := []*schema.Message{sys, user, reply}
	first := convert(in)
	in = append(in, schema.UserMessage("and?"))
	second := convert(in) // grows the array, room to spare
	in = append(in, schema.UserMessage("so?"))
	third := convert(in)
	if len(third) != 5 || &third[0] != &second[0] || third[4].Content != "so?" {
		t.Errorf("an extended input = %+v, want the four before shared and one more", third)
	}
	// eino rebuilds the system prompt for each call: an equal message still extends.
	rebuilt := append([]*schema.Message{schema.SystemMessage("be brief")}, in[1:]...)
	again := convert(append(rebuilt, schema.UserMessage("ok")))
	if len(again) != 6 || &again[0] != &second[0] {
		t.Errorf("an input with a rebuilt, equal system prompt did not share: %+v", again)
	}
	other := convert([]*schema.Message{schema.UserMessage("something else")})
	if len(other) != 1 || other[0].Content != "something else" || first[1].Content != "hi" || len(second) != 4 {
		t.Errorf("an unrelated input = %+v (earlier ones now %+v, %+v), want a fresh conversion", other, first, second)
	}
}

// TestForwardingSaysWhereInnerEventsWent: a callee whose events the copy carried reads
// "stream", any other "callbacks"; an echoed call is reported once.
func TestForwardingSaysWhereInnerEventsWent(t *testing.T) {
	var f forwarding
	if got := f.innerEvents("helper"); got != traces.InnerEventsCallbacks {
		t.Errorf("nothing forwarded: %q, want %q", got, traces.InnerEventsCallbacks)
	}
	f.byCallee = map[string]int{"helper": 1}
	if got := f.innerEvents("helper"); got != traces.InnerEventsStream {
		t.Errorf("helper's events forwarded: %q, want %q", got, traces.InnerEventsStream)
	}
	if f.echoedCall("c1") {
		t.Error("a call never echoed reads echoed")
	}
	f.echo("c1")
	if !f.echoedCall("c1") || f.echoedCall("c1") {
		t.Error("an echoed call is not reported exactly once")
	}
}
