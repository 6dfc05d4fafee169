package server

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// Auth checks the bearer token on every scoring surface: the RewardService
// methods over gRPC and the scoring endpoints over HTTP. Health, readiness,
// reflection and metrics stay open, so probes and scrapers need no secret.
// The zero Auth (no token) lets everything through.
type Auth struct {
	token []byte
}

// NewAuth returns an Auth requiring token; an empty token disables it.
func NewAuth(token string) *Auth {
	return &Auth{token: []byte(strings.TrimSpace(token))}
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

// Middleware refuses HTTP requests without the token.
func (a *Auth) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.check(r.Header.Get("Authorization")) {
			writeStatus(w, status.Convert(errUnauthenticated))
			return
		}
		next.ServeHTTP(w, r)
	})
}
