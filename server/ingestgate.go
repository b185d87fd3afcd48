package server

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/traces"
)

// Who may open an ingestion session, and who may write to one.
//
// Sessions are bounded per client and in all (Config.MaxIngestRuns, MaxIngestRunsPerClient): a
// start past a bound is answered 429 (the client's) or 503 (the server's) with a Retry-After. A
// session holds its place until it ends: by the app's run.finished, or when the app goes quiet
// for IngestTimeout.
//
// Each session has a secret, random, returned by the start that opened it: every post to the run
// carries it (runSecretHeader), and a post without it is refused 403. The store keeps a hash of
// the secret of each run's latest session (live.Store.SetSessionHash), so that what follows holds
// across restarts. Who may open a new session on an existing run: a start sent again with the
// app's own key (it gets the same session and secret); a continue that shows the secret of the
// run's last session (refused 403 otherwise; 409 for a run no app streamed); and a resume of the
// run's last interrupt, once per interrupt (see claim): whoever holds the interrupt's id.

// Defaults of the bounds on ingestion sessions in Config.
const (
	DefaultMaxIngestRuns          = 256
	DefaultMaxIngestRunsPerClient = 64
)

// runSecretHeader carries a session's secret on every post to its run, and on a continue.
const runSecretHeader = "Baton-Run-Secret"

// ingestRefused is a refusal of an ingestion request with its own status: 403 (not the session's
// secret), 429 or 503 (too many sessions; retry says when to try again).
type ingestRefused struct {
	status int
	msg    string
	retry  time.Duration
}

func (e *ingestRefused) Error() string { return e.msg }

// write answers the refusal: {"error"}, with a Retry-After in whole seconds when it has one.
func (e *ingestRefused) write(c echo.Context) error {
	if e.retry > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(retrySeconds(e.retry)))
	}
	return c.JSON(e.status, map[string]string{"error": e.msg})
}

// retrySeconds is d in whole seconds, rounded up, at least 1.
func retrySeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// ingestClient names who sends a request, for the per-client bound: its address without the port
// (a client's connections come from many ports). X-Forwarded-For is not trusted: anyone can send
// it. The token, when the server has one, is the same for every client, so it tells none apart.
func ingestClient(c echo.Context) string {
	host, _, err := net.SplitHostPort(c.Request().RemoteAddr)
	if err != nil {
		return c.Request().RemoteAddr
	}
	return host
}

// newSecret returns a session's secret: 128 random bits, not derived from anything.
func newSecret() string { return rand.Text() }

// sameSecret reports whether given is want, in time that does not depend on where they differ.
func sameSecret(given, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(given), []byte(want)) == 1
}

// secretHash is what the store keeps of a session's secret: its SHA-256, so that reading the
// database does not give the secret away. The secret is random, 128 bits: no salt or stretching
// is needed.
func secretHash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// provesSession reports whether given is the secret whose hash is want.
func provesSession(given string, want []byte) bool {
	return want != nil && subtle.ConstantTimeCompare(secretHash(given), want) == 1
}

// forbidden refuses a request that does not carry run id's secret.
func forbidden(id string) error {
	return &ingestRefused{status: http.StatusForbidden, msg: fmt.Sprintf("run %s is streamed by another session: "+
		"only the app that started it may post to it, with the %s its start returned", id, runSecretHeader)}
}

// reserve takes a place for a new session of client, or fails with a 429 when the client has
// MaxIngestRunsPerClient sessions, or a 503 when the server has MaxIngestRuns. The caller holds
// in.mu, and gives the place back with release unless a session takes it.
func (in *ingestion) reserve(client string) error {
	switch {
	case in.perClient[client] >= in.maxPerClient:
		return &ingestRefused{status: http.StatusTooManyRequests, retry: in.soonestExpiry(client),
			msg: in.busyMessage(fmt.Sprintf("this client (%s) streams %d runs, as many as one client may", client, in.maxPerClient), client)}
	case in.sessions >= in.maxSessions:
		return &ingestRefused{status: http.StatusServiceUnavailable, retry: in.soonestExpiry(""),
			msg: in.busyMessage(fmt.Sprintf("Baton takes %d streamed runs at once and has as many", in.maxSessions), "")}
	}
	in.perClient[client]++
	in.sessions++
	return nil
}

// release gives back a place reserve took. The caller holds in.mu.
func (in *ingestion) release(client string) {
	in.sessions--
	if in.perClient[client]--; in.perClient[client] <= 0 {
		delete(in.perClient, client)
	}
}

func (in *ingestion) busyMessage(what, client string) string {
	return fmt.Sprintf("%s: retry in %d s (Retry-After), when one of them has ended or been quiet for %s", what,
		retrySeconds(in.soonestExpiry(client)), in.timeout)
}

// soonestExpiry is how long until the first of the open sessions of client (of anyone when
// client is "") would expire if its app went quiet now: when a place frees at the latest, unless
// a run ends sooner. The caller holds in.mu.
func (in *ingestion) soonestExpiry(client string) time.Duration {
	soonest := in.timeout
	now := time.Now()
	for _, r := range in.runs {
		if client != "" && r.client != client {
			continue
		}
		if left := in.timeout - now.Sub(time.Unix(0, r.heard.Load())); left < soonest {
			soonest = max(left, 0)
		}
	}
	return soonest
}

// claim claims, for the start o, its key and the interrupt it resumes, if any: a start sent
// again opens no second session, and a resume joins the run that stopped at its interrupt once. It
// fails with CodeUnavailable while a start with the same key is under way (the app sent it again:
// it gets its answer once that one is done), and with CodeConflict, saying by which run, when a
// session resumes the interrupt or another start is claiming it. The caller holds in.mu, and lets
// go with unclaim.
func (in *ingestion) claim(o opening) error {
	if _, ok := in.starting[o.key]; ok && o.key != "" {
		return traces.Errorf(traces.CodeUnavailable, "the first start of this run is still being answered: send it again in a second")
	}
	if id := o.resumes; id != "" {
		if r := in.resumed[id]; r != nil {
			return alreadyResumed(id, r.rec.ID())
		}
		if _, ok := in.claims[id]; ok {
			return traces.Errorf(traces.CodeConflict, "interrupt %s is being resumed by another start: a resume joins its run once", id)
		}
		in.claims[id] = struct{}{}
	}
	if o.key != "" {
		in.starting[o.key] = struct{}{}
	}
	return nil
}

// unclaim lets go of what claim took for o. The caller holds in.mu.
func (in *ingestion) unclaim(o opening) {
	if o.resumes != "" {
		delete(in.claims, o.resumes)
	}
	if o.key != "" {
		delete(in.starting, o.key)
	}
}

func alreadyResumed(interrupt, run string) error {
	return traces.Errorf(traces.CodeConflict, "interrupt %s was already resumed, in run %s: a run goes on from an interrupt once; "+
		"resume from its latest interrupt, or start a new run", interrupt, run)
}

// resumedIn reports whether tr went on after its last interrupt, id: a resumed event names it.
func resumedIn(tr traces.Trace, id string) bool {
	for i := len(tr.Events) - 1; i >= 0; i-- {
		switch e := tr.Events[i]; {
		case e.Kind == traces.KindInterrupted:
			return false
		case e.Kind == traces.KindResumed && e.Interrupt != nil && e.Interrupt.ID == id:
			return true
		}
	}
	return false
}
