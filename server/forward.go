package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/traces"
)

// Several servers on one database each run their own runs: a run's breakpoints, its held
// moments, its pace, its checkpoint and its typed replies are in the memory of the process that
// runs it. A request that acts on a run, sent to any of them (a load balancer picks), is passed
// on as it is to the one that runs it, whose answer is the answer: the database says which
// server that is and where it serves (live.Locator). Passing the request on, rather than relaying
// a command through the database, keeps one code path for every action (each handler runs where
// the run is, as on a single server), and needs nothing of the handlers.

// forwardedHeader marks a request one server passed on to another. The one it reaches serves it
// itself, whichever server the database names, so a request is passed on once at most.
const forwardedHeader = "Baton-Forwarded"

// forwardRetry is the Retry-After of a request whose run's server cannot be reached: it may be
// restarting, or dead, and then its lease expires and another server ends or takes the run.
const forwardRetry = 2 * time.Second

// runActions are the routes that act on a run where it runs: POST .../continue, .../breakpoints,
// .../pace and .../resume, and the typing websocket, with the run's id.
var runActions = regexp.MustCompile(`^/(?:api/runs/([^/]+)/(?:continue|breakpoints|pace|resume)|runs/([^/]+)/typing)$`)

// actionRun returns the id of the run r acts on where it runs, if it does.
func actionRun(r *http.Request) (string, bool) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		return "", false
	}
	m := runActions.FindStringSubmatch(r.URL.Path)
	switch {
	case m == nil:
		return "", false
	case r.Method == http.MethodPost && m[1] != "":
		return m[1], true
	case r.Method == http.MethodGet && m[2] != "":
		return m[2], true
	}
	return "", false
}

// forwardActions passes a request that acts on a run another live server runs on to that server
// (see above). It comes after the checks of Host, token and Origin: what it passes on was
// accepted here, and goes with this server's token.
func (s *Server) forwardActions(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		id, ok := actionRun(r)
		if !ok || r.Header.Get(forwardedHeader) != "" {
			return next(c)
		}
		owner, err := s.broker.Owner(id)
		if err != nil {
			return err
		}
		if owner == "" {
			return next(c)
		}
		return s.forward(c, id, owner)
	}
}

// forward passes c's request on to the server at base, which runs run id, and copies its answer
// back (a websocket's too, as long as it stays open). A server that cannot be reached is a 503.
func (s *Server) forward(c echo.Context, id, base string) error {
	target, err := url.Parse(base)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return fmt.Errorf("run %s: its server's address %q is not an http(s) URL", id, base)
	}
	target.Path, target.RawQuery = "", ""
	var failed error
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			h := pr.Out.Header
			h.Set(forwardedHeader, "1")
			// Checked here: the browser's origin is this server's, not the one passed to.
			h.Del("Origin")
			h.Del("Sec-Fetch-Site")
			if s.token != "" {
				h.Set(echo.HeaderAuthorization, "Bearer "+s.token)
			}
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) { failed = err },
	}
	r := c.Request()
	if websocket.IsWebSocketUpgrade(r) {
		// A socket passed on is closed when this server shuts down, as its own are: the page
		// comes back, through another server.
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(s.goingAway, cancel)()
		r = r.WithContext(ctx)
	}
	// The answer's headers are the other server's, security headers included: none twice.
	clear(c.Response().Header())
	p.ServeHTTP(c.Response(), r)
	if failed == nil || c.Response().Committed {
		return nil
	}
	securityHeaders(func(echo.Context) error { return nil })(c)
	return &traces.Error{Code: traces.CodeUnavailable, Retry: forwardRetry, Message: fmt.Sprintf(
		"run %s runs on the server at %s, which cannot be reached now (%v): try again; should that server have stopped,"+
			" another one ends its run once its lease has expired; should it be up, give it an --advertise address the other"+
			" servers reach", id, target.Host, failed)}
}
