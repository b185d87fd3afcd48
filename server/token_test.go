package server_test

import (
	"context"
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
