package aggregate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkCompute aggregates 16,384 rollouts (1,024 prompts × 16
// completions) scored by 3 functions, about 5% of scores NaN.
func BenchmarkCompute(b *testing.B) {
	const prompts, perPrompt, nfunc = 1024, 16, 3
	n := prompts * perPrompt
	rng := rand.New(rand.NewPCG(1, 2))
	groups := make([]string, n)
	for i := range groups {
		groups[i] = fmt.Sprintf("prompt-%d", i/perPrompt)
	}
	scores := make([][]float64, nfunc)
	for k := range scores {
		scores[k] = make([]float64, n)
		for i := range scores[k] {
			if rng.IntN(20) == 0 {
				scores[k][i] = math.NaN()
			} else {
				scores[k][i] = float64(rng.IntN(5)) / 4
			}
		}
	}
	specs := []Spec{
		{Mode: SumThenNormalize, Scale: ScaleGroup, Weights: []float64{1, 0.2, 0.5}},
		{Mode: SumThenNormalize, Scale: ScaleBatch},
		{Mode: NormalizeThenSum, Weights: []float64{1, 0.2, 0.5}},
		{Mode: Hatchery},
	}
	for _, spec := range specs {
		b.Run(spec.Mode.String()+"/"+spec.Scale.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Compute(spec, groups, scores); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/rollout")
		})
	}
}
