package cli

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/baton-dev/baton/agents"
)

var flowsCommand = &command{
	name:  "flows",
	about: "list the flows: those registered with this baton, then the built-in ones",
	define: func(fs *flag.FlagSet) runner {
		return func(ctx context.Context, args []string, stdout, _ io.Writer) error {
			if err := fs.Parse(args); err != nil {
				return err
			}
			for _, f := range flowsOf(ctx) {
				fmt.Fprintf(stdout, "%-12s %s\n", f.Name, cmp.Or(f.Title, f.Description))
			}
			return nil
		}
	},
}

// flowsKey is the context key of the flows registered with the command line.
type flowsKey struct{}

// WithFlows returns ctx with registered: the flows a program registered, which its commands run
// beside the catalogue's (Main sets them).
func WithFlows(ctx context.Context, registered []agents.Flow) context.Context {
	return context.WithValue(ctx, flowsKey{}, registered)
}

// flowsOf returns the flows the commands run: those registered in ctx, then the catalogue.
func flowsOf(ctx context.Context) []agents.Flow {
	registered, _ := ctx.Value(flowsKey{}).([]agents.Flow)
	return slices.Concat(registered, agents.Catalogue())
}

// lookupFlow returns the flow of flowsOf(ctx) named name, or an error listing them all.
func lookupFlow(ctx context.Context, name string) (agents.Flow, error) {
	return agents.Find(flowsOf(ctx), name)
}
