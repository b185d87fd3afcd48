package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dev/baton/server"
)

// servedServer is a server running Serve on a real listener at 127.0.0.1, as the command runs it:
// with its connection cap, timeouts and shutdown.
type servedServer struct {
	*testServer
	stop func() error // ends Serve's context and returns what Serve returned
}

// mustServe runs Serve with cfg on 127.0.0.1:0 (Flows default to testFlows, the runner to
// quickRunner). Cleanup stops it and fails the test unless Serve returned nil.
func mustServe(tb testing.TB, cfg server.Config) *servedServer {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	cfg = withTestDefaults(tb, cfg)
	srv, err := server.New(cfg)
	if err != nil {
		ln.Close()
		tb.Fatalf("server.New: %v", err)
	}
	server.SetRunner(srv, quickRunner)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	var once sync.Once
	var serveErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case serveErr = <-served:
			case <-time.After(30 * time.Second):
				serveErr = errors.New("Serve did not return within 30s of its context's end")
			}
		})
		return serveErr
	}
	tb.Cleanup(func() {
		if err := stop(); err != nil {
			tb.Errorf("Serve: %v", err)
		}
	})
	addr := ln.Addr().String()
	return &servedServer{
		testServer: &testServer{Server: srv, base: "http://" + addr, Host: addr, Broker: cfg.Broker},
		stop:       stop,
	}
}

// rawConn opens a TCP connection to ts, for clients that speak HTTP badly on purpose.
func (ts *testServer) rawConn(tb testing.TB) net.Conn {
	tb.Helper()
	c, err := net.DialTimeout("tcp", ts.Host, 5*time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// readRaw reads one response from c within 5s, and whether c was then closed.
func readRaw(tb testing.TB, c net.Conn) (response, bool) {
	tb.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		tb.Fatalf("no response: %v", err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		tb.Fatalf("response body: %v", err)
	}
	_, err = br.ReadByte()
	if !errors.Is(err, io.EOF) {
		tb.Logf("after the response: %v", err)
	}
	// ReadResponse moves "Connection: close" into res.Close.
	if res.Close {
		res.Header.Set("Connection", "close")
	}
	return response{status: res.StatusCode, header: res.Header, body: body}, errors.Is(err, io.EOF)
}

// quickClient gives up on a request after 10s, so that a server that stopped answering fails the
// test instead of hanging it.
var quickClient = &http.Client{Timeout: 10 * time.Second}

// TestSlowBodyIsCut: clients that send their headers and then only part of the body are answered
// 408 and closed once the body deadline passes, even when they hold every connection the server
// allows, and the server goes on answering.
func TestSlowBodyIsCut(t *testing.T) {
	t.Parallel()
	const slots = 3
	ts := mustServe(t, server.Config{BodyTimeout: 300 * time.Millisecond, MaxConns: slots})
	var slow []net.Conn
	for range slots {
		c := ts.rawConn(t)
		fmt.Fprintf(c, "POST /api/runs HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"flow\":", ts.Host)
		slow = append(slow, c)
	}
	// This request waits for a free connection slot, which the deadline makes.
	res, err := quickClient.Get(ts.base + "/api/flows")
	if err != nil {
		t.Fatalf("a real request while slow clients hold every slot: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("a real request while slow clients hold every slot: status %d", res.StatusCode)
	}
	for i, c := range slow {
		res, closed := readRaw(t, c)
		if res.status != http.StatusRequestTimeout || !strings.Contains(res.apiError(t), "did not arrive in time") || !closed {
			t.Errorf("slow client %d: %d %s, closed %v; want 408 and the connection closed", i, res.status, res.body, closed)
		}
	}
}

// TestRefusalsCloseTheConnection: a request refused by the token, Host or Origin check is
// answered at once and its connection closed soon after, without waiting for a body that never
// comes.
func TestRefusalsCloseTheConnection(t *testing.T) {
	t.Parallel()
	ts := mustServe(t, server.Config{Token: strongToken})
	tests := []struct {
		name, host, header string
		status             int
	}{
		{"no token", ts.Host, "", http.StatusUnauthorized},
		{"foreign host", "evil.example", "Authorization: Bearer " + strongToken + "\r\n", http.StatusForbidden},
		{"foreign origin", ts.Host, "Authorization: Bearer " + strongToken + "\r\nOrigin: http://evil.example\r\n", http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := ts.rawConn(t)
			// The body is announced and never sent.
			fmt.Fprintf(c, "POST /api/runs HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", tt.host, tt.header)
			res, closed := readRaw(t, c)
			if res.status != tt.status || res.header.Get("Connection") != "close" || !closed {
				t.Errorf("got %d (Connection: %q), closed %v; want %d and the connection closed", res.status, res.header.Get("Connection"), closed, tt.status)
			}
			if res.apiError(t) == "" {
				t.Errorf("refusal without a reason: %s", res.body)
			}
		})
	}
}

// TestConnectionCap: past MaxConns, a new connection is not served until one closes; a client
// that never finishes its headers is closed after ReadHeaderTimeout.
func TestConnectionCap(t *testing.T) {
	t.Parallel()
	ts := mustServe(t, server.Config{MaxConns: 2, ReadHeaderTimeout: 2 * time.Second})
	for range 2 {
		fmt.Fprint(ts.rawConn(t), "GET /api/flows HTTP/1.1\r\n") // and nothing more
	}
	c := ts.rawConn(t)
	fmt.Fprintf(c, "GET /api/flows HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", ts.Host)
	_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a third connection was served while two held the cap of 2: read %d bytes, %v", n, err)
	}
	// The header timeout frees the slots.
	if res, _ := readRaw(t, c); res.status != http.StatusOK {
		t.Errorf("once the slow clients were cut: %d %s", res.status, res.body)
	}
}

// TestMeasureRefusalFlood: 400 clients without the token announce a body and never send it,
// four times more than the server's connection slots. Each is answered 401 and closed within a
// few lingers, and a real request gets through meanwhile. Run with -v for the numbers.
func TestMeasureRefusalFlood(t *testing.T) {
	t.Parallel()
	const clients, slots = 400, 100
	ts := mustServe(t, server.Config{Token: strongToken, MaxConns: slots})
	type outcome struct {
		answered, closed time.Duration // 0 when it did not happen
		status           int
	}
	outcomes := make(chan outcome, clients)
	start := time.Now()
	for range clients {
		c := ts.rawConn(t)
		fmt.Fprintf(c, "POST /api/runs HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", ts.Host)
		go func() {
			var o outcome
			defer func() { outcomes <- o }()
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			br := bufio.NewReader(c)
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			o.answered, o.status = time.Since(start), res.StatusCode
			if _, err := br.ReadByte(); errors.Is(err, io.EOF) {
				o.closed = time.Since(start)
			}
		}()
	}
	req, _ := http.NewRequest(http.MethodGet, ts.base+"/api/flows", nil)
	req.Header.Set("Authorization", "Bearer "+strongToken)
	res, err := quickClient.Do(req)
	if err != nil {
		t.Fatalf("a real request during the flood: %v", err)
	}
	res.Body.Close()
	realTook := time.Since(start)

	var answered, closed []time.Duration
	for range clients {
		o := <-outcomes
		if o.status != http.StatusUnauthorized || o.closed == 0 {
			t.Errorf("a flooding client got status %d, closed %v; want 401 and the connection closed", o.status, o.closed != 0)
			continue
		}
		answered, closed = append(answered, o.answered), append(closed, o.closed)
	}
	slices.Sort(answered)
	slices.Sort(closed)
	if len(closed) > 0 {
		t.Logf("%d clients on %d slots: answered 401 p50 %s, last %s; closed p50 %s, last %s; a real request meanwhile: %d in %s",
			clients, slots, answered[len(answered)/2].Round(time.Millisecond), answered[len(answered)-1].Round(time.Millisecond),
			closed[len(closed)/2].Round(time.Millisecond), closed[len(closed)-1].Round(time.Millisecond), res.StatusCode, realTook.Round(time.Millisecond))
	}
}
