// Package servertest runs a server.New server for a test, as `rewardd
// serve` runs it: gRPC and HTTP on loopback TCP, each port bounded by its
// connection limit, stopped when the test ends.
package servertest

import (
	"context"
	"net"
	"testing"

	"github.com/sourcegraph/conc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rewardd/rewardd/server"
)

// Server is a server serving on loopback.
type Server struct {
	*server.Server
	GRPCAddr string // host:port
	HTTPURL  string // http://host:port
	HTTPAddr string // host:port
}

// Start wires opts with server.New and serves both ports until the test
// ends; then it stops the server without a grace period and waits for it.
func Start(t testing.TB, opts server.Options) *Server {
	t.Helper()
	srv, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	gl, hl := listen(t), listen(t)
	var serving conc.WaitGroup
	serving.Go(func() {
		if err := srv.Serve(gl, hl); err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		srv.Shutdown(ctx)
		serving.Wait()
	})
	return &Server{Server: srv, GRPCAddr: gl.Addr().String(), HTTPAddr: hl.Addr().String(), HTTPURL: "http://" + hl.Addr().String()}
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Dial returns a client connection to the gRPC port (plaintext, then
// opts), closed when the test ends.
func (s *Server) Dial(t testing.TB, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(s.GRPCAddr, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
