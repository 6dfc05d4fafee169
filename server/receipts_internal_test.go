package server

import (
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sourcegraph/conc"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/server/config"
)

// wireCodec sends messages already encoded, so that a test can send bytes
// no proto client would.
type wireCodec struct{}

func (wireCodec) Marshal(v any) ([]byte, error) { return v.([]byte), nil }
func (wireCodec) Unmarshal(data []byte, v any) error {
	return proto.Unmarshal(data, v.(proto.Message))
}
func (wireCodec) Name() string { return "proto" }

// TestReceiptsAreTaken: the bytes the codec receives for every ScoreRequest
// are taken by its handler, whether they decode or not, over Score and
// ScoreStream, so the codec keeps nothing of a call once it is answered.
func TestReceiptsAreTaken(t *testing.T) {
	g, addr := serveInternal(t)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDefaultCallOptions(grpc.ForceCodec(wireCodec{})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	good, _ := proto.Marshal(&rewardv1.ScoreRequest{BatchId: "b", Rollouts: []*rewardv1.Rollout{{Group: "g", Completion: "AAAA"}}})
	bad := bytes.Replace(good, []byte("AAAA"), []byte("A\xffAA"), 1)
	ctx := context.Background()
	var resp rewardv1.ScoreResponse
	for _, c := range []struct {
		wire []byte
		want codes.Code
	}{{good, codes.OK}, {bad, codes.InvalidArgument}, {good[:len(good)-1], codes.InvalidArgument}} {
		err := conn.Invoke(ctx, rewardv1.RewardService_Score_FullMethodName, c.wire, &resp)
		if status.Code(err) != c.want {
			t.Errorf("Score: %v, want %v", err, c.want)
		}
	}
	stream, err := conn.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, rewardv1.RewardService_ScoreStream_FullMethodName)
	if err != nil {
		t.Fatal(err)
	}
	// The second batch sends the first's group again: answered with an
	// error, and the stream reads on, until the message that does not
	// decode ends it.
	again, _ := proto.Marshal(&rewardv1.ScoreRequest{BatchId: "c", Rollouts: []*rewardv1.Rollout{{Group: "g", Completion: "AAAA"}}})
	for _, wire := range [][]byte{good, again} {
		if err := stream.SendMsg(wire); err != nil {
			t.Fatal(err)
		}
		if err := stream.RecvMsg(&resp); err != nil {
			t.Fatal(err)
		}
	}
	if resp.GetErrorCode() != int32(codes.InvalidArgument) {
		t.Errorf("a group sent again: %v, want an INVALID_ARGUMENT answer", &resp)
	}
	if err := stream.SendMsg(bad); err != nil {
		t.Fatal(err)
	}
	if err := stream.RecvMsg(&resp); status.Code(err) != codes.InvalidArgument {
		t.Errorf("stream after bytes that do not decode: %v, want INVALID_ARGUMENT", err)
	}
	if n := g.codec.receipts.pending(); n != 0 {
		t.Errorf("%d receipts not taken", n)
	}
	if n := g.codec.answers.pending(); n != 0 {
		t.Errorf("%d answers' call memory not released", n)
	}
}

// serveInternal serves RewardService with an accuracy function
// (exact_match on the field answer) on a loopback port until the test
// ends, and returns the service and the port's address. setup, if any,
// runs on the service before it serves.
func serveInternal(t *testing.T, setup ...func(*grpcService)) (*grpcService, string) {
	t.Helper()
	cfg, err := config.Load("t.yml", []byte("functions:\n  - {name: accuracy, kind: exact_match, reference_field: answer}\n"), builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Config: cfg, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	g := newGRPCService(srv.Service(), newTransportMetrics(prometheus.NewRegistry()), zap.NewNop(), nil)
	for _, f := range setup {
		f(g)
	}
	gs, _ := newGRPCServer(g, time.Minute)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var serving conc.WaitGroup
	serving.Go(func() { gs.Serve(l) })
	t.Cleanup(func() {
		gs.Stop()
		serving.Wait()
	})
	return g, l.Addr().String()
}
