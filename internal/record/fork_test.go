package record_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/baton-dev/baton/internal/record"
	"github.com/baton-dev/baton/traces"
)

// TestAppForkReadsBackAsWritten: BATON_FORK's value reads back as the fork it was written from,
// with every edit; a value that names no run, no call or no edit is refused saying what to write.
func TestAppForkReadsBackAsWritten(t *testing.T) {
	for _, f := range []record.AppFork{
		{Run: "r-1", At: 12, TransferTo: "math_agent"},
		{Run: "r-1", At: 3, Reply: "It's 'fine' & done? 100%", TransferTo: "desk"},
		{Run: "r-1", At: 7, Input: []traces.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "a & b"}}},
	} {
		s := f.String()
		if strings.ContainsAny(s, "' \n") {
			t.Errorf("%q needs more than single quotes in a shell", s)
		}
		got, err := record.ParseAppFork(s)
		if err != nil || !reflect.DeepEqual(got, f) {
			t.Errorf("ParseAppFork(%q) = %+v, %v; want %+v", s, got, err, f)
		}
	}
	for _, c := range []struct{ value, want string }{
		{"r-1", "write RUN@SEQ?EDIT"},
		{"r-1@x?reply=a", "after @ comes the seq"},
		{"r-1@0?reply=a", "a number from 1"},
		{"@4?reply=a", "names the run it forks"},
		{"r-1@4", "says what changes at the call"},
		{"r-1@4?answer=a", `unknown edit "answer"`},
		{"r-1@4?reply=a&input=[{\"role\":\"user\"}]", "not both"},
		{"r-1@4?input=nope", "a JSON list of messages"},
		{"r-1@4?input=[{\"content\":\"x\"}]", "input[0] has no role"},
	} {
		if _, err := record.ParseAppFork(c.value); err == nil || !strings.Contains(traces.ErrorMessage(err), c.want) {
			t.Errorf("ParseAppFork(%q) = %v, want an error saying %q", c.value, err, c.want)
		}
	}
}
