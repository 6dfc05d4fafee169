package server_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rewardd/rewardd/internal/servertest"
	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/config"
)

// gsm8kBatch returns n rollouts made of GSM8K gold solutions (~400 B), a
// quarter of them with the final number changed.
func gsm8kBatch(b testing.TB, n int) []*rewardv1.Rollout {
	rows := gsm8k(b)
	out := make([]*rewardv1.Rollout, n)
	for i := range out {
		r := rows[i%len(rows)]
		gold := goldNumber(r.Answer)
		c := r.Answer
		if i%4 == 3 {
			c = strings.Replace(c, "#### ", "#### 9", 1)
		}
		out[i] = &rewardv1.Rollout{Completion: c, Fields: answerField(gold)}
	}
	return out
}

func benchConfig(b *testing.B) *config.Config {
	cfg, err := config.Load("bench.yml", []byte(testConfig), builtin.Registry())
	if err != nil {
		b.Fatal(err)
	}
	return cfg
}

// BenchmarkServiceScore measures server-side scoring (no transport): one
// 4,096-rollout × 3-function batch per op. evals/s is rollout-function
// evaluations per second.
func BenchmarkServiceScore(b *testing.B) {
	srv, err := server.New(server.Options{Config: benchConfig(b), Workers: 2})
	if err != nil {
		b.Fatal(err)
	}
	svc := srv.Service()
	req := &rewardv1.ScoreRequest{Rollouts: gsm8kBatch(b, 4096)}
	b.ResetTimer()
	for b.Loop() {
		if _, err := svc.Score(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*4096*3/b.Elapsed().Seconds(), "evals/s")
}

// BenchmarkLoopbackScore measures end to end over loopback TCP gRPC: one
// 1,024-rollout × 3-function Score call per op, from 4 concurrent clients,
// with latency percentiles.
func BenchmarkLoopbackScore(b *testing.B) {
	loopbackScore(b, loopbackClient(b), &rewardv1.ScoreRequest{Rollouts: gsm8kBatch(b, 1024)})
}

// BenchmarkLoopbackReasons is BenchmarkLoopbackScore with the reasons of
// OK scores (format gives one for every gold solution, which has no tags)
// and without them (omit_ok_reasons): what sending them costs. Run it
// several times to alternate the two.
func BenchmarkLoopbackReasons(b *testing.B) {
	client := loopbackClient(b)
	for _, omit := range []bool{false, true} {
		name := "reasons"
		if omit {
			name = "omit_ok_reasons"
		}
		b.Run(name, func(b *testing.B) {
			loopbackScore(b, client, &rewardv1.ScoreRequest{Rollouts: gsm8kBatch(b, 1024), OmitOkReasons: omit})
		})
	}
}

// loopbackClient serves testConfig on loopback TCP for the benchmark's
// duration and returns a client of it.
func loopbackClient(b *testing.B) rewardv1.RewardServiceClient {
	conn := servertest.Start(b, server.Options{Config: benchConfig(b), Workers: 2}).Dial(b)
	return rewardv1.NewRewardServiceClient(conn)
}

// loopbackScore sends req from 4 concurrent clients, and reports latency
// percentiles and evaluations per second (req has 1,024 rollouts, scored
// by 3 functions).
func loopbackScore(b *testing.B, client rewardv1.RewardServiceClient, req *rewardv1.ScoreRequest) {
	latencies := make(chan time.Duration, 1<<20)
	b.SetParallelism(2) // 2 × GOMAXPROCS(2) = 4 concurrent clients
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			start := time.Now()
			if _, err := client.Score(context.Background(), req); err != nil {
				b.Error(err)
				return
			}
			select {
			case latencies <- time.Since(start):
			default:
			}
		}
	})
	b.StopTimer()
	close(latencies)
	var ls []time.Duration
	for l := range latencies {
		ls = append(ls, l)
	}
	slices.Sort(ls)
	if len(ls) > 0 {
		b.ReportMetric(float64(ls[len(ls)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(ls[len(ls)*99/100].Microseconds())/1000, "p99-ms")
	}
	b.ReportMetric(float64(b.N)*1024*3/b.Elapsed().Seconds(), "evals/s")
}
