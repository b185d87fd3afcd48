// Package inprocess serves Baton's page from inside an app, for when no `baton serve` runs:
//
//	b, err := inprocess.Start(ctx) // prints the page's URL
//	iter := runner.Query(ctx, "hello", b.Option())
//
// The page lives as long as ctx (or the process): it keeps nothing alive. Flows registered with
// it (Options.Flows, package flows) are started, held at breakpoints, forked and replayed from the
// page and its API as Baton's own are.
//
// Supported API, like package attach, whose Baton it returns.
package inprocess

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/attach"
	"github.com/baton-dev/baton/flows"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// Options tune Start. The zero value serves on a free loopback port and prints the URL on
// standard error.
type Options struct {
	// Addr is the loopback host:port to serve on; 127.0.0.1:0 (a free port) when empty.
	Addr string
	// Out receives the line with the page's URL; standard error when nil.
	Out io.Writer
	// Attach configures the returned Baton; its URL is the page's own.
	Attach attach.Config
	// Flows are the flows the page offers to run, beside showing the app's own runs; none when
	// empty (Baton's built-in flows are not offered here).
	Flows []flows.Flow
	// Models are the chat models the page offers runs of Flows besides the scripted one, the
	// first the default: "openai:NAME" (any OpenAI-compatible server: OPENAI_API_KEY and
	// OPENAI_BASE_URL say where and with which key) or "replay:FILE" (a trace file's recorded
	// replies).
	Models []string
}

// Start serves Baton's page on a loopback port until ctx ends, prints its URL, and returns a
// Baton whose Option and Handler record into it. It fails when the address cannot be listened on
// or is not a loopback one, when a flow cannot be registered (a name that is missing, taken twice
// or by a built-in flow; no Build), and for a model spec it cannot read.
func Start(ctx context.Context, opts ...Options) (*attach.Baton, error) {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.Out == nil {
		o.Out = os.Stderr
	}
	registered, err := agents.Registered(o.Flows)
	if err != nil {
		return nil, fmt.Errorf("serve baton in process: %s", traces.ErrorMessage(err))
	}
	models := make([]*agents.Model, len(o.Models))
	for i, spec := range o.Models {
		if models[i], err = agents.ParseModel(spec, agents.ProviderEnvFromOS()); err != nil {
			return nil, fmt.Errorf("serve baton in process: %s", traces.ErrorMessage(err))
		}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("serve baton in process: %w", err)
	}
	s, err := server.New(server.Config{
		Addr:   ln.Addr().String(),
		Flows:  registered, // not the catalogue: the app's own flows and runs
		Models: models,
		Logger: slog.New(slog.NewTextHandler(o.Out, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("serve baton in process: %w", err)
	}
	if s.Token() != "" {
		ln.Close()
		return nil, fmt.Errorf("serve baton in process: %s is not a loopback address", o.Addr)
	}
	go s.Serve(ctx, ln)
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(o.Out, "baton: watch this app's runs at %s\n", url)
	cfg := o.Attach
	cfg.URL, cfg.Dir = url, ""
	return attach.New(cfg), nil
}
