package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// groupBatch is one GRPO group of 4 GSM8K completions (one right, three
// wrong) as one stream message.
func groupBatch(rows []gsm8kRow, i int) *rewardv1.ScoreRequest {
	r := rows[i%len(rows)]
	gold := goldNumber(r.Answer)
	req := &rewardv1.ScoreRequest{
		BatchId:     fmt.Sprintf("b%d", i),
		Aggregation: &rewardv1.Aggregation{Mode: rewardv1.AggregationMode_AGGREGATION_MODE_SUM_THEN_NORMALIZE},
	}
	for j := range 4 {
		c := r.Answer
		if j > 0 {
			c = strings.Replace(c, "#### ", fmt.Sprintf("#### %d", j), 1)
		}
		req.Rollouts = append(req.Rollouts, &rewardv1.Rollout{Group: fmt.Sprintf("g%d", i), Completion: c, Fields: answerField(gold)})
	}
	return req
}

// TestScoreStream sends 64 groups one by one, as generation would finish
// them, and checks that answers come while groups are still being sent, that
// every batch is answered once, and that each answer equals a unary Score of
// the same batch.
func TestScoreStream(t *testing.T) {
	st := newStack(t, testConfig)
	rows := gsm8k(t)
	ctx := context.Background()
	stream, err := st.client.ScoreStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	answers := make(chan *rewardv1.ScoreResponse, 64)
	recvDone := make(chan error, 1)
	go func() {
		for {
			resp, err := stream.Recv()
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				recvDone <- err
				close(answers)
				return
			}
			answers <- resp
		}
	}()

	got := map[string]*rewardv1.ScoreResponse{}
	for i := range 64 {
		if err := stream.Send(groupBatch(rows, i)); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			// The first answer must come before the other groups are sent.
			select {
			case a := <-answers:
				got[a.GetBatchId()] = a
			case <-time.After(time.Minute):
				t.Fatal("no answer to the first group within a minute while the stream stays open")
			}
		}
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	for a := range answers {
		if _, dup := got[a.GetBatchId()]; dup {
			t.Errorf("batch %s answered twice", a.GetBatchId())
		}
		got[a.GetBatchId()] = a
	}
	if err := <-recvDone; err != nil {
		t.Fatal(err)
	}
	if len(got) != 64 {
		t.Fatalf("%d answers, want 64", len(got))
	}
	for i := range 64 {
		req := groupBatch(rows, i)
		want, err := st.client.Score(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		a := got[req.GetBatchId()]
		if a.GetErrorCode() != 0 || !proto.Equal(a, want) {
			t.Errorf("batch %s: stream answer differs from Score: %v vs %v", req.GetBatchId(), a, want)
		}
		if adv := a.GetAdvantages(); len(adv) != 4 || adv[0] <= 0 || adv[1] >= 0 {
			t.Errorf("batch %s: advantages %v, want the right answer above the wrong ones", req.GetBatchId(), adv)
		}
	}
}

// TestScoreStreamSplitGroup sends a group in two messages: the second is
// answered with an error naming the group, and the stream goes on.
func TestScoreStreamSplitGroup(t *testing.T) {
	st := newStack(t, testConfig)
	rows := gsm8k(t)
	stream, err := st.client.ScoreStream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	first := groupBatch(rows, 0)
	again := groupBatch(rows, 0)
	again.BatchId = "again"
	next := groupBatch(rows, 1)
	for _, req := range []*rewardv1.ScoreRequest{first, again, next} {
		if err := stream.Send(req); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		failed := resp.GetErrorCode() != 0
		if wantFail := req == again; failed != wantFail {
			t.Errorf("batch %s: error %d %q", req.GetBatchId(), resp.GetErrorCode(), resp.GetErrorMessage())
		}
		if failed && (codes.Code(resp.GetErrorCode()) != codes.InvalidArgument || !strings.Contains(resp.GetErrorMessage(), `"g0"`)) {
			t.Errorf("split group: %d %q, want INVALID_ARGUMENT naming group g0", resp.GetErrorCode(), resp.GetErrorMessage())
		}
	}
	stream.CloseSend()
	if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("stream end: %v", err)
	}
}

// TestScoreStreamCancel cancels a stream with big batches in flight and
// checks that the pool drains: no work keeps running for a stream nobody
// reads (goleak in TestMain checks the goroutines).
func TestScoreStreamCancel(t *testing.T) {
	st := newStack(t, testConfig)
	rows := gsm8k(t)
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := st.client.ScoreStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The client sends every batch before it reads an answer: the answers
	// must fit in HTTP/2's flow-control windows meanwhile, so they leave out
	// the reasons of OK scores (one per rollout here, from format), as
	// they did before there were any.
	big := &rewardv1.ScoreRequest{OmitOkReasons: true}
	for i := range 4000 {
		big.Rollouts = append(big.Rollouts, &rewardv1.Rollout{Completion: rows[i%len(rows)].Answer, Fields: answerField("1")})
	}
	for i := range 8 {
		big.BatchId = fmt.Sprint(i)
		if err := stream.Send(big); err != nil {
			break
		}
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(time.Minute)
	for {
		if v := metricValue(t, st.httpURL, "rewardd_pool_inflight"); v == "0" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("rewardd_pool_inflight is %s a minute after the stream was cancelled", v)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// metricValue reads one unlabelled metric from /metrics.
func metricValue(t *testing.T, base, name string) string {
	t.Helper()
	code, body := get(t, base+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	t.Fatalf("metric %s not found", name)
	return ""
}
