package e2e_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/baton-dev/baton/agents"
	"github.com/baton-dev/baton/internal/live"
	"github.com/baton-dev/baton/internal/postgres"
	"github.com/baton-dev/baton/internal/postgres/pgtest"
	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// replica is a Baton server on a PostgreSQL database it shares with others, set up as `baton
// serve --db postgres://...` sets it up: a lease, and the runs the others record followed live.
type replica struct {
	*baton
	stop func() // shuts it down: its pages' sockets close
}

// startReplica serves the built-in flows, with flows replacing those of their names, on a new
// replica of database db until t ends or stop is called. An error the server logs fails t.
func startReplica(t *testing.T, db string, flows ...agents.Flow) *replica {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	store, err := postgres.Open(db, 0)
	if err != nil {
		t.Fatal(err)
	}
	lease, err := store.Claim("", postgres.DefaultLeaseTimes, quiet)
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	broker := live.NewStoredBroker(0, store, quiet)
	broker.Follow(store, live.DefaultFollowCheck)
	store.Listen(broker.Committed, quiet)
	all := agents.Catalogue()
	for _, f := range flows {
		all[slices.IndexFunc(all, func(g agents.Flow) bool { return g.Name == f.Name })] = f
	}
	logs := &logRecorder{}
	srv, err := server.New(server.Config{Addr: "127.0.0.1:0", Flows: all, Logger: slog.New(logs), Broker: broker})
	if err != nil {
		t.Fatal(err)
	}
	base, stop := serve(t, srv, broker, logs, func() {
		lease.Release()
		store.Close()
	})
	t.Cleanup(stop)
	if err := lease.SetAddress(base); err != nil {
		t.Fatal(err)
	}
	return &replica{baton: &baton{base: base, logs: logs}, stop: stop}
}

// switchingProxy is the one address of several replicas: it passes everything, websockets
// included, to one of them, and to another once told.
type switchingProxy struct {
	target atomic.Pointer[url.URL]
	url    string
}

func newSwitchingProxy(t *testing.T, to string) *switchingProxy {
	p := &switchingProxy{}
	p.to(t, to)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			u := p.target.Load()
			r.SetURL(u)
			// The replicas listen on loopback without a token, where a Host or an Origin other than
			// their own is refused: the proxy names the replica's. (In production the proxy keeps
			// them, and the replicas listen on a wildcard address with a token: docs/scaling.md.)
			if r.In.Header.Get("Origin") != "" {
				r.Out.Header.Set("Origin", u.Scheme+"://"+u.Host)
			}
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, err.Error(), http.StatusBadGateway) // the replica is gone: the page tries again
		},
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

func (p *switchingProxy) to(t *testing.T, base string) {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	p.target.Store(u)
}

// TestPageOnAnotherReplicaFollowsTheRun: two replicas on one PostgreSQL database; a run recorded
// by A, its page opened on B mid-run, is followed live on B's page to its end: every event once,
// in order, the handoffs drawn as A recorded them.
func TestPageOnAnotherReplicaFollowsTheRun(t *testing.T) {
	t.Parallel()
	db := pgtest.Database(t)
	supervisor, gate := gated(t, "supervisor")
	a := startReplica(t, db, supervisor)
	b := startReplica(t, db, supervisor)
	tb := newTab(t, nil)
	id := a.startRun(t, "supervisor", 0)
	holdAt(t, gate, 4) // research_agent has handed back: two transfers done, two to come
	tb.open(t, b.base+"/runs/"+id)
	tb.waitFor(t, "the first two transfer edges on B's page", `document.querySelectorAll('[data-testid=transfer-edge]').length === 2`)
	tb.waitStatus(t, "running")
	gate.Open()
	tb.waitStatus(t, "completed")
	checkFollowedRun(t, tb, a.trace(t, id))
}

// TestPageCarriesOnWhenItsReplicaDies: a run's page is opened through one address (a proxy) that
// sends it to replica B, which follows the run replica A records. B stops mid-run, and the proxy
// sends what comes next to A: the page's socket, cut, comes back through the proxy to A from the
// seq it has, and the page follows the run to its end, missing no event and showing none twice.
func TestPageCarriesOnWhenItsReplicaDies(t *testing.T) {
	t.Parallel()
	db := pgtest.Database(t)
	supervisor, gate := gated(t, "supervisor")
	a := startReplica(t, db, supervisor)
	b := startReplica(t, db, supervisor)
	proxy := newSwitchingProxy(t, b.base)
	tb := newTab(t, nil)
	id := a.startRun(t, "supervisor", 0)
	holdAt(t, gate, 4)
	tb.open(t, proxy.url+"/runs/"+id)
	tb.waitFor(t, "the first two transfer edges through the proxy", `document.querySelectorAll('[data-testid=transfer-edge]').length === 2`)
	tb.waitStatus(t, "running")
	seen := len(tb.state(t).Seqs)
	b.stop()
	proxy.to(t, a.base)
	tb.waitFor(t, "the page's socket cut", `document.body.dataset.live !== 'open'`)
	gate.Open()
	tb.waitStatus(t, "completed")
	tr := a.trace(t, id)
	if seen >= len(tr.Events) {
		t.Fatalf("the page had %d of the run's %d events when B stopped; want it mid-run", seen, len(tr.Events))
	}
	checkFollowedRun(t, tb, tr)
}

// checkFollowedRun checks that tb's run page shows every event of tr once, in order, and the
// supervisor flow's handoffs.
func checkFollowedRun(t *testing.T, tb *tab, tr traces.Trace) {
	t.Helper()
	final := tb.state(t)
	if !contiguous(final.Seqs, len(tr.Events)) {
		t.Errorf("timeline rows %v; want each of 1..%d once", final.Seqs, len(tr.Events))
	}
	if got := edgeStrings(final.Edges); !slices.Equal(got, supervisorEdges) {
		t.Errorf("edges = %q; want %q", got, supervisorEdges)
	}
}
