package server_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/baton-dev/baton/server"
)

// TestHostCheck: only the server's own host names get through (DNS rebinding).
func TestHostCheck(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	port := ts.Host[strings.LastIndex(ts.Host, ":"):]
	tests := []struct {
		name, host, path string
		status           int
	}{
		{"own address", ts.Host, "/api/flows", 200},
		{"localhost", "localhost" + port, "/api/flows", 200},
		{"LOCALHOST", "LOCALHOST" + port, "/api/flows", 200},
		{"ipv6 loopback", "[::1]" + port, "/api/flows", 200},
		{"rebound name", "evil.example" + port, "/api/flows", 403},
		{"rebound name without port", "evil.example", "/api/flows", 403},
		{"other port", "localhost:1", "/api/flows", 403},
		{"rebound name on a page", "evil.example" + port, "/", 403},
		{"rebound name on an unknown path", "evil.example" + port, "/nope", 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, request{path: tt.path, host: tt.host})
			if res.status != tt.status {
				t.Fatalf("status %d, want %d: %s", res.status, tt.status, res.body)
			}
			if tt.status == 403 && !strings.Contains(string(res.body), "host not allowed") {
				t.Errorf("body %s, want it to say host not allowed", res.body)
			}
		})
	}
	t.Run("websocket from a rebound name", func(t *testing.T) {
		ts.addRecording(t, "r-host")
		_, res, err := ts.dial(t, "/api/runs/r-host/events", http.Header{"Host": {"evil.example" + port}})
		if err == nil || res.status != 403 {
			t.Errorf("got %v, status %d; want 403", err, res.status)
		}
	})
}

// TestSpecificAddress: bound to one address, the server answers to that name only, and wants the
// token since other machines can reach it.
func TestSpecificAddress(t *testing.T) {
	ts := mustOpenServer(t, server.Config{Addr: "192.0.2.10:7070", Token: strongToken})
	bearer := map[string]string{"Authorization": "Bearer " + strongToken}
	tests := []struct {
		name   string
		host   string
		header map[string]string
		status int
	}{
		{"own address with token", "192.0.2.10:7070", bearer, 200},
		{"own address without token", "192.0.2.10:7070", nil, 401},
		{"loopback name", "localhost:7070", bearer, 403},
		{"other name", "evil.example:7070", bearer, 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if res := ts.do(t, request{path: "/api/flows", host: tt.host, header: tt.header}); res.status != tt.status {
				t.Errorf("status %d, want %d: %s", res.status, tt.status, res.body)
			}
		})
	}
}

// TestOriginCheck: another site's page can neither open a websocket nor post to the API.
func TestOriginCheck(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	ts.addRecording(t, "r-origin")
	own := "http://" + ts.Host
	tests := []struct {
		name   string
		origin string
		status int
	}{
		{"no origin (curl, scripts)", "", 101},
		{"own origin", own, 101},
		{"own origin via localhost", "http://localhost" + ts.Host[strings.LastIndex(ts.Host, ":"):], 403},
		{"cross-site", "http://evil.example", 403},
		{"same host other port", "http://127.0.0.1:1", 403},
		{"https of own host", "https://" + ts.Host, 403},
		{"null", "null", 403},
	}
	for _, tt := range tests {
		t.Run("websocket "+tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.origin != "" {
				h.Set("Origin", tt.origin)
			}
			conn, res, err := ts.dial(t, "/api/runs/r-origin/events", h)
			if tt.status == 101 {
				if err != nil {
					t.Fatalf("dial: %v (%d %s)", err, res.status, res.body)
				}
				conn.Close()
				return
			}
			if err == nil || res.status != tt.status || !strings.Contains(res.apiError(t), "cross-origin request not allowed") {
				t.Errorf("got %v, %d %s; want %d", err, res.status, res.body, tt.status)
			}
		})
		t.Run("POST "+tt.name, func(t *testing.T) {
			want := tt.status
			if want == 101 {
				want = 201
			}
			res := ts.do(t, request{method: http.MethodPost, path: "/api/runs", body: `{"flow": "echo"}`, header: map[string]string{"Origin": tt.origin}})
			if res.status != want {
				t.Errorf("status %d, want %d: %s", res.status, want, res.body)
			}
		})
	}
}

// TestCrossSiteRequestsRefused: another site's page cannot make Baton do work with a GET either:
// not by fetch (Origin), nor by a <script>, <img> or frame (Sec-Fetch-Site, no Origin). A link to
// a page, followed at the top level, still opens it; requests with neither header (curl, the CLI)
// and the page's own requests pass.
func TestCrossSiteRequestsRefused(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	rec := ts.addRecording(t, "r-site")
	emitMessages(rec, 1, "hi")
	fetch := func(site string) map[string]string {
		return map[string]string{"Sec-Fetch-Site": site, "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}
	}
	navigate := func(site string) map[string]string {
		return map[string]string{"Sec-Fetch-Site": site, "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
	}
	tests := []struct {
		name, path string
		header     map[string]string
		status     int
		want       string
	}{
		{"fetch from another origin", "/api/runs/r-site/trace", map[string]string{"Origin": "http://evil.example"}, 403, "cross-origin request not allowed"},
		{"fetch from another port", "/api/runs", map[string]string{"Origin": "http://127.0.0.1:1"}, 403, "cross-origin request not allowed"},
		{"script from another site", "/api/runs/r-site/trace", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "script"}, 403, "cross-site request not allowed"},
		{"image from another port", "/api/runs/r-site/trace", map[string]string{"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}, 403, "cross-site request not allowed"},
		{"inspector fetched by another site", "/runs/r-site/inspector?seq=1", fetch("cross-site"), 403, "cross-site request not allowed"},
		{"page in another site's frame", "/runs/r-site", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}, 403, "cross-site request not allowed"},
		{"api navigated to from another site", "/api/runs/r-site/trace", navigate("cross-site"), 403, "cross-site request not allowed"},
		{"link to a run from another site", "/runs/r-site", navigate("cross-site"), 200, ""},
		{"link to the index from another site", "/", navigate("cross-site"), 200, ""},
		{"address typed", "/runs/r-site", navigate("none"), 200, ""},
		{"the page's own fetch", "/runs/r-site/inspector?seq=1", fetch("same-origin"), 200, ""},
		{"own origin", "/api/runs/r-site/trace", map[string]string{"Origin": "http://" + ts.Host}, 200, ""},
		{"own origin behind a proxy that ends TLS", "/api/runs/r-site/trace", map[string]string{"Origin": "https://" + ts.Host, "X-Forwarded-Proto": "https"}, 200, ""},
		{"https origin the proxy did not vouch for", "/api/runs/r-site/trace", map[string]string{"Origin": "https://" + ts.Host}, 403, "cross-origin request not allowed"},
		{"curl", "/api/runs/r-site/trace", nil, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, request{path: tt.path, header: tt.header})
			if res.status != tt.status || !strings.Contains(string(res.body), tt.want) {
				t.Errorf("status %d, want %d with %q: %.300s", res.status, tt.status, tt.want, res.body)
			}
		})
	}
}

// TestToken: a server reachable from other machines wants its token on every request but the
// static assets, by header or query; no cookie ever carries it, or passes (browsers send a host's
// cookies to every port of it: another server there would receive the cookie and could replay it).
func TestToken(t *testing.T) {
	ts := mustOpenServer(t, server.Config{Addr: "0.0.0.0:7070"})
	token := ts.Token()
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(token) {
		t.Fatalf("generated token %q, want 32 hex digits", token)
	}
	if want := "http://127.0.0.1:7070/?token=" + token; ts.URL() != want {
		t.Errorf("URL() = %q, want %q", ts.URL(), want)
	}
	ts.addRecording(t, "r-token")

	tests := []struct {
		name   string
		path   string
		header map[string]string
		status int
	}{
		{"api without token", "/api/flows", nil, 401},
		{"page without token", "/", nil, 401},
		{"wrong bearer", "/api/flows", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"wrong query", "/api/flows?token=nope", nil, 401},
		{"the token as a cookie", "/api/flows", map[string]string{"Cookie": "baton_token_7070=" + token}, 401},
		{"the token as a cookie, on a page", "/runs/r-token", map[string]string{"Cookie": "token=" + token}, 401},
		{"an asset's path out of the assets", "/static/../api/flows", nil, 404},
		{"bearer", "/api/flows", map[string]string{"Authorization": "Bearer " + token}, 200},
		{"bearer lower case", "/api/flows", map[string]string{"Authorization": "bearer " + token}, 200},
		{"query", "/api/flows?token=" + token, nil, 200},
		{"query on a page", "/runs/r-token?token=" + token, nil, 200},
		{"asset without token", "/static/app.js", nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, request{path: tt.path, header: tt.header})
			if res.status != tt.status {
				t.Fatalf("status %d, want %d: %.300s", res.status, tt.status, res.body)
			}
			if tt.status == 401 {
				if !strings.Contains(string(res.body), "a token is required") || res.header.Get("WWW-Authenticate") == "" {
					t.Errorf("401 without explanation: %v %s", res.header, res.body)
				}
				if strings.Contains(string(res.body), token) {
					t.Errorf("the 401 page reveals the token")
				}
			}
		})
	}

	t.Run("no answer sets a cookie", func(t *testing.T) {
		for _, path := range []string{"/?token=" + token, "/runs/r-token?token=" + token, "/api/flows?token=" + token, "/static/app.css"} {
			if res := ts.do(t, request{path: path}); res.status != 200 || res.header.Get("Set-Cookie") != "" {
				t.Errorf("%s: %d, Set-Cookie %q", path, res.status, res.header.Get("Set-Cookie"))
			}
		}
	})
	t.Run("websocket", func(t *testing.T) {
		if _, res, err := ts.dial(t, "/api/runs/r-token/events", nil); err == nil || res.status != 401 {
			t.Errorf("without token: %v %d", err, res.status)
		}
		conn, res, err := ts.dial(t, "/api/runs/r-token/events?token="+token, nil)
		if err != nil {
			t.Fatalf("with ?token=: %v %d %s", err, res.status, res.body)
		}
		conn.Close()
		if _, res, err := ts.dial(t, "/runs/r-token/live", http.Header{"Cookie": {"baton_token_7070=" + token}}); err == nil || res.status != 401 {
			t.Errorf("with a cookie: %v %d", err, res.status)
		}
	})
}

func TestLoopbackTokenIsOptional(t *testing.T) {
	open := mustOpenServer(t, server.Config{})
	if open.Token() != "" {
		t.Errorf("a loopback server made up token %q", open.Token())
	}
	if res := open.do(t, request{path: "/api/flows"}); res.status != 200 {
		t.Errorf("loopback without token: %d", res.status)
	}
	locked := mustOpenServer(t, server.Config{Token: strongToken})
	if res := locked.do(t, request{path: "/api/flows"}); res.status != 401 {
		t.Errorf("loopback with a configured token, none sent: %d", res.status)
	}
	if res := locked.do(t, request{path: "/api/flows?token=" + strongToken}); res.status != 200 {
		t.Errorf("loopback with a configured token sent: %d", res.status)
	}
}

func TestSecurityHeaders(t *testing.T) {
	ts := mustOpenServer(t, server.Config{})
	want := map[string]string{
		"Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
	}
	for _, path := range []string{"/", "/api/flows", "/api/runs/r-none/trace", "/static/app.js", "/nope"} {
		res := ts.do(t, request{path: path})
		for k, v := range want {
			if got := res.header.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", path, k, got, v)
			}
		}
	}
	if res := ts.do(t, request{path: "/api/runs"}); res.header.Get("Cache-Control") != "no-store" {
		t.Errorf("API responses may be cached: Cache-Control %q", res.header.Get("Cache-Control"))
	}
}
