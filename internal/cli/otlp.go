package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/baton-dev/baton/internal/otlp"
	"github.com/baton-dev/baton/traces"
)

// otlpFlags adds the OpenTelemetry export flags of serve and run to fs.
func otlpFlags(fs *flag.FlagSet) (endpoint *string, content *bool) {
	endpoint = fs.String("otlp-endpoint", "", "send each run as OpenTelemetry spans to the OTLP/HTTP collector at `URL`, such as http://localhost:4318")
	content = fs.Bool("otlp-content", false, "with --otlp-endpoint: include what messages, tools and the session said (it may hold user data)")
	return endpoint, content
}

// exportGrace bounds how long a command waits, as it exits, for the last spans to be sent.
const exportGrace = 5 * time.Second

// startExport returns an exporter to endpoint that logs its failures on stderr, or nil when
// endpoint is empty.
func startExport(endpoint string, content bool, stderr io.Writer) (*otlp.Exporter, error) {
	if endpoint == "" {
		return nil, nil
	}
	exp, err := otlp.New(otlp.Config{Endpoint: endpoint, Content: content, Logger: slog.New(slog.NewTextHandler(stderr, nil))})
	if err != nil {
		return nil, fmt.Errorf("--otlp-endpoint: %s", traces.ErrorMessage(err))
	}
	return exp, nil
}

// exporting runs fn with an exporter to endpoint (nil when endpoint is empty), then sends the
// spans not sent yet however fn returns: the exporter lives exactly as long as fn, so that no
// return of fn, early or late, loses the last spans of a run.
func exporting(endpoint string, content bool, stderr io.Writer, fn func(exp *otlp.Exporter) error) error {
	exp, err := startExport(endpoint, content, stderr)
	if err != nil {
		return err
	}
	defer stopExport(exp, stderr)
	return fn(exp)
}

// stopExport sends the spans not sent yet, for at most exportGrace. Exporting never fails a
// command: what went wrong is only said on stderr.
func stopExport(e *otlp.Exporter, stderr io.Writer) {
	if e == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), exportGrace)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		fmt.Fprintln(stderr, "baton: OpenTelemetry export:", err)
	}
}
