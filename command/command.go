// Package command is Baton's whole command line for a binary of a program's own, which serves,
// runs, holds, forks and replays the program's flows (package flows) beside Baton's built-in ones:
//
//	func main() { command.Main(triage, refunds) }
//
// then `go run ./mybaton` serves the page with them (the index lists them first, under "Your
// flows"), and `go run ./mybaton run triage --break transfer`, `fork`, `diff` and the rest take
// them as they take Baton's own (`help` lists the commands).
//
// Supported API, like packages flows and attach.
package command

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/flows"
	"github.com/baton-dev/baton/internal/cli"
	"github.com/baton-dev/baton/traces"
)

// Main runs Baton's command line on the process's arguments with fs registered, and exits with
// its status: 0, or 1 after saying on standard error what went wrong. It stops on SIGINT or
// SIGTERM. A flow that cannot be registered (a name missing, given twice or taken by a built-in
// flow; no Build) exits 2 before any command runs, saying why.
func Main(fs ...flows.Flow) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, os.Args[1:], os.Stdout, os.Stderr, fs...)
	stop()
	os.Exit(code)
}

// Run is Main for one command line args (without the program's name), writing to stdout and
// stderr, until it is done or ctx ends; it returns the exit status instead of exiting.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, fs ...flows.Flow) int {
	registered, err := agents.Registered(fs)
	if err != nil {
		fmt.Fprintln(stderr, "baton:", traces.ErrorMessage(err))
		return 2
	}
	return cli.Run(cli.WithFlows(ctx, registered), args, stdout, stderr)
}
