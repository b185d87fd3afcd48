package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"

	"github.com/baton-dev/baton/traces"
)

// Websocket timings and limits, as in gorilla's chat example. How long one message may take to
// write is Config.WriteTimeout.
const (
	pongWait   = 60 * time.Second  // for the next pong (or any message) from the peer
	pingPeriod = pongWait * 9 / 10 // must be less than pongWait
	readLimit  = 4096              // the largest message a client may send; the server reads none
	closeGrace = 1 * time.Second   // for the peer to answer our close frame
)

// CloseTooSlow is the websocket close code of a viewer dropped for falling too far behind or for
// taking longer than Config.WriteTimeout to accept a message; the reason reads "too slow; resume
// with after=N".
const CloseTooSlow = 4000

// errTooSlow reports a message the peer took longer than the write timeout to accept.
var errTooSlow = errors.New("the viewer took too long to accept a message")

// writeBuffer is how many bytes of a message a socket gathers before it writes them: a run page's
// message is tens of KB, which then goes out in one frame and one write. The buffers are pooled,
// held only while a message is written, so an idle viewer holds none.
const writeBuffer = 64 << 10

var upgrader = websocket.Upgrader{
	ReadBufferSize:   1024,
	WriteBufferSize:  writeBuffer,
	WriteBufferPool:  new(sync.Pool),
	HandshakeTimeout: 10 * time.Second,
	// checkOrigin already ran; this keeps the check if a route ever escapes the middleware.
	CheckOrigin: sameOrigin,
}

// socket is one websocket connection: a reader goroutine that discards what the client sends but
// keeps the connection's liveness (read limit, pong deadline), and the handler's own goroutine as
// the only writer.
type socket struct {
	conn       *websocket.Conn
	writeWait  time.Duration
	pongWait   time.Duration
	log        *slog.Logger
	ctx        context.Context // ends when the peer leaves: with the request or the reader
	cancel     context.CancelFunc
	away       <-chan struct{} // closed when the server closes its websockets on shutdown
	uncut      func() bool     // unhooks the connection from the shutdown's cut
	readerDone chan struct{}
	done       func()
}

// openSocket upgrades the request and starts the reader. The caller writes, then calls end. A
// request that is no websocket handshake is refused with a JSON error before anything is written.
func (s *Server) openSocket(c echo.Context) (*socket, error) {
	if !websocket.IsWebSocketUpgrade(c.Request()) {
		return nil, echo.NewHTTPError(http.StatusBadRequest,
			"this route is a websocket: connect with a websocket client (Connection: Upgrade, Upgrade: websocket)")
	}
	s.mu.Lock()
	if s.shutting {
		s.mu.Unlock()
		return nil, errShuttingDown
	}
	s.sockets.Add(1)
	s.mu.Unlock()

	up := upgrader
	var refused error
	up.Error = func(_ http.ResponseWriter, _ *http.Request, status int, reason error) {
		// Leave the answer to handleError, so that it is JSON like every other error.
		refused = echo.NewHTTPError(status, reason.Error())
	}
	conn, err := up.Upgrade(c.Response(), c.Request(), nil)
	if err != nil {
		s.sockets.Done()
		if refused != nil {
			return nil, refused
		}
		return nil, fmt.Errorf("websocket upgrade: %w", err) // hijacking failed; nothing to answer
	}
	ctx, cancel := context.WithCancel(c.Request().Context())
	sk := &socket{
		conn:      conn,
		writeWait: s.cfg.WriteTimeout,
		pongWait:  s.pongWait,
		log:       s.log,
		ctx:       ctx,
		cancel:    cancel,
		away:      s.goingAway.Done(),
		// A viewer still being written to when the shutdown's grace ends is cut.
		uncut:      context.AfterFunc(s.cutSockets, func() { _ = conn.NetConn().Close() }),
		readerDone: make(chan struct{}),
		done:       s.sockets.Done,
	}
	go sk.read()
	return sk, nil
}

// errShuttingDown refuses runs and websockets once the server began to shut down.
var errShuttingDown = traces.Errorf(traces.CodeUnavailable, "the server is shutting down")

// read is the reader goroutine: it ends, canceling ctx, when the peer closes, goes silent past
// pongWait (neither answering a ping nor taking a message: see send) or sends more than readLimit
// in one message.
func (sk *socket) read() {
	// readerDone closes before ctx is canceled, so a writer woken by ctx knows the peer left.
	defer sk.cancel()
	defer close(sk.readerDone)
	sk.conn.SetReadLimit(readLimit)
	_ = sk.alive()
	sk.conn.SetPongHandler(func(string) error { return sk.alive() })
	for {
		if _, _, err := sk.conn.ReadMessage(); err != nil {
			return
		}
	}
}

// alive gives the peer pongWait more to show it is there.
func (sk *socket) alive() error { return sk.conn.SetReadDeadline(time.Now().Add(sk.pongWait)) }

// send writes one text message. A peer that has not taken all of it within writeWait is too slow:
// it gets as long again to take the rest, so that the close frame telling it where to resume
// starts at a frame boundary, and send returns errTooSlow. Only a peer that takes nothing in all
// that time is cut mid-message (an abnormal close, 1006: there is no boundary to put a frame at).
// A message taken in time is a sign of life, as a pong is: a viewer catching up on a fast run
// keeps the writer too busy to ping, and a ping behind megabytes of queued messages is answered
// late.
func (sk *socket) send(data []byte) error {
	return sk.timed(func() error { return sk.conn.WriteMessage(websocket.TextMessage, data) })
}

// sendPieces is send for a message made of pieces, written in order: a run page's message is
// parts that every viewer shares, copied into the socket's write buffer rather than joined
// into a message of their own first.
func (sk *socket) sendPieces(pieces [][]byte) error {
	return sk.timed(func() error {
		w, err := sk.conn.NextWriter(websocket.TextMessage)
		if err != nil {
			return err
		}
		for _, p := range pieces {
			if _, err := w.Write(p); err != nil {
				return err
			}
		}
		return w.Close()
	})
}

// timed runs write, which writes one message, under the write deadline of send.
func (sk *socket) timed(write func() error) error {
	start := time.Now()
	if err := sk.conn.SetWriteDeadline(start.Add(2 * sk.writeWait)); err != nil {
		return err
	}
	err := write()
	if err == nil && time.Since(start) > sk.writeWait {
		err = errTooSlow
	}
	if err == nil {
		err = sk.alive()
	}
	if err != nil && sk.ctx.Err() == nil {
		// The peer is still there but did not keep up: worth a line, for whoever wonders why a
		// page reconnected.
		sk.log.Info("websocket viewer cut: it did not take a message within the write timeout",
			"remote", sk.conn.RemoteAddr().String(), "timeout", sk.writeWait, "error", err)
	}
	return err
}

// ping sends a ping; the peer's pong extends the read deadline.
func (sk *socket) ping() error {
	return sk.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(sk.writeWait))
}

// close sends a close frame and gives the peer closeGrace to answer, so that the frame is read
// before the connection goes.
func (sk *socket) close(code int, reason string) {
	msg := websocket.FormatCloseMessage(code, reason)
	if err := sk.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(sk.writeWait)); err != nil {
		return
	}
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-sk.readerDone:
	case <-t.C:
	}
}

// closeTooSlow closes the socket of a viewer that fell behind, saying where to resume.
func (sk *socket) closeTooSlow(resume int64) {
	sk.close(CloseTooSlow, fmt.Sprintf("too slow; resume with after=%d", resume))
}

// goAway answers the server going away (away closed) for a socket that follows rec. When rec has
// ended, the server stopped it before closing its sockets: the writer goes on to deliver the rest,
// run.finished included, so goAway returns false and the writer must stop waiting on away. A run
// still going on (one recorded by someone else) gets a going-away close with where to resume.
func (sk *socket) goAway(rec *traces.Recording, resume int64) (stop bool) {
	select {
	case <-rec.Done():
		return false
	default:
		sk.close(websocket.CloseGoingAway, fmt.Sprintf("server shutting down; resume with after=%d", resume))
		return true
	}
}

// end closes the connection and waits for the reader: no goroutine outlives the handler.
func (sk *socket) end() {
	sk.cancel()
	sk.uncut()
	_ = sk.conn.Close()
	<-sk.readerDone
	sk.done()
}
