package server

import (
	"crypto/rand"
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

// checkToken requires the server's token, when it has one, as "Authorization: Bearer" or
// ?token=, on every request but for the static assets (Baton's own client code, the same in
// every Baton: nothing to protect). No cookie carries it: browsers send a host's cookies to every
// port of it, so a server on another port the browser visits would receive the cookie and could
// replay it here. A page holds the token in its own markup instead (the baton-token meta, which
// no other origin can read) and its script adds it to each request and each link it follows
// (static/common.js): see docs/api.md, "Security".
func (s *Server) checkToken(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if s.token == "" || isAsset(r) {
			return next(c)
		}
		if q := r.URL.Query().Get("token"); q != "" && s.validToken(q) {
			return next(c)
		}
		if scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok &&
			strings.EqualFold(scheme, "Bearer") && s.validToken(strings.TrimSpace(tok)) {
			return next(c)
		}
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="baton"`)
		return refuse(c, echo.NewHTTPError(http.StatusUnauthorized,
			"a token is required: open the URL Baton printed at startup (it ends in ?token=...), or send \"Authorization: Bearer <token>\""))
	}
}

// isAsset reports whether r asks for one of the static assets.
func isAsset(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && strings.HasPrefix(r.URL.Path, "/static/")
}

func (s *Server) validToken(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}
