package server

import (
	"testing"

	"google.golang.org/protobuf/proto"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// TestGroupSetHoldsNoRequestMemory (finding: the stream's group set kept
// strings cut from request buffers, and so every recent request's whole
// buffer): the set must not refer to the buffer its requests were decoded
// from. The group ids of the first request are overwritten in place by the
// second's; the set still knows the first request's group and batch.
func TestGroupSetHoldsNoRequestMemory(t *testing.T) {
	wire := func(batch, group string) []byte {
		b, err := proto.Marshal(&rewardv1.ScoreRequest{BatchId: batch, Rollouts: []*rewardv1.Rollout{{Group: group, Completion: "x"}}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	set := newGroupSet(16)
	buf := wire("batch-a", "group-1")
	var first rewardv1.ScoreRequest
	if !decodeScoreRequest(buf, &first, nil, nil) {
		t.Fatal("decode")
	}
	if dup, _ := set.addAll(&first); dup != "" {
		t.Fatalf("first request: duplicate %q", dup)
	}
	copy(buf, wire("batch-b", "group-2")) // the buffer holds the next request
	var second rewardv1.ScoreRequest
	if !decodeScoreRequest(buf, &second, nil, nil) {
		t.Fatal("decode")
	}
	if dup, _ := set.addAll(&second); dup != "" {
		t.Fatalf("second request: duplicate %q", dup)
	}
	third := &rewardv1.ScoreRequest{BatchId: "batch-c", Rollouts: []*rewardv1.Rollout{{Group: "group-1"}}}
	dup, batch := set.addAll(third)
	if dup != "group-1" || batch != "batch-a" {
		t.Errorf("group-1 again: duplicate %q of batch %q, want group-1 of batch-a", dup, batch)
	}
}
