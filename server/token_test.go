package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-dev/baton/server"
	"github.com/baton-dev/baton/traces"
)

// strongToken passes the strength check: 32 hex digits, as "openssl rand -hex 16" prints.
const strongToken = "5f0c9e1a7b3d42e8a6c1f09b7e2d4a53"

// TestWeakTokensRefused: a token a person chose must be as hard to guess as a generated one, and
// the refusal says how to make one without repeating the token.
func TestWeakTokensRefused(t *testing.T) {
	tests := []struct {
		name, token, want string
	}{
		{"one character", "a", "too short to be safe: 1 characters, want at least 32"},
		{"a word", "s3cret", "too short"},
		{"31 characters", strongToken[:31], "too short"},
		{"a space", " ", "only letters, digits and - . _ ~ + / = (no spaces)"},
		{"spaces inside", strongToken[:16] + " " + strongToken[16:], "no spaces"},
		{"a tab at the end", strongToken + "\t", "no spaces"},
		{"one repeated character", strings.Repeat("a", 40), "repeats too few characters (1 different, want at least 8)"},
		{"two characters over and over", strings.Repeat("ab", 20), "(2 different"},
		{"not ASCII", strongToken + "é", "only letters, digits"},
		{"a quote", strongToken + `"`, "only letters, digits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := server.New(server.Config{Token: tt.token})
			if traces.ErrorCode(err) != traces.CodeInvalid || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want an invalid error with %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), "openssl rand -hex 16") {
				t.Errorf("the refusal does not say how to make a good token: %v", err)
			}
			if len(tt.token) >= 6 && strings.Contains(err.Error(), tt.token) {
				t.Errorf("the refusal repeats the token: %v", err)
			}
		})
	}
	for _, good := range []string{strongToken, "Yq3J9x_2vLk-8RtPz0Wm4Nd.7Hc~Fb1s", "dGhpcyBpcyBhIGxvbmcgcmFuZG9tIHRva2Vu+/=="} {
		srv, err := server.New(server.Config{Token: good})
		if err != nil {
			t.Errorf("New with %q: %v", good, err)
			continue
		}
		srv.Shutdown(context.Background())
	}
}

// TestCookieNamePerPort: the token cookie is named after the server's port, so that two servers
// on one host (which browsers send each other's cookies) neither read nor overwrite each other's.
func TestCookieNamePerPort(t *testing.T) {
	a := mustOpenServer(t, server.Config{Token: strongToken})
	b := mustOpenServer(t, server.Config{Token: strongToken})
	cookieOf := func(ts *testServer) *http.Cookie {
		t.Helper()
		res := ts.do(t, request{path: "/?token=" + strongToken})
		cs := (&http.Response{Header: res.header}).Cookies()
		if res.status != http.StatusOK || len(cs) != 1 {
			t.Fatalf("open the index with the token: %d, cookies %v", res.status, cs)
		}
		return cs[0]
	}
	ca, cb := cookieOf(a), cookieOf(b)
	portOf := func(ts *testServer) string { return ts.Host[strings.LastIndex(ts.Host, ":")+1:] }
	if ca.Name != "baton_token_"+portOf(a) || cb.Name != "baton_token_"+portOf(b) || ca.Name == cb.Name {
		t.Fatalf("cookie names %q and %q, want baton_token_<port> for ports %s and %s", ca.Name, cb.Name, portOf(a), portOf(b))
	}
	if res := a.do(t, request{path: "/api/flows", header: map[string]string{"Cookie": ca.String()}}); res.status != http.StatusOK {
		t.Errorf("a's cookie on a: %d", res.status)
	}
	if res := b.do(t, request{path: "/api/flows", header: map[string]string{"Cookie": ca.String()}}); res.status != http.StatusUnauthorized {
		t.Errorf("a's cookie on b: %d, want 401", res.status)
	}
}

// TestCookieIsNotTheToken: browsers send a host's cookies to every port of it, so the cookie a
// page receives holds an HMAC of the token under the server's own random key, never the token:
// a server on another port that receives it learns nothing of the token, and the token itself
// in the cookie does not pass (the cookie is this server's pass, not a credential to copy).
func TestCookieIsNotTheToken(t *testing.T) {
	a := mustOpenServer(t, server.Config{Token: strongToken})
	res := a.do(t, request{path: "/?token=" + strongToken})
	cs := (&http.Response{Header: res.header}).Cookies()
	if res.status != http.StatusOK || len(cs) != 1 {
		t.Fatalf("open the index with the token: %d, cookies %v", res.status, cs)
	}
	c := cs[0]
	if strings.Contains(c.Value, strongToken) || len(c.Value) != 64 {
		t.Fatalf("cookie value %q: want an HMAC (64 hex digits), never the token", c.Value)
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Errorf("cookie %v: want HttpOnly, SameSite=Strict, Path=/", c)
	}
	if res := a.do(t, request{path: "/api/flows", header: map[string]string{"Cookie": c.String()}}); res.status != http.StatusOK {
		t.Errorf("the cookie as set: %d, want 200", res.status)
	}
	raw := &http.Cookie{Name: c.Name, Value: strongToken}
	if res := a.do(t, request{path: "/api/flows", header: map[string]string{"Cookie": raw.String()}}); res.status != http.StatusUnauthorized {
		t.Errorf("the token itself as the cookie: %d, want 401", res.status)
	}
	// Another server with the same token on the same port name would compute another value: its
	// key is its own. (Ports differ here; the name test covers the name.)
	b := mustOpenServer(t, server.Config{Token: strongToken})
	other := &http.Cookie{Name: "baton_token_" + b.Host[strings.LastIndex(b.Host, ":")+1:], Value: c.Value}
	if res := b.do(t, request{path: "/api/flows", header: map[string]string{"Cookie": other.String()}}); res.status != http.StatusUnauthorized {
		t.Errorf("a's cookie value under b's cookie name: %d, want 401", res.status)
	}
}
