package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/traces"
)

// A token must be as hard to guess as the 16 random bytes New generates (32 hex digits). A
// person's own token cannot be measured, so it must be at least as long, from a set that survives
// URLs, headers and cookies unescaped, and not a few characters over and over.
const (
	minTokenLen      = 32
	minTokenDistinct = 8
	tokenChars       = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/="
	tokenAdvice      = `make one with "openssl rand -hex 16", or leave the token out and Baton generates one where it needs one`
)

// tokenFor returns the token a server uses: the one given, once it is strong enough, else a
// generated one when the address needs one, else none. A weak token fails with CodeInvalid and
// a message that never repeats it.
func tokenFor(given string, needed bool) (string, error) {
	if given != "" {
		return given, checkTokenStrength(given)
	}
	if !needed {
		return "", nil
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// checkTokenStrength refuses a token someone could guess or that would not survive a URL.
func checkTokenStrength(t string) error {
	distinct := make(map[rune]bool)
	for _, r := range t {
		if !strings.ContainsRune(tokenChars, r) {
			return traces.Errorf(traces.CodeInvalid,
				"the token may hold only letters, digits and - . _ ~ + / = (no spaces); %s", tokenAdvice)
		}
		distinct[r] = true
	}
	switch {
	case len(t) < minTokenLen:
		return traces.Errorf(traces.CodeInvalid,
			"the token is too short to be safe: %d characters, want at least %d; %s", len(t), minTokenLen, tokenAdvice)
	case len(distinct) < minTokenDistinct:
		return traces.Errorf(traces.CodeInvalid,
			"the token repeats too few characters (%d different, want at least %d) to be safe; %s",
			len(distinct), minTokenDistinct, tokenAdvice)
	}
	return nil
}

// cookieName is the name of the cookie a page opened with a valid ?token= receives, so that the
// page's own requests (scripts, fetches, websockets) pass without the token. Browsers send a
// host's cookies to each of its ports: the port in the name keeps two servers on one machine
// from overwriting each other's.
func (s *Server) cookieName() string { return "baton_token_" + s.hosts.Load().port }

// cookieValue is what the cookie holds: not the token, which every port of the host would receive
// with the cookie, but an HMAC of it under this process's random key, bound to the port. Whoever
// reads the cookie (a server on another port the browser visits) learns nothing of the token,
// which apps and scripts keep using, and holds a pass for this process only: it is void when
// Baton restarts, and on any other Baton (see docs/api.md, "Security").
func (s *Server) cookieValue() string {
	mac := hmac.New(sha256.New, s.cookieKey)
	mac.Write([]byte("baton page cookie\x00" + s.hosts.Load().port + "\x00" + s.token))
	return hex.EncodeToString(mac.Sum(nil))
}

// checkToken requires the server's token, when it has one, as "Authorization: Bearer", ?token=
// or the cookie a page opened with ?token= receives.
func (s *Server) checkToken(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.token == "" {
			return next(c)
		}
		r := c.Request()
		if q := r.URL.Query().Get("token"); q != "" && s.validToken(q) {
			if isPage(r) {
				c.SetCookie(&http.Cookie{
					Name: s.cookieName(), Value: s.cookieValue(), Path: "/",
					HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
				})
			}
			return next(c)
		}
		if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok &&
			strings.EqualFold(scheme, "Bearer") && s.validToken(strings.TrimSpace(tok)) {
			return next(c)
		}
		if ck, err := r.Cookie(s.cookieName()); err == nil && hmac.Equal([]byte(ck.Value), []byte(s.cookieValue())) {
			return next(c)
		}
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="baton"`)
		return refuse(c, echo.NewHTTPError(http.StatusUnauthorized,
			"a token is required: open the URL Baton printed at startup (it ends in ?token=...), or send \"Authorization: Bearer <token>\""))
	}
}

func (s *Server) validToken(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}
