package attach_test

import (
	"bytes"
	"net"
	"regexp"
	"sync"
	"testing"
)

// faultProxy is a TCP proxy on loopback between an app and Baton, which a test faults as a
// network or a server does: it holds the answer of a post until the app gives up on it, stalls
// every connection, or sends new connections to another server.
type faultProxy struct {
	ln net.Listener
	wg sync.WaitGroup // the accept loop and each connection's pumps

	mu     sync.Mutex
	target string                // where new connections go
	conns  map[net.Conn]struct{} // every connection open, both sides
	stall  chan struct{}         // while not nil, nothing goes through; closed when the stall ends
	hold   []byte                // the answer of the next request that holds this is held
	gaveUp chan struct{}         // closed once the app gave up on the held answer
	// loseAfter, once a request holding it went through, makes every later request get lost
	// with its connection (losing is set then).
	loseAfter *regexp.Regexp
	losing    bool
	closed    bool
}

// startProxy proxies to target (host:port) until the test ends.
func startProxy(t *testing.T, target string) *faultProxy {
	t.Helper()
	p := &faultProxy{ln: listen(t), target: target, conns: make(map[net.Conn]struct{}), gaveUp: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// url is the proxy's, for the app.
func (p *faultProxy) url() string { return "http://" + p.ln.Addr().String() }

// holdNextAnswer holds the answer of the next request that holds text, after Baton took it,
// until the app gives up waiting and closes the connection: then the answer is lost with it, and
// the channel returned is closed.
func (p *faultProxy) holdNextAnswer(text string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold = []byte(text)
	return p.gaveUp
}

// loseRequestsAfter lets the next request that matches pattern through and loses every later one
// with its connection, before Baton sees it: as an app that exits before its last posts are out.
func (p *faultProxy) loseRequestsAfter(pattern string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loseAfter = regexp.MustCompile(pattern)
}

// stallAll stops everything from going through, on open and new connections, until resume.
func (p *faultProxy) stallAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stall == nil {
		p.stall = make(chan struct{})
	}
}

// resume ends a stall: the connections it held are closed, as a network that lost them would,
// and new ones go through again.
func (p *faultProxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stall != nil {
		close(p.stall)
		p.stall = nil
	}
}

// retarget sends new connections to target.
func (p *faultProxy) retarget(target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = target
}

func (p *faultProxy) close() {
	p.mu.Lock()
	p.closed = true
	if p.stall != nil {
		close(p.stall)
		p.stall = nil
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

func (p *faultProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// track registers c as open, or closes it when the proxy is closed; it reports which.
func (p *faultProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *faultProxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// serve proxies one connection of the app.
func (p *faultProxy) serve(app net.Conn) {
	defer p.wg.Done()
	if !p.track(app) {
		return
	}
	defer p.untrack(app)
	p.mu.Lock()
	stall, target := p.stall, p.target
	p.mu.Unlock()
	if stall != nil {
		<-stall // a connection made during a stall never gets through
		return
	}
	baton, err := net.Dial("tcp", target)
	if err != nil || !p.track(baton) {
		return
	}
	defer p.untrack(baton)
	c := &proxied{app: app, baton: baton, appGone: make(chan struct{}),
		hosts: [2][]byte{[]byte(p.ln.Addr().String()), []byte(target)}}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.pump(c, app, baton, true)
		close(c.appGone)
	}()
	p.pump(c, baton, app, false)
}

// proxied is one connection through the proxy.
type proxied struct {
	app, baton net.Conn
	appGone    chan struct{} // closed once the app closed its side
	held       bool          // its next answer is held (see holdNextAnswer); guarded by the proxy's mu
	// hosts are the proxy's address and Baton's: the Host of the app's requests is rewritten
	// from the first to the second, since Baton answers only requests meant for it.
	hosts [2][]byte
}

// pump copies src to dst, the app's requests to Baton when toBaton, until either side closes or
// a fault drops the connection; then it closes both.
func (p *faultProxy) pump(c *proxied, src, dst net.Conn, toBaton bool) {
	defer c.app.Close()
	defer c.baton.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			data := buf[:n]
			if toBaton {
				data = bytes.ReplaceAll(data, c.hosts[0], c.hosts[1])
			}
			if !p.pass(c, data, toBaton) {
				return
			}
			if _, err := dst.Write(data); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// pass decides the fate of data on its way: through (true), or dropped with its connection,
// at once when it is to be lost, after the stall, or once the app gave up on a held answer.
func (p *faultProxy) pass(c *proxied, data []byte, toBaton bool) bool {
	p.mu.Lock()
	stall := p.stall
	if toBaton && p.hold != nil && bytes.Contains(data, p.hold) {
		p.hold, c.held = nil, true
	}
	held := !toBaton && c.held
	lost := toBaton && p.losing
	if toBaton && p.loseAfter != nil && p.loseAfter.Match(data) {
		p.losing = true
	}
	p.mu.Unlock()
	switch {
	case lost:
		return false
	case stall != nil:
		<-stall
		return false
	case held:
		<-c.appGone
		close(p.gaveUp)
		return false
	}
	return true
}
