package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sourcegraph/conc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// poisoned makes the service's call memory overwrite the wire form of a
// request when it is released.
func poisoned(g *grpcService) { g.svc.memory.poison = true }

// TestPoisonShows: a string of a decoded request read after its call
// memory is released reads as poison, so that TestCallMemoryOutlivesNothing
// sees a string that outlives its call.
func TestPoisonShows(t *testing.T) {
	pool := &memoryPool{poison: true}
	wire, err := proto.Marshal(&rewardv1.ScoreRequest{BatchId: "batch-7", Rollouts: []*rewardv1.Rollout{{Group: "g", Completion: "#### 4"}}})
	if err != nil {
		t.Fatal(err)
	}
	cm := pool.get()
	var req rewardv1.ScoreRequest
	b, _ := cm.copyWire(mem.BufferSlice{mem.SliceBuffer(wire)}, nil) // no pacer: no error
	if err := decodeRequest(b, &req, cm, nil); err != nil {
		t.Fatal(err)
	}
	id := req.GetBatchId()
	if id != "batch-7" {
		t.Fatalf("batch_id %q before release, want batch-7", id)
	}
	cm.release()
	if id != strings.Repeat(string(rune(poisonByte)), len("batch-7")) {
		t.Errorf("batch_id %q after release, want it poisoned", id)
	}
}

// TestCallMemoryOutlivesNothing: with every call's memory poisoned when it
// is released, answers read right: over Score, many calls at once (so the
// pool's memory goes from call to call), each answer carries its own
// batch_id and scores; over ScoreStream, a group sent again is refused
// naming the batch that sent it first, which the stream keeps after that
// batch's memory is released; and every answer's memory is released.
func TestCallMemoryOutlivesNothing(t *testing.T) {
	g, addr := serveInternal(t, poisoned)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := rewardv1.NewRewardServiceClient(conn)
	ctx := context.Background()

	var calls conc.WaitGroup
	for c := range 4 {
		calls.Go(func() {
			for i := range 25 {
				id := fmt.Sprintf("batch-%d-%d", c, i)
				resp, err := client.Score(ctx, poisonBatch(id, id))
				if err != nil {
					t.Errorf("Score %s: %v", id, err)
					return
				}
				checkPoisonAnswer(t, resp, id)
			}
		})
	}
	calls.Wait()

	stream, err := client.ScoreStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct{ id, group string }{{"first", "g1"}, {"second", "g2"}, {"third", "g1"}} {
		if err := stream.Send(poisonBatch(b.id, b.group)); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if b.id != "third" {
			checkPoisonAnswer(t, resp, b.id)
			continue
		}
		want := `batch "third": group "g1" was already sent in batch "first"`
		if resp.GetErrorCode() != int32(codes.InvalidArgument) || !strings.Contains(resp.GetErrorMessage(), want) {
			t.Errorf("a group sent again: code %d, %q; want INVALID_ARGUMENT with %q", resp.GetErrorCode(), resp.GetErrorMessage(), want)
		}
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err == nil {
		t.Error("the stream sent an answer it was not asked for")
	}
	if n := g.codec.answers.pending(); n != 0 {
		t.Errorf("%d answers' call memory not released", n)
	}
}

// poisonBatch is a batch of two rollouts of one group, the first right
// and the second wrong, whose reference answer is a field.
func poisonBatch(id, group string) *rewardv1.ScoreRequest {
	fields := &structpb.Struct{Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue("4")}}
	return &rewardv1.ScoreRequest{BatchId: id, Rollouts: []*rewardv1.Rollout{
		{Id: id + "/0", Group: group, Completion: "4", Fields: fields},
		{Id: id + "/1", Group: group, Completion: "5", Fields: fields},
	}}
}

// checkPoisonAnswer checks the answer to poisonBatch(id, …).
func checkPoisonAnswer(t *testing.T, resp *rewardv1.ScoreResponse, id string) {
	t.Helper()
	if resp.GetBatchId() != id {
		t.Errorf("answer to %s has batch_id %q", id, resp.GetBatchId())
	}
	fns := resp.GetFunctions()
	ok := rewardv1.ScoreStatus_SCORE_STATUS_OK
	if len(fns) != 1 || fns[0].GetName() != "accuracy" || !slices.Equal(fns[0].GetValues(), []float64{1, 0}) || !slices.Equal(fns[0].GetStatus(), []rewardv1.ScoreStatus{ok, ok}) {
		t.Errorf("answer to %s: %v, want accuracy [1 0], both OK", id, fns)
	}
}
