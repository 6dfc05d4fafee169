package bench

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/server"
)

// The hot path of a Score call, piece by piece, on the bench's own rows
// (the gsm8k scenario, 1,024 rollouts, the baseline's four functions of the
// embedded default config). Run with -benchmem; each reports ns and allocs
// per rollout:
//
//	go test -run XXX -bench . -benchmem ./bench/

func hotBatch(b *testing.B) ([]Row, *rewardv1.ScoreRequest) {
	b.Helper()
	needData(b)
	opts := tinyOptions(b)
	sc, err := newScenario(&opts)
	if err != nil {
		b.Fatal(err)
	}
	rows := sc.rows(0, 1024)
	req := &rewardv1.ScoreRequest{Functions: BaselineFunctions}
	for _, r := range rows {
		req.Rollouts = append(req.Rollouts, rollout(r))
	}
	return rows, req
}

func perRollout(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/rollout")
}

// BenchmarkDecode is the server decoding a request: proto.Unmarshal.
func BenchmarkDecode(b *testing.B) {
	_, req := hotBatch(b)
	data, err := proto.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var m rewardv1.ScoreRequest
		if err := proto.Unmarshal(data, &m); err != nil {
			b.Fatal(err)
		}
	}
	perRollout(b, len(req.Rollouts))
}

// BenchmarkService is Service.Score on a decoded request (the engine, the
// scorers and building the answer), with the pool of 2 workers.
func BenchmarkService(b *testing.B) {
	_, req := hotBatch(b)
	cfg := defaultConfig(b, "")
	srv, err := server.New(server.Options{Config: cfg, Workers: 2})
	if err != nil {
		b.Fatal(err)
	}
	svc := srv.Service()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.Score(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	perRollout(b, len(req.Rollouts))
}

// BenchmarkFunction is each function alone on one goroutine.
func BenchmarkFunction(b *testing.B) {
	rows, _ := hotBatch(b)
	rs := make([]scorers.Rollout, len(rows))
	for i, r := range rows {
		rs[i] = scorers.Rollout{Completion: r.Completion,
			Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue(r.Answer)}}
	}
	ctx := context.Background()
	for _, fn := range defaultConfig(b, "").Functions {
		b.Run(fn.Name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				fn.Scorer.Score(ctx, &rs[i%len(rs)])
			}
		})
	}
}

// BenchmarkLongFunction is each function alone on one goroutine on 256 rows
// of the long scenario (4–128 KiB, 36 KiB on average): where the regex
// engine shows (reasoning_steps). Compare the engines by building with and
// without -tags re2_cgo (and with -tags rematch_regexp).
func BenchmarkLongFunction(b *testing.B) {
	needData(b)
	opts := tinyOptions(b)
	opts.Scenario = Long
	sc, err := newScenario(&opts)
	if err != nil {
		b.Fatal(err)
	}
	rows := sc.rows(0, 256)
	rs := make([]scorers.Rollout, len(rows))
	for i, r := range rows {
		rs[i] = scorers.Rollout{Completion: r.Completion,
			Fields: map[string]*structpb.Value{"answer": structpb.NewStringValue(r.Answer)}}
	}
	ctx := context.Background()
	for _, fn := range defaultConfig(b, "").Functions {
		b.Run(fn.Name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				fn.Scorer.Score(ctx, &rs[i%len(rs)])
			}
		})
	}
}
