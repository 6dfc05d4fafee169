package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// dialOptions are the gRPC client options for talking to a rewardd: TLS
// verified against caFile when given, and the bearer token from tokenFile
// when given.
func dialOptions(tokenFile, caFile string) ([]grpc.DialOption, error) {
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	tlsOn := caFile != ""
	if tlsOn {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, &usageError{fmt.Sprintf("--tls-ca: %v", err)}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &usageError{fmt.Sprintf("--tls-ca: %s holds no PEM certificate", caFile)}
		}
		opts[0] = grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}))
	}
	if tokenFile != "" {
		token, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, &usageError{fmt.Sprintf("--auth-token-file: %v", err)}
		}
		opts = append(opts, grpc.WithPerRPCCredentials(bearer{token: strings.TrimSpace(string(token)), secure: tlsOn}))
	}
	return opts, nil
}

// bearer sends "authorization: Bearer <token>" with every call.
type bearer struct {
	token  string
	secure bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

// RequireTransportSecurity is false so the token also works on a loopback
// server without TLS; over a network, use --tls-ca.
func (b bearer) RequireTransportSecurity() bool { return b.secure }
