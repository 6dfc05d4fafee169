package main

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rewardd/rewardd/internal/cli"
)

// checkAddr refuses an --addr written as a URL, naming the host:port to
// give instead: gRPC reads "http://h:p" as a host name with two colons.
func checkAddr(addr string, tlsOn bool) error {
	scheme, rest, ok := strings.Cut(addr, "://")
	if !ok {
		return nil
	}
	switch strings.ToLower(scheme) {
	case "http", "grpc", "https", "grpcs":
	default:
		return nil // a gRPC target such as dns:///host:port
	}
	hostPort := strings.TrimSuffix(rest, "/")
	tlsToo := ""
	if s := strings.ToLower(scheme); (s == "https" || s == "grpcs") && !tlsOn {
		tlsToo = " and, for TLS, --tls-ca with the CA that signed the server's certificate"
	}
	return cli.Usagef("--addr %q is a URL; give host:port (--addr %s)%s", addr, hostPort, tlsToo)
}

// connectionHints adds the likely mistake to a call that fails with
// UNAVAILABLE on a host:port target: a plaintext client at a TLS port
// (without --tls-ca), or a TLS client at a plaintext one.
func connectionHints(addr string, tlsOn bool) grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if status.Code(err) != codes.Unavailable {
			return err
		}
		if hint := tlsHint(ctx, addr, tlsOn); hint != "" {
			return status.Errorf(codes.Unavailable, "%s (%s)", status.Convert(err).Message(), hint)
		}
		return err
	})
}

// tlsHint probes addr with a TLS handshake and says what is wrong when the
// server's transport is not the client's; "" when they agree or addr cannot
// be reached. The probe sends no data: it verifies no certificate because it
// only asks whether the port speaks TLS at all.
func tlsHint(ctx context.Context, addr string, tlsOn bool) string {
	if _, _, err := net.SplitHostPort(addr); err != nil || strings.Contains(addr, "/") {
		return "" // a gRPC target such as dns:///host:port
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}} //nolint:gosec // a probe, see above
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err == nil {
		conn.Close()
		if !tlsOn {
			return "the server at " + addr + " speaks TLS: add --tls-ca with the CA that signed its certificate"
		}
		return ""
	}
	var notTLS tls.RecordHeaderError
	if tlsOn && errors.As(err, &notTLS) {
		return "the server at " + addr + " does not speak TLS: drop --tls-ca"
	}
	return ""
}
