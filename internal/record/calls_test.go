package record

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cloudwego/eino/schema"

	"github.com/baton-dev/baton/traces"
)

// TestModelCallsAreNumbered: model calls are numbered from m1 in the order they start.
func TestModelCallsAreNumbered(t *testing.T) {
	c := newCalls()
	for _, want := range []string{"m1", "m2", "m3"} {
		if got := c.nextModel(); got != want {
			t.Errorf("nextModel() = %s, want %s", got, want)
		}
	}
}

// TestAbandonedToolsEndInTheOrderTheyStarted: the tool calls of a visit whose work is over are
// ended in the order they started, but one whose end eino has begun to report, which is left to
// it; abandon(nil) ends every visit's.
func TestAbandonedToolsEndInTheOrderTheyStarted(t *testing.T) {
	c := newCalls()
	a, b := &visit{agent: "a"}, &visit{agent: "b"}
	ending := &call{}
	ending.ended.Store(true)
	for _, t := range []openTool{
		{callID: "t1", v: a}, {callID: "t2", v: b}, {callID: "t3", args: "{}", v: a, call: ending}, {callID: "t4", v: a, call: &call{}}, {callID: "t5", v: a},
	} {
		c.startTool(t)
	}
	ids := func(ts []openTool) (out []string) {
		for _, t := range ts {
			out = append(out, t.callID)
		}
		return out
	}
	if got := ids(c.abandon(a)); len(got) != 3 || got[0] != "t1" || got[1] != "t4" || got[2] != "t5" {
		t.Errorf("abandon(a) = %v, want [t1 t4 t5]", got)
	}
	if c.tool("t3").v != a {
		t.Error("abandon took t3, whose end eino is reporting")
	}
	if got := ids(c.abandon(nil)); len(got) != 1 || got[0] != "t2" {
		t.Errorf("abandon(nil) = %v, want [t2]", got)
	}
	if c.endTool(nil, "t3") != "{}" || c.tool("t3").v != nil || c.anyOpen() {
		t.Error("t3 did not end by its own end, or a call is still open")
	}
}

// TestToolCallsEndByTheirOwnCall: a tool call ends by its callbacks' call wherever the ends of
// others moved it among the calls in progress, and two calls of the same id (none, say) are two
// calls, each ended by its own.
func TestToolCallsEndByTheirOwnCall(t *testing.T) {
	c := newCalls()
	v := &visit{agent: "a"}
	calls := []*call{{}, {}, {}, {}}
	for i, id := range []string{"t1", "t2", "", ""} {
		c.startTool(openTool{callID: id, args: fmt.Sprint("args", i), v: v, call: calls[i]})
	}
	for _, i := range []int{0, 3, 1, 2} { // the first's end moves the last into its place
		if got, want := c.endTool(calls[i], ""), fmt.Sprint("args", i); got != want {
			t.Fatalf("the end of call %d returned arguments %q, want %q", i+1, got, want)
		}
		if c.endTool(calls[i], "") != "" {
			t.Fatalf("call %d ended twice", i+1)
		}
		if i == 3 && c.tool("").args != "args2" {
			t.Errorf("tool(\"\") = %+v after the latest call of no id ended, want the other", c.tool(""))
		}
	}
	if c.anyOpen() {
		t.Error("a call is still open after every call ended")
	}
}

// TestAgentToolCallsOpenUntilTheyExit: an AgentTool call is in progress from its callee's start
// until its end is recorded; returned marks it ended by eino meanwhile, and only it.
func TestAgentToolCallsOpenUntilTheyExit(t *testing.T) {
	c := newCalls()
	callee := &visit{agent: "helper"}
	c.enter("c1", traces.AgentToolCall{Caller: "main", Callee: "helper", CallID: "c1"}, callee)
	if !c.anyOpen() {
		t.Error("an AgentTool call in progress is not open")
	}
	if c.returned("t9") {
		t.Error("returned(t9) = true for an ordinary tool call")
	}
	if got := c.agentTool("c1"); got == nil || got.returned || got.callee != callee {
		t.Errorf("agentTool(c1) = %+v; want the call, not returned", got)
	}
	if !c.returned("c1") {
		t.Error("returned(c1) = false for an AgentTool call in progress")
	}
	if got := c.agentTool("c1"); !got.returned {
		t.Error("c1 is not marked returned")
	}
	if got := c.exit("c1"); got == nil || got.Caller != "main" {
		t.Errorf("exit(c1) = %+v; want the call", got)
	}
	if c.exit("c1") != nil || c.anyOpen() {
		t.Error("c1 is still in progress after its exit")
	}
}

// TestToolNamesShared: a model call given the same tools as the visit's last shares that call's
// list of their names (never changed once made); other tools, or fewer, make a list of their own.
func TestToolNamesShared(t *testing.T) {
	v := &visit{}
	infos := func(names ...string) (out []*schema.ToolInfo) {
		for _, n := range names {
			if n == "" {
				out = append(out, nil) // no tool: skipped
				continue
			}
			out = append(out, &schema.ToolInfo{Name: n})
		}
		return out
	}
	first := v.toolNames(infos("a", "", "b"))
	if !slices.Equal(first, []string{"a", "b"}) {
		t.Fatalf("toolNames = %v, want [a b]", first)
	}
	if again := v.toolNames(infos("a", "b")); &again[0] != &first[0] {
		t.Error("the same tools made a list of their own")
	}
	for _, names := range [][]string{{"a", "c"}, {"a"}, {"a", "b", "c"}} {
		prev := v.toolList
		got := v.toolNames(infos(names...))
		if !slices.Equal(got, names) || &got[0] == &prev[0] {
			t.Errorf("toolNames(%v) = %v, shared with the last list: %v", names, got, &got[0] == &prev[0])
		}
	}
	if !slices.Equal(first, []string{"a", "b"}) {
		t.Errorf("a list was changed once made: %v", first)
	}
}
