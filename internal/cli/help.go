package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
)

var helpCommand = &command{
	name:  "help",
	args:  "[COMMAND]",
	about: "say what each command does, or what one command's flags do",
	define: func(fs *flag.FlagSet) runner {
		return func(_ context.Context, args []string, stdout, stderr io.Writer) error {
			if err := fs.Parse(args); err != nil {
				return err
			}
			switch fs.NArg() {
			case 0:
				_, err := io.WriteString(stdout, usage())
				return err
			case 1:
				c := lookup(fs.Arg(0))
				if c == nil {
					return errUnknown(fs.Arg(0))
				}
				cfs, _ := c.flags(stderr)
				return c.help(cfs, stdout)
			}
			return misuse("help", "help takes one command, not also %q", fs.Arg(1))
		}
	},
}

// usage is what help says of every command: its usage line and what it does.
func usage() string {
	var b strings.Builder
	b.WriteString("usage:\n")
	for _, c := range commands() {
		line, err := c.usageLine()
		if err != nil {
			line = err.Error()
		}
		fmt.Fprintf(&b, "  %s\n      %s\n", line, c.about)
	}
	b.WriteString(modelNote + "\n")
	b.WriteString("\"baton help COMMAND\" says what a command's flags do.\n")
	return b.String()
}

// usageLine returns c's usage line: "baton", its name ("[serve]" for the default command), its
// arguments, and its flags as its shape draws them.
func (c *command) usageLine() (string, error) {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	c.define(fs)
	line, _, err := c.synopsis(fs)
	return line, err
}

// help writes c's usage line, what it does, and what each flag does, in the order of its shape.
func (c *command) help(fs *flag.FlagSet, w io.Writer) error {
	line, names, err := c.synopsis(fs)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "usage: %s\n\n%s\n", line, c.about)
	if len(names) > 0 {
		fmt.Fprintln(w)
	}
	for _, name := range names {
		f := fs.Lookup(name)
		_, help := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  --%s", name)
		if arg := flagArg(f); arg != "" {
			fmt.Fprintf(w, " %s", arg)
		}
		fmt.Fprintf(w, "\n      %s", help)
		if !isZero(f.DefValue) {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// shapeFlag is a flag's name in a command's shape.
var shapeFlag = regexp.MustCompile(`--[a-z][a-z0-9-]*`)

// synopsis returns c's usage line with its flags, defined in fs, drawn by its shape, and the
// flags' names in the shape's order. It fails unless the shape names each flag of fs once, and
// each flag that takes a value names it in its help, in backquotes.
func (c *command) synopsis(fs *flag.FlagSet) (line string, names []string, err error) {
	seen := map[string]bool{}
	shape := shapeFlag.ReplaceAllStringFunc(c.shape, func(m string) string {
		name := m[2:]
		f := fs.Lookup(name)
		switch {
		case f == nil:
			err = fmt.Errorf("the usage of %s shows %s, which is no flag of its", c.name, m)
		case seen[name]:
			err = fmt.Errorf("the usage of %s shows %s twice", c.name, m)
		case !isBool(f) && !strings.Contains(f.Usage, "`"):
			err = fmt.Errorf("the help of %s's %s names no value in backquotes", c.name, m)
		}
		seen[name] = true
		names = append(names, name)
		if arg := flagArg(f); arg != "" {
			return m + " " + arg
		}
		return m
	})
	fs.VisitAll(func(f *flag.Flag) {
		if !seen[f.Name] && err == nil {
			err = fmt.Errorf("the usage of %s does not show its flag --%s", c.name, f.Name)
		}
	})
	if err != nil {
		return "", nil, err
	}
	name := c.name
	if name == defaultCommand {
		name = "[" + name + "]"
	}
	return strings.Join(strings.Fields("baton "+name+" "+c.args+" "+shape), " "), names, nil
}

// flagArg returns what a flag's value stands for, as its help names it in backquotes: "" for a
// boolean flag, which takes none, or for no flag.
func flagArg(f *flag.Flag) string {
	if f == nil || isBool(f) {
		return ""
	}
	arg, _ := flag.UnquoteUsage(f)
	return arg
}

// isBool reports whether f is a flag that takes no value.
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// isZero reports whether a flag's default is its type's zero value, which help leaves unsaid.
func isZero(def string) bool {
	switch def {
	case "", "false", "0", "0s":
		return true
	}
	return false
}
