// Package cli is Baton's command line: one file per command, each declaring its flags once, from
// which its usage line and `baton help COMMAND` are made (and docs/cli.md is checked against
// them). Baton's own, not API.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

// Main runs the command line args until it is done or the process receives SIGINT or SIGTERM,
// and returns the process's exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, args, stdout, stderr)
}

// Run executes one command line until it is done or ctx ends, and returns the process's exit
// code: 0, or 1 after saying on stderr what went wrong. A first argument that is no flag names
// the command; serve is the default.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	name := defaultCommand
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	err := errUnknown(name)
	if c := lookup(name); c != nil {
		err = c.run(ctx, args, stdout, stderr)
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "baton:", err)
		return 1
	}
	return 0
}

// command is one command of the command line.
type command struct {
	name string
	// args is what the command takes besides flags, as its usage line shows it ("FLOW").
	args string
	// shape is how the usage line shows the flags: each flag of define's once, by name, in
	// brackets and groups ("[--input] [--approve | --reject]"); each gets the placeholder its
	// help names (see flagArg).
	shape string
	// about says in a line what the command does.
	about string
	// define adds the command's flags to fs and returns what runs the command on its arguments
	// (flags included, unparsed: the command parses them with fs).
	define func(fs *flag.FlagSet) runner
}

// runner runs a command on its arguments, flags included.
type runner func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// defaultCommand is the command of a command line that names none.
const defaultCommand = "serve"

// commandList is every command, in the order help shows them. It is set by init: help, one of
// them, lists them all.
var commandList []*command

func init() {
	commandList = []*command{serveCommand, flowsCommand, runCommand, openCommand, compareCommand, exportCommand,
		importCommand, lintCommand, diffCommand, storyCommand, forkCommand, helpCommand}
}

// commands returns every command, in the order help shows them.
func commands() []*command { return commandList }

// lookup returns the command called name, or nil.
func lookup(name string) *command {
	i := slices.IndexFunc(commands(), func(c *command) bool { return c.name == name })
	if i < 0 {
		return nil
	}
	return commands()[i]
}

// errUnknown is the error for a command line that names no command of Baton's.
func errUnknown(name string) error {
	return fmt.Errorf("unknown command %q\n%s", name, strings.TrimSuffix(usage(), "\n"))
}

// flags returns c's flag set, its flags defined, and what runs c. Parse errors are returned, not
// fatal; -h and --help print c's help on stderr.
func (c *command) flags(stderr io.Writer) (*flag.FlagSet, runner) {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	run := c.define(fs)
	fs.Usage = func() {
		if err := c.help(fs, fs.Output()); err != nil {
			fmt.Fprintln(fs.Output(), err)
		}
	}
	return fs, run
}

// run runs c on its arguments.
func (c *command) run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	_, run := c.flags(stderr)
	return run(ctx, args, stdout, stderr)
}

// misuse is the error for a command line that the command called name cannot run as given:
// why, then the command's usage line.
func misuse(name, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if c := lookup(name); c != nil {
		if line, err := c.usageLine(); err == nil {
			msg += "\nusage: " + line
		}
	}
	return errors.New(msg)
}

// parseWithArg parses fs from args, which hold the command's one argument, before or after the
// flags.
func parseWithArg(fs *flag.FlagSet, args []string, missing string) (string, error) {
	var arg string
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		arg, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	switch {
	case arg == "" && fs.NArg() == 1:
		arg = fs.Arg(0)
	case fs.NArg() > 0:
		return "", misuse(fs.Name(), "%s takes one argument, not also %q", fs.Name(), fs.Arg(fs.NArg()-1))
	}
	if arg == "" {
		return "", misuse(fs.Name(), "%s", missing)
	}
	return arg, nil
}
