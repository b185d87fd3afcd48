package cli

import (
	"context"
	"flag"
	"io"
	"strings"
	"testing"
)

// TestSynopsisRefusesAShapeThatDisagrees: a usage line is made only when the command's shape shows
// each of its flags once, and each flag that takes a value names it: a flag added without its
// place in the usage, or a place left for a flag that went, fails help and its tests.
func TestSynopsisRefusesAShapeThatDisagrees(t *testing.T) {
	define := func(fs *flag.FlagSet) runner {
		fs.String("out", "", "write to `FILE`")
		fs.Bool("html", false, "write HTML")
		return func(context.Context, []string, io.Writer, io.Writer) error { return nil }
	}
	for _, tc := range []struct {
		name, shape, want string
		define            func(*flag.FlagSet) runner
	}{
		{"agrees", "[--html] [--out]", "", define},
		{"a flag left out", "[--out]", "does not show its flag --html", define},
		{"no such flag", "[--html] [--out] [--keep]", "shows --keep, which is no flag", define},
		{"a flag twice", "[--html] [--out] [--out]", "shows --out twice", define},
		{"a value unnamed", "[--in]", "names no value in backquotes", func(fs *flag.FlagSet) runner {
			fs.String("in", "", "read from this file")
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &command{name: "x", args: "RUN", shape: tc.shape, define: tc.define}
			line, err := c.usageLine()
			if tc.want == "" {
				if err != nil || line != "baton x RUN [--html] [--out FILE]" {
					t.Errorf("usage line %q, %v; want baton x RUN [--html] [--out FILE]", line, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("usage line %q, error %v; want an error saying %q", line, err, tc.want)
			}
		})
	}
}
