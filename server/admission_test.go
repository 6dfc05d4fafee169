package server_test

import (
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// newClient is a client on a connection of its own: the server orders the
// waits for memory by what each connection sent last.
func newClient(t *testing.T, addr string) rewardv1.RewardServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return rewardv1.NewRewardServiceClient(conn)
}

// answersByCode sends req from each client, calls times in a row, all
// clients at once, and counts the answers by code.
func answersByCode(clients []rewardv1.RewardServiceClient, req *rewardv1.ScoreRequest, calls int) map[codes.Code]int {
	var mu sync.Mutex
	seen := map[codes.Code]int{}
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			for range calls {
				_, err := c.Score(context.Background(), req)
				mu.Lock()
				seen[status.Code(err)]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return seen
}

// TestSmallRequestsGetInWhileBigOnesFillTheBudget (issue 16, the `memory`
// load): while 8 clients of 8 MB requests keep the memory budget full, a
// client of small requests is never refused: it waits for one message's
// read at most, ahead of the big ones, and their holds leave it room.
func TestSmallRequestsGetInWhileBigOnesFillTheBudget(t *testing.T) {
	st := newLiveStack(t, testConfig+"  memory_budget: 128MiB\n  max_message_bytes: 16777216\n", nil)
	small := newClient(t, st.grpcAddr)
	if _, err := small.Score(context.Background(), oneRollout()); err != nil {
		t.Fatalf("alone: %v", err)
	}
	big := make([]rewardv1.RewardServiceClient, 8)
	for i := range big {
		big[i] = newClient(t, st.grpcAddr)
	}
	stop := make(chan struct{})
	var bigs sync.WaitGroup
	req := bigRequest(2048, 4096)
	for _, c := range big {
		bigs.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				c.Score(context.Background(), req)
			}
		})
	}
	eventually(t, 20*time.Second, "the big requests hold most of the budget", func() bool {
		return st.metric(t, "rewardd_memory_reserved_bytes") > 48<<20
	})
	refused := 0
	for i := range 15 {
		if _, err := small.Score(context.Background(), oneRollout()); err != nil {
			refused++
			if refused <= 3 {
				t.Errorf("small request %d while big ones fill the budget: %v", i, err)
			}
		}
	}
	close(stop)
	bigs.Wait()
	if refused > 0 {
		t.Errorf("%d of 15 small requests refused, want none", refused)
	}
	eventually(t, 5*time.Second, "every reservation given back", func() bool {
		return st.metric(t, "rewardd_memory_reserved_bytes") == 0
	})
}

// TestConcurrentClientsUnderTheBudgetAreServed (issue 16: with
// `memory_budget: 1GiB` and no attack, 8 clients of 1,024-rollout batches
// were refused for memory, each call reserving max_message_bytes, a
// quarter of the budget, before its message came): 8 such clients at once
// are all served.
func TestConcurrentClientsUnderTheBudgetAreServed(t *testing.T) {
	st := newLiveStack(t, testConfig+"  memory_budget: 1GiB\n", nil)
	clients := make([]rewardv1.RewardServiceClient, 8)
	for i := range clients {
		clients[i] = newClient(t, st.grpcAddr)
	}
	seen := answersByCode(clients, bigRequest(1024, 300), 5)
	if seen[codes.OK] != 40 {
		t.Errorf("answers by code: %v, want 40 OK", seen)
	}
	if got := st.metric(t, "rewardd_memory_rejected_total"); got != 0 {
		t.Errorf("rewardd_memory_rejected_total = %v, want 0", got)
	}
}

// TestIdleStreamsLeaveRoomForCalls (issue 16, the `streams` load: each
// stream waiting for its next batch held max_message_bytes, and 16 held
// the budget): 8 open streams that send nothing hold at most their share
// of the budget, and unary calls are served meanwhile.
func TestIdleStreamsLeaveRoomForCalls(t *testing.T) {
	st := newLiveStack(t, testConfig+"  memory_budget: 128MiB\n  max_message_bytes: 16777216\n", nil)
	streamer := newClient(t, st.grpcAddr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 8 {
		if _, err := streamer.ScoreStream(ctx); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "a stream's receipt taken", func() bool {
		return st.metric(t, "rewardd_memory_reserved_bytes") >= 16<<20
	})
	seen := answersByCode([]rewardv1.RewardServiceClient{newClient(t, st.grpcAddr), newClient(t, st.grpcAddr)}, oneRollout(), 10)
	if seen[codes.OK] != 20 {
		t.Errorf("unary calls while 8 streams wait for batches: %v, want 20 OK", seen)
	}
	if held := st.metric(t, "rewardd_memory_reserved_bytes"); held > 0.25*0.7*128*(1<<20) {
		t.Errorf("idle streams hold %.0f MiB, more than their quarter of what requests may reserve", held/(1<<20))
	}
}

// send sends msg as the whole message of the call id.
func (h *rawH2) send(id uint32, msg proto.Message) {
	h.t.Helper()
	b, err := proto.Marshal(msg)
	if err != nil {
		h.t.Fatal(err)
	}
	frame := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(b)))
	if err := h.WriteData(id, true, append(frame, b...)); err != nil {
		h.t.Fatal(err)
	}
}

// TestRefusedReceiptIsResourceExhausted: a call that waits for the memory
// its message may take, and does not get it within limits.read_timeout, is
// answered RESOURCE_EXHAUSTED naming limits.memory_budget, and counted so.
// Calls whose messages never come, from a connection that sent small
// messages (so they wait ahead), hold the budget all along.
func TestRefusedReceiptIsResourceExhausted(t *testing.T) {
	const readTimeout = 2 * time.Second
	st := newLiveStack(t, testConfig+"  memory_budget: 128MiB\n  max_message_bytes: 16777216\n  read_timeout: 2s\n", nil)
	holder := dialH2(t, st.grpcAddr)
	first := holder.open(rewardv1.RewardService_Score_FullMethodName)
	holder.send(first, oneRollout())
	if holder.await([]uint32{first}, 10*time.Second) != 1 || holder.how(first) != "OK" {
		t.Fatalf("a whole small message: ended %q, want OK", holder.how(first))
	}
	for range 8 {
		holder.open(rewardv1.RewardService_Score_FullMethodName)
	}
	holder.sync()

	type answer struct {
		err  error
		took time.Duration
	}
	answered := make(chan answer, 1)
	go func() {
		start := time.Now()
		_, err := newClient(t, st.grpcAddr).Score(context.Background(), oneRollout())
		answered <- answer{err, time.Since(start)}
	}()
	var got answer
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(10 * readTimeout)
wait:
	for {
		select {
		case got = <-answered:
			break wait
		case <-tick.C:
			// More calls wait ahead, replacing those the read timeout cuts.
			holder.open(rewardv1.RewardService_Score_FullMethodName)
		case <-limit:
			t.Fatal("the call was not answered")
		}
	}
	if status.Code(got.err) != codes.ResourceExhausted || !strings.Contains(got.err.Error(), "limits.memory_budget") {
		t.Errorf("a call with no room for its message: %v, want RESOURCE_EXHAUSTED naming limits.memory_budget", got.err)
	}
	if got.took < readTimeout*3/4 {
		t.Errorf("answered after %v: it should have waited for room up to limits.read_timeout (%v)", got.took, readTimeout)
	}
	if n := st.metric(t, "rewardd_requests_total", "method", "Score", "code", codes.ResourceExhausted.String()); n < 1 {
		t.Errorf("rewardd_requests_total{code=ResourceExhausted} = %v, want at least 1", n)
	}
}
