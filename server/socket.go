package server

import (
	"context"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
	"github.com/labstack/echo/v4"
)

// Websocket timings and limits, as in gorilla's chat example.
const (
	writeWait  = 10 * time.Second  // for one write to finish
	pongWait   = 60 * time.Second  // for the next pong (or any message) from the peer
	pingPeriod = pongWait * 9 / 10 // must be less than pongWait
	readLimit  = 4096              // the largest message a client may send; the server reads none
	closeGrace = 1 * time.Second   // for the peer to answer our close frame
)

// CloseTooSlow is the websocket close code of a viewer dropped for falling too far behind; the
// reason reads "too slow; resume with after=N".
const CloseTooSlow = 4000

var upgrader = websocket.Upgrader{
	ReadBufferSize:   1024,
	WriteBufferSize:  4096,
	HandshakeTimeout: 10 * time.Second,
	// checkOrigin already ran; this keeps the check if a route ever escapes the middleware.
	CheckOrigin: sameOrigin,
}

// socket is one websocket connection: a reader goroutine that discards what the client sends but
// keeps the connection's liveness (read limit, pong deadline), and the handler's own goroutine as
// the only writer.
type socket struct {
	conn       *websocket.Conn
	ctx        context.Context // ends with the request, the server, or the reader
	cancel     context.CancelFunc
	stop       func() bool // detaches ctx from the server's
	readerDone chan struct{}
	done       func()
}

// openSocket upgrades the request and starts the reader. The caller writes, then calls end. When
// the upgrade fails the response is already written and the error is only for the record.
func (s *Server) openSocket(c echo.Context) (*socket, error) {
	s.mu.Lock()
	if s.shutting {
		s.mu.Unlock()
		return nil, echo.NewHTTPError(http.StatusServiceUnavailable, "the server is shutting down")
	}
	s.sockets.Add(1)
	s.mu.Unlock()

	conn, err := upgrader.Upgrade(c.Response(), c.Request(), nil)
	if err != nil {
		s.sockets.Done()
		return nil, echo.NewHTTPError(http.StatusBadRequest, "websocket upgrade failed").SetInternal(err)
	}
	ctx, cancel := context.WithCancel(c.Request().Context())
	sk := &socket{
		conn:       conn,
		ctx:        ctx,
		cancel:     cancel,
		stop:       context.AfterFunc(s.ctx, cancel),
		readerDone: make(chan struct{}),
		done:       s.sockets.Done,
	}
	go sk.read()
	return sk, nil
}

// read is the reader goroutine: it ends, canceling ctx, when the peer closes, goes silent past
// pongWait or sends more than readLimit in one message.
func (sk *socket) read() {
	// readerDone closes before ctx is canceled, so a writer woken by ctx knows the peer left.
	defer sk.cancel()
	defer close(sk.readerDone)
	sk.conn.SetReadLimit(readLimit)
	_ = sk.conn.SetReadDeadline(time.Now().Add(pongWait))
	sk.conn.SetPongHandler(func(string) error { return sk.conn.SetReadDeadline(time.Now().Add(pongWait)) })
	for {
		if _, _, err := sk.conn.ReadMessage(); err != nil {
			return
		}
	}
}

// send writes one text message.
func (sk *socket) send(data []byte) error {
	if err := sk.conn.SetWriteDeadline(time.Now().Add(writeWait)); err != nil {
		return err
	}
	return sk.conn.WriteMessage(websocket.TextMessage, data)
}

// ping sends a ping; the peer's pong extends the read deadline.
func (sk *socket) ping() error {
	return sk.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait))
}

// close sends a close frame and gives the peer closeGrace to answer, so that the frame is read
// before the connection goes.
func (sk *socket) close(code int, reason string) {
	msg := websocket.FormatCloseMessage(code, reason)
	if err := sk.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(writeWait)); err != nil {
		return
	}
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-sk.readerDone:
	case <-t.C:
	}
}

// closeOnCancel sends the close frame that fits why ctx ended: going away when the server shuts
// down; nothing when the peer left.
func (sk *socket) closeOnCancel() {
	select {
	case <-sk.readerDone:
	default:
		sk.close(websocket.CloseGoingAway, "server shutting down")
	}
}

// end closes the connection and waits for the reader: no goroutine outlives the handler.
func (sk *socket) end() {
	sk.cancel()
	sk.stop()
	_ = sk.conn.Close()
	<-sk.readerDone
	sk.done()
}
