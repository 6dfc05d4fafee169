package server

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"

	"google.golang.org/grpc"
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

// check compares "Bearer <token>" in constant time.
func (a *Auth) check(header string) bool {
	if !a.Enabled() {
		return true
	}
	got, ok := strings.CutPrefix(header, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), a.token) == 1
}

var errUnauthenticated = status.Error(codes.Unauthenticated, `missing or wrong bearer token: send "authorization: Bearer <token>"`)

func guarded(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/"+rewardv1.RewardService_ServiceDesc.ServiceName+"/")
}

func (a *Auth) authorized(ctx context.Context) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		if a.check(v) {
			return true
		}
	}
	return !a.Enabled()
}

// UnaryInterceptor refuses RewardService calls without the token.
func (a *Auth) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if guarded(info.FullMethod) && !a.authorized(ctx) {
			return nil, errUnauthenticated
		}
		return handler(ctx, req)
	}
}

// StreamInterceptor refuses RewardService streams without the token.
func (a *Auth) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if guarded(info.FullMethod) && !a.authorized(ss.Context()) {
			return errUnauthenticated
		}
		return handler(srv, ss)
	}
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
