package server

import (
	"context"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/server/config"
)

// TestScoreEncodedOwnsItsScratch: the memory a Score call scores in is not
// lent to another call before the response is encoded. The buffer the
// response is encoded into is asked for after scoring, at the last moment a
// mistake could show: another call scores right then, in a different
// batch, and the encoding must still be the first call's. (With the scratch
// given back before the encoding, the nested call takes the same scratch
// from the pool and this fails; under -race the pool drops some of what it
// is given, so there it fails in most runs, not all.)
func TestScoreEncodedOwnsItsScratch(t *testing.T) {
	cfg, err := config.Load("t.yml", []byte("functions:\n  - {name: accuracy, kind: exact_match, reference_field: answer}\n"), builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Config: cfg, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	svc := srv.Service()
	batch := func(id string, n, right int) *rewardv1.ScoreRequest {
		req := &rewardv1.ScoreRequest{BatchId: id, Functions: []string{"accuracy"}}
		for i := range n {
			answer := "1"
			if i%right == 0 {
				answer = "7"
			}
			req.Rollouts = append(req.Rollouts, &rewardv1.Rollout{Completion: "7",
				Fields: &structpb.Struct{Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue(answer)}}})
		}
		return req
	}
	want, err := svc.Score(context.Background(), batch("first", 50, 2))
	if err != nil {
		t.Fatal(err)
	}
	var other rewardv1.ScoreResponse
	b, err := svc.scoreEncoded(context.Background(), batch("first", 50, 2), func(size int) []byte {
		b, err := svc.scoreEncoded(context.Background(), batch("second", 50, 3), func(size int) []byte { return make([]byte, 0, size) })
		if err != nil {
			t.Fatal(err)
		}
		if err := proto.Unmarshal(b, &other); err != nil {
			t.Fatal(err)
		}
		return make([]byte, 0, size)
	})
	if err != nil {
		t.Fatal(err)
	}
	var got rewardv1.ScoreResponse
	if err := proto.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&got, want) {
		t.Errorf("encoded\n%v\nwant\n%v", fmt.Sprint(got.GetFunctions()[0].GetValues()), fmt.Sprint(want.GetFunctions()[0].GetValues()))
	}
	if fmt.Sprint(other.GetFunctions()[0].GetValues()) == fmt.Sprint(want.GetFunctions()[0].GetValues()) {
		t.Fatal("the two batches score the same: the test shows nothing")
	}
}
