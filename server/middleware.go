package server

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/traces"
)

// contentSecurityPolicy allows the page its own scripts and styles only.
const contentSecurityPolicy = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

// hostPolicy says which Host headers reach the server (the defence against DNS rebinding) and
// whether a token is mandatory. It is immutable; Serve swaps in a new one once the port is known.
type hostPolicy struct {
	host, port string // as configured; host "" for all interfaces
	wildcard   bool   // bound to every interface: any Host passes, a token is mandatory
	needsToken bool   // the address is reachable from other machines
	allowed    map[string]bool
}

// newHostPolicy classifies addr: a loopback address accepts localhost, 127.0.0.1 and [::1] with
// its port; a specific address or name accepts itself only; a wildcard accepts any Host.
func newHostPolicy(addr string) (*hostPolicy, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, traces.Errorf(traces.CodeInvalid, "address %q is not host:port (for example %s)", addr, DefaultAddr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return nil, traces.Errorf(traces.CodeInvalid, "address %q: port %q is not a number from 0 to 65535", addr, port)
	}
	p := &hostPolicy{host: host, port: port, allowed: make(map[string]bool)}
	ip := net.ParseIP(host)
	allow := func(h string) {
		p.allowed[strings.ToLower(net.JoinHostPort(h, port))] = true
		if port == "80" { // browsers leave the default port out of Host
			p.allowed[strings.ToLower(strings.TrimSuffix(net.JoinHostPort(h, port), ":80"))] = true
		}
	}
	switch {
	case host == "" || ip != nil && ip.IsUnspecified():
		p.wildcard, p.needsToken = true, true
	case strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback():
		allow("localhost")
		allow("127.0.0.1")
		allow("::1")
		allow(host)
	default:
		p.needsToken = true
		allow(host)
	}
	return p, nil
}

// withListener returns the policy for the address the server really listens on: when the
// configured port is 0, the listener's port replaces it.
func (p *hostPolicy) withListener(a net.Addr) (*hostPolicy, error) {
	if p.port != "0" {
		return p, nil
	}
	_, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return nil, fmt.Errorf("listener address %s: %w", a, err)
	}
	return newHostPolicy(net.JoinHostPort(p.host, port))
}

// allows reports whether a request with Host header host may be served.
func (p *hostPolicy) allows(host string) bool {
	return p.wildcard || p.allowed[strings.ToLower(host)]
}

// url is the index page's address, with the token when there is one.
func (p *hostPolicy) url(token string) string {
	host := p.host
	if p.wildcard {
		host = "127.0.0.1"
	}
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(host, p.port), Path: "/"}
	if token != "" {
		u.RawQuery = url.Values{"token": {token}}.Encode()
	}
	return u.String()
}

// recoverPanic turns a handler's panic into an internal error, so one bad request never takes
// the server down.
func (s *Server) recoverPanic(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			err = fmt.Errorf("panic serving %s %s: %v\n%s", c.Request().Method, c.Request().URL.Path, p, debug.Stack())
		}()
		return next(c)
	}
}

// securityHeaders sets the headers every response carries, errors included.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if !strings.HasPrefix(c.Request().URL.Path, "/static/") {
			// Traces change while a run goes on; nothing but the assets may be cached.
			h.Set("Cache-Control", "no-store")
		}
		return next(c)
	}
}

// checkHost rejects requests whose Host header is not one of the server's own names, so a web
// page whose DNS name was rebound to 127.0.0.1 cannot talk to Baton.
func (s *Server) checkHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !s.hosts.Load().allows(c.Request().Host) {
			return refuse(c, echo.NewHTTPError(http.StatusForbidden, "host not allowed"))
		}
		return next(c)
	}
}

// isPage reports whether r is a browser navigation to a page (not the API, an asset or a
// websocket).
func isPage(r *http.Request) bool {
	return r.Method == http.MethodGet && !isAPI(r) && !strings.HasPrefix(r.URL.Path, "/static/") &&
		!websocket.IsWebSocketUpgrade(r)
}

// isAPI reports whether r is for the JSON API, whose errors are JSON.
func isAPI(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/api/") }

// checkOrigin refuses every request another site's page sent, GETs included, since each makes
// Baton do work (render a trace, open a websocket, start a run): one whose Origin is not this
// server's, and one the browser marks Sec-Fetch-Site cross-site or same-site (another port of this
// host is another origin but the same site), which is how a <script> or <img> without an Origin
// shows. A top-level navigation to a page passes (a link to a run from an issue or a chat): the
// other site cannot read what it opens, and no cookie makes it pass the token check. Requests with
// neither header (curl, the CLI) pass: they carry no ambient browser credentials.
func checkOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if !sameOrigin(r) {
			return refuse(c, echo.NewHTTPError(http.StatusForbidden,
				fmt.Sprintf("cross-origin request not allowed: origin %q is not this server's", r.Header.Get("Origin"))))
		}
		switch r.Header.Get("Sec-Fetch-Site") {
		case "cross-site", "same-site":
			if !isNavigation(r) {
				return refuse(c, echo.NewHTTPError(http.StatusForbidden,
					"cross-site request not allowed: another site's page may not use Baton; open Baton's own page instead"))
			}
		}
		return next(c)
	}
}

// isNavigation reports whether r is a top-level browser navigation to a page: a link followed or
// an address typed, not a frame, a script or a fetch.
func isNavigation(r *http.Request) bool {
	return isPage(r) && r.Header.Get("Sec-Fetch-Mode") == "navigate" && r.Header.Get("Sec-Fetch-Dest") == "document"
}

// refusalLinger is how long a refused request's connection stays open after the answer, for the
// rest of a body the client is still sending: closing on unread data would reset the connection
// and could destroy the answer before the client reads it. Short, since a client that sends
// nothing holds one of the MaxConns slots that long.
const refusalLinger = 250 * time.Millisecond

// refuse answers err to a request that may not be served, at once, and closes its connection
// soon after: net/http would otherwise read what is left of its body (up to 256 KiB) before
// answering and again once answered, however slowly the client sends it.
func refuse(c echo.Context, err *echo.HTTPError) error {
	c.Response().Header().Set(echo.HeaderConnection, "close")
	// Fails where the writer cannot (HTTP/2 through a proxy); the read timeouts bound it then.
	_ = http.NewResponseController(c.Response()).SetReadDeadline(time.Now().Add(refusalLinger))
	return err
}

// sameOrigin reports whether r has no Origin header or one naming the page's own scheme and host.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return false
	}
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		// A reverse proxy that ends TLS in front of Baton says so. Another site's page cannot
		// send this header: it is not one a browser sends cross-origin without a preflight, which
		// Baton never approves, and a websocket carries no header a page sets.
		scheme = "https"
	}
	return strings.EqualFold(u.Scheme, scheme) && strings.EqualFold(u.Host, r.Host)
}

// bodyLimit refuses request bodies over limitOf(c) bytes: at once when Content-Length says so,
// or when a handler reads past the limit (readJSONBody reports 413 then). A body must arrive
// within timeout: reading it fails after that (readJSONBody reports 408), so a client that sends
// headers and then trickles or withholds its body cannot hold a connection.
func bodyLimit(limitOf func(c echo.Context) int64, timeout time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			limit := limitOf(c)
			r := c.Request()
			if r.ContentLength > limit {
				return refuse(c, tooLarge(c, limit))
			}
			if r.Body != nil && r.Body != http.NoBody {
				// Not every ResponseWriter can (HTTP/2 through a proxy); http.Server's
				// ReadTimeout still bounds the request then.
				_ = http.NewResponseController(c.Response()).SetReadDeadline(time.Now().Add(timeout))
				r.Body = http.MaxBytesReader(c.Response(), r.Body, limit)
			}
			return next(c)
		}
	}
}

func tooLarge(c echo.Context, limit int64) *echo.HTTPError {
	msg := fmt.Sprintf("request body is larger than the limit of %d bytes (%d KiB)", limit, limit>>10)
	if c.Path() == importRoute {
		msg += "; add a larger trace file with `baton import FILE` (or look at it with `baton open FILE`), which have no such limit"
	}
	return echo.NewHTTPError(http.StatusRequestEntityTooLarge, msg)
}
