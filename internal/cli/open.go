package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"

	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/server"
)

var openCommand = &command{
	name:  "open",
	args:  "FILE",
	shape: "[--addr] [--token]",
	about: "serve a saved trace",
	define: func(fs *flag.FlagSet) runner {
		addr, token := listenFlags(fs)
		return func(ctx context.Context, args []string, stdout, _ io.Writer) error {
			var file string
			if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
				file, args = args[0], args[1:] // the file may come before the flags
			}
			if err := fs.Parse(args); err != nil {
				return err
			}
			if file == "" && fs.NArg() > 0 {
				file = fs.Arg(0)
			} else if fs.NArg() > 0 {
				return misuse("open", "open takes one file, not also %q", fs.Arg(0))
			}
			if file == "" {
				return misuse("open", "open needs a trace file")
			}
			return openTrace(ctx, file, *addr, *token, stdout)
		}
	},
}

// openTrace serves a trace file like any finished run, after traces.Unmarshal accepted it, and
// prints its page's address.
func openTrace(ctx context.Context, file, addr, token string, stdout io.Writer) error {
	tr, err := readTrace(file)
	if err != nil {
		return err
	}
	broker := live.NewBroker(0)
	if _, err := broker.Import(tr); err != nil {
		return err
	}
	srv, err := server.New(server.Config{Addr: addr, Token: token, Broker: broker})
	if err != nil {
		return err
	}
	ln, err := srv.Listen(ctx) // first, so that the printed address has the real port for :0
	if err != nil {
		return err
	}
	page, err := url.Parse(srv.URL())
	if err != nil {
		ln.Close()
		return err
	}
	page.Path = "/runs/" + tr.Run.ID
	fmt.Fprintf(stdout, "Baton is serving run %s (%s, %s) on %s\n", tr.Run.ID, tr.Run.Flow, tr.Run.Status, page)
	return srv.Serve(ctx, ln)
}
