// Command baton is a live, browser-based debugger for multi-agent flows built with Eino ADK:
// `baton` serves its page, `baton help` lists its commands, `baton help COMMAND` says what one's
// flags do. The commands live in internal/cli, one file each.
package main

import (
	"os"

	"github.com/baton-dev/baton/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
