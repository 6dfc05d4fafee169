package server

import (
	"context"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// Auth checks the bearer token on every scoring surface: the RewardService
// methods over gRPC and the scoring endpoints over HTTP. Health, readiness,
// reflection and metrics stay open, so probes and scrapers need no secret.
// The zero Auth (no token) lets everything through.
//
// A request without the right token is answered at once the first time; the
// next ones from the same address wait before they are answered, longer
// each time (failDelay per earlier failure, at most maxFailDelay), which
// holds that client's connection: a client hammering the server without the
// token costs it little, and a valid client, which never waits, keeps its
// share of the server. An address forgets its failures after failMemory
// without one.
type Auth struct {
	token []byte

	mu       sync.Mutex
	failures map[string]failures // by client IP
}

type failures struct {
	n    int
	last time.Time
}

const (
	failDelay    = 10 * time.Millisecond
	maxFailDelay = time.Second
	failMemory   = time.Minute
	// maxFailingAddrs bounds the addresses remembered; beyond it all are
	// forgotten.
	maxFailingAddrs = 4096
)

// NewAuth returns an Auth requiring token; an empty token disables it.
func NewAuth(token string) *Auth {
	return &Auth{token: []byte(strings.TrimSpace(token)), failures: make(map[string]failures)}
}

// failed records a request without the token from addr (host:port or a
// bare host) and returns how long its answer waits.
func (a *Auth) failed(addr string) time.Duration {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	f := a.failures[host]
	if now.Sub(f.last) > failMemory {
		f.n = 0
	}
	delay := min(time.Duration(f.n)*failDelay, maxFailDelay)
	f.n++
	f.last = now
	if len(a.failures) >= maxFailingAddrs {
		clear(a.failures)
	}
	a.failures[host] = f
	return delay
}

// refuse waits as failed says, or until ctx ends.
func (a *Auth) refuse(ctx context.Context, addr string) {
	if d := a.failed(addr); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}

// Enabled reports whether a token is required.
func (a *Auth) Enabled() bool { return a != nil && len(a.token) > 0 }

// check compares "Bearer <token>" in constant time. The scheme's case does
// not matter (RFC 7235: "bearer" and "BEARER" are "Bearer").
func (a *Auth) check(header string) bool {
	if !a.Enabled() {
		return true
	}
	scheme, got, ok := strings.Cut(header, " ")
	return ok && strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(strings.TrimLeft(got, " ")), a.token) == 1
}

var errUnauthenticated = status.Error(codes.Unauthenticated, `missing or wrong bearer token: send "authorization: Bearer <token>"`)

func guarded(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/"+rewardv1.RewardService_ServiceDesc.ServiceName+"/")
}

// authorizedMD says whether a call's headers carry the token (or none is
// required).
func (a *Auth) authorizedMD(md metadata.MD) bool {
	if !a.Enabled() {
		return true
	}
	for _, v := range md.Get("authorization") {
		if a.check(v) {
			return true
		}
	}
	return false
}

// middleware refuses HTTP requests without the token.
func (a *Auth) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.check(r.Header.Get("Authorization")) {
			a.refuse(r.Context(), r.RemoteAddr)
			writeStatus(w, status.Convert(errUnauthenticated))
			return
		}
		next.ServeHTTP(w, r)
	})
}
