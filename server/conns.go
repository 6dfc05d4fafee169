package server

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/rewardd/rewardd/server/config"
)

// Listener bounds the connections a port holds open (limits.max_connections,
// well below the process's file descriptors). Beyond the bound a new
// connection makes room by closing the one that has waited longest for its
// next request (HTTP connections, whose state the server reports to it; see
// HTTPServer), or, when none is waiting, is closed at once. Idle gRPC
// connections are closed by grpc's keepalive (limits.idle_timeout).
type Listener struct {
	net.Listener
	port string // the metric label: grpc or http
	max  int
	m    *Metrics

	mu   sync.Mutex
	open int
	// idle holds the connections waiting for a request (or for their
	// first), with the time they started to.
	idle map[net.Conn]time.Time
}

// NewListener bounds l to max open connections; port names it in metrics
// (grpc or http).
func NewListener(l net.Listener, port string, max int, m *Metrics) *Listener {
	return &Listener{Listener: l, port: port, max: max, m: m, idle: make(map[net.Conn]time.Time)}
}

// Accept returns the next connection, closing an idle one to make room, or
// the new one itself, when the port is full.
func (l *Listener) Accept() (net.Conn, error) {
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
		l.mu.Unlock()
		if victim != nil {
			victim.Close()
			l.m.connsRefused.WithLabelValues(l.port).Inc()
		}
		return &countedConn{Conn: c, l: l}, nil
	}
}

func (l *Listener) closed() {
	l.mu.Lock()
	l.open--
	l.m.connections.WithLabelValues(l.port).Set(float64(l.open))
	l.mu.Unlock()
}

// connState is http.Server.ConnState: it tracks which connections wait.
func (l *Listener) connState(c net.Conn, s http.ConnState) {
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
	l    *Listener
	once sync.Once
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.l.closed)
	return err
}

// HTTPServer returns the server for the HTTP port: h served with the
// limits' timeouts (headers, idle connections; a request's body and answer
// have theirs in the handlers), its connections tracked by l, over TLS
// with tlsConfig when not nil (the caller wraps l with tls.NewListener).
func (l *Listener) HTTPServer(h http.Handler, lim config.Limits, tlsConfig *tls.Config, log *zap.Logger) *http.Server {
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
