package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/baton-dev/baton/agents"
)

var flowsCommand = &command{
	name:  "flows",
	about: "list the built-in flows",
	define: func(fs *flag.FlagSet) runner {
		return func(_ context.Context, args []string, stdout, _ io.Writer) error {
			if err := fs.Parse(args); err != nil {
				return err
			}
			for _, f := range agents.Catalogue() {
				fmt.Fprintf(stdout, "%-12s %s\n", f.Name, f.Title)
			}
			return nil
		}
	},
}
