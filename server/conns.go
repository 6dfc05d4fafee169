package server

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/stats"

	"github.com/rewardd/rewardd/server/config"
)

// listener bounds the connections a port holds open (limits.max_connections,
// well below the process's file descriptors). Beyond the bound a new
// connection makes room by closing one that is closing already (net/http
// has sent its last answer, and waits half a second for the client to
// close: see countedConn.CloseWrite), else the one that has waited longest
// for its next request, or, when none is waiting, is closed at once. The server
// tells it which connections wait: net/http through ConnState (see
// httpServer), grpc through a stats.Handler (see statsHandler), which
// counts each connection's calls in progress. A connection waits from its
// arrival until its first request.
type listener struct {
	net.Listener        // set by Server.Serve
	port         string // the metric label: grpc or http
	max          int
	m            *transportMetrics

	mu   sync.Mutex
	open int
	// idle holds the connections waiting for a request (or for their
	// first), with the time they started to.
	idle map[net.Conn]time.Time
	// byAddr finds a connection by its remote address, and calls counts a
	// gRPC connection's calls in progress.
	byAddr map[string]*countedConn
	calls  map[*countedConn]int
}

// newListener bounds a port to max open connections; port names it in
// metrics (grpc or http). Its net.Listener is set before it accepts.
func newListener(port string, max int, m *transportMetrics) *listener {
	return &listener{port: port, max: max, m: m, idle: make(map[net.Conn]time.Time),
		byAddr: make(map[string]*countedConn), calls: make(map[*countedConn]int)}
}

// Accept returns the next connection, closing an idle one to make room, or
// the new one itself, when the port is full.
func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		var victim net.Conn
		if l.open >= l.max {
			var since time.Time
			for ic, t := range l.idle {
				if victim == nil || t.Before(since) {
					victim, since = ic, t
				}
			}
			if victim == nil {
				l.mu.Unlock()
				c.Close()
				l.m.connsRefused.WithLabelValues(l.port).Inc()
				continue
			}
			delete(l.idle, victim)
		}
		l.open++
		l.m.connections.WithLabelValues(l.port).Set(float64(l.open))
		cc := &countedConn{Conn: c, l: l}
		l.byAddr[c.RemoteAddr().String()] = cc
		if l.port == "grpc" {
			// net/http reports StateNew itself; grpc reports only calls.
			l.idle[cc] = time.Now()
		}
		l.mu.Unlock()
		if victim != nil {
			victim.Close()
			l.m.connsRefused.WithLabelValues(l.port).Inc()
		}
		return cc, nil
	}
}

func (l *listener) closed(c *countedConn) {
	l.mu.Lock()
	l.open--
	l.m.connections.WithLabelValues(l.port).Set(float64(l.open))
	delete(l.idle, c)
	delete(l.calls, c)
	if l.byAddr[c.RemoteAddr().String()] == c {
		delete(l.byAddr, c.RemoteAddr().String())
	}
	l.mu.Unlock()
}

// closing records that c serves nothing more: it waits with the earliest
// time, to be closed before any other to make room.
func (l *listener) closing(c *countedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byAddr[c.RemoteAddr().String()] == c { // not closed meanwhile
		l.idle[c] = time.Time{}
	}
}

// call records that a gRPC call began (+1) or ended (-1) on the connection
// from addr.
func (l *listener) call(addr string, delta int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.byAddr[addr]
	if !ok {
		return
	}
	n := l.calls[c] + delta
	switch {
	case n > 0:
		l.calls[c] = n
		delete(l.idle, c)
	default:
		delete(l.calls, c)
		l.idle[c] = time.Now()
	}
}

// statsHandler is the grpc.StatsHandler that tells l which of its
// connections have calls in progress.
func (l *listener) statsHandler() stats.Handler { return connCalls{l} }

// connCalls counts calls per connection for a listener.
type connCalls struct{ l *listener }

type connAddrKey struct{}

func (h connCalls) TagConn(ctx context.Context, info *stats.ConnTagInfo) context.Context {
	return context.WithValue(ctx, connAddrKey{}, info.RemoteAddr.String())
}

func (connCalls) HandleConn(context.Context, stats.ConnStats) {}

func (connCalls) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (h connCalls) HandleRPC(ctx context.Context, s stats.RPCStats) {
	var delta int
	switch s.(type) {
	case *stats.Begin:
		delta = 1
	case *stats.End:
		delta = -1
	default:
		return
	}
	if addr, ok := ctx.Value(connAddrKey{}).(string); ok {
		h.l.call(addr, delta)
	}
}

// connState is http.Server.ConnState: it tracks which connections wait.
func (l *listener) connState(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s {
	case http.StateNew, http.StateIdle:
		l.idle[c] = time.Now()
	default:
		delete(l.idle, c)
	}
}

// countedConn gives its place back once closed.
type countedConn struct {
	net.Conn
	l    *listener
	once sync.Once
}

// CloseWrite shuts the connection's sending side, as net/http does after
// the last answer on a connection it closes (a 408 for a body too slow,
// say): it then waits half a second for the client to close first, so
// that the answer is not lost to a reset. Meanwhile the connection is the
// first to close should a new one need its place: a wave of clients
// answered together and reconnecting at once would otherwise find the
// port full of connections that serve nothing more.
func (c *countedConn) CloseWrite() error {
	c.l.closing(c)
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.closed(c) })
	return err
}

// httpServer returns the server for the HTTP port: h served with the
// limits' timeouts (headers, idle connections; a request's body and answer
// have theirs in the handlers), its connections tracked by l, over TLS
// with tlsConfig when not nil (the caller wraps l with tls.NewListener).
func (l *listener) httpServer(h http.Handler, lim config.Limits, tlsConfig *tls.Config, log *zap.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       lim.IdleTimeout,
		ConnState:         l.connState,
		ErrorLog:          zap.NewStdLog(log),
	}
}

// headerTimeout bounds the time to read a request's headers.
const headerTimeout = 10 * time.Second
