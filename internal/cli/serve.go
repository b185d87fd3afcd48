package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/baton-dev/baton/internal/postgres"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

var serveCommand = &command{
	name:  "serve",
	shape: "[--addr] [--token] [--pace] [--stream] [--model]... [--db] [--keep] [--keep-days] [--lease-heartbeat] [--lease-expiry] [--app-wait] [--advertise] [--prices] [--otlp-endpoint [--otlp-content]]",
	about: "serve the live page (the default command)",
	define: func(fs *flag.FlagSet) runner {
		addr, token := listenFlags(fs)
		pace := fs.Duration("pace", 600*time.Millisecond, "default delay `D` of the scripted model before each reply")
		stream := fs.Bool("stream", false, "let agents stream their replies")
		var models modelFlags
		fs.Var(&models, "model", modelHelp+"; repeat it to offer several (the first is the default)")
		db, keep, keepDays := dbFlag(fs), keepFlag(fs), keepDaysFlag(fs)
		heartbeat, expiry, appWait := leaseFlags(fs)
		advertise := advertiseFlag(fs)
		otlpEndpoint, otlpContent := otlpFlags(fs)
		pricesFile := pricesFlag(fs)
		return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			if err := fs.Parse(args); err != nil {
				return err
			}
			table, err := loadPrices(*pricesFile)
			if err != nil {
				return err
			}
			if _, err := checkAdvertise(*advertise); err != nil {
				return err
			}
			lease := postgres.LeaseTimes{Heartbeat: *heartbeat, Expiry: *expiry}
			if err := lease.Check(); err != nil {
				return traces.Errorf(traces.CodeInvalid, "--lease-heartbeat %s, --lease-expiry %s: %s", *heartbeat, *expiry, traces.ErrorMessage(err))
			}
			// Checked apart, to name the flag; 0, the default to Check, is refused too.
			if lease.AppWait = *appWait; *appWait <= 0 || lease.Check() != nil {
				return traces.Errorf(traces.CodeInvalid, "--app-wait %s is not between 1s (an app retrying each second may find its run"+
					" ended) and 24h", *appWait)
			}
			broker, lock, closeStore, err := storedBroker(ctx, *db, retention{*keep, *keepDays}, lease, slog.Default())
			if err != nil {
				return err
			}
			defer closeStore()
			exp, err := startExport(*otlpEndpoint, *otlpContent, stderr)
			if err != nil {
				return err
			}
			defer stopExport(exp, stderr) // after Serve, which has ended every run
			var export func(*traces.Recording)
			if exp != nil {
				export = exp.Watch
			}
			srv, err := server.New(server.Config{Addr: *addr, Token: *token, DefaultPace: *pace, Streaming: *stream,
				Models: models, Export: export, Broker: broker, Prices: table, Flows: flowsOf(ctx)})
			if err != nil {
				return err
			}
			for _, m := range models {
				if err := m.Ready(); err != nil {
					fmt.Fprintln(stderr, "baton:", traces.ErrorMessage(err))
				}
			}
			ln, err := srv.Listen(ctx)
			if err != nil {
				return err
			}
			if lock != nil {
				// The real port, also for :0, without the token, which no file or table keeps; on
				// PostgreSQL, where other servers pass requests on.
				address, _, _ := strings.Cut(srv.URL(), "?")
				if _, shared := lock.(*postgres.Lease); shared {
					address, err = advertised(*advertise, *addr, srv.URL())
				}
				if err == nil {
					err = lock.SetAddress(address)
				}
				if err != nil {
					ln.Close()
					return err
				}
			}
			fmt.Fprintf(stdout, "Baton is serving on %s\n", srv.URL()) // the real port, also for :0
			return errors.Join(srv.Serve(ctx, ln), closeStore())
		}
	},
}

// listenFlags adds the flags of the commands that serve a page: --addr and --token.
func listenFlags(fs *flag.FlagSet) (addr, token *string) {
	addr = fs.String("addr", server.DefaultAddr, "listen on `HOST:PORT`; any non-loopback address requires a token")
	token = fs.String("token", "", "access token `T`: at least 32 characters, such as the output of \"openssl rand -hex 16\""+
		" (generated when the address is not loopback and none is given)")
	return addr, token
}
