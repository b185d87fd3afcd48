package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/baton-dev/baton/internal/story"
)

var storyCommand = &command{
	name:  "story",
	args:  "RUN",
	shape: "[--db]",
	about: "tell a run's handoff story: who handed what to whom, turn by turn",
	define: func(fs *flag.FlagSet) runner {
		db := dbFlag(fs)
		return func(_ context.Context, args []string, stdout, _ io.Writer) error {
			name, err := parseWithArg(fs, args, "story needs a run: a trace file, or a run id of the database")
			if err != nil {
				return err
			}
			tr, err := readRun(name, *db)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(stdout, story.Of(tr).Text())
			return err
		}
	},
}
