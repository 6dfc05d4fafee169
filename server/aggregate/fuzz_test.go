package aggregate

import (
	"math"
	"strconv"
	"testing"
)

// FuzzCompute checks, for any batch the fuzzer builds: no panic; on success
// one reward and one advantage per rollout, every advantage finite, and 0
// for exactly the rollouts every function left NaN.
//
// Each score byte b is NaN when b is 0xff and int8(b)/16 otherwise; each
// group byte is a group id (0 is the empty id).
func FuzzCompute(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(1), []byte{1, 1, 1, 1}, []byte{16, 0, 16, 0})
	f.Add(uint8(1), uint8(0), uint8(2), []byte{1, 2, 1, 2}, []byte{16, 0xff, 0, 16, 0xff, 0xff, 8, 4})
	f.Add(uint8(2), uint8(0), uint8(3), []byte{0, 0, 3}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(uint8(0), uint8(1), uint8(1), []byte{5}, []byte{0xff, 0xff, 0x7f, 0x80})
	f.Add(uint8(0), uint8(2), uint8(4), []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, mode, scale, nfunc uint8, groupBytes, scoreBytes []byte) {
		k := int(nfunc % 5) // 0 functions is an error case worth fuzzing too
		n := 0
		if k > 0 {
			n = len(scoreBytes) / k
		}
		groups := make([]string, n)
		for i := range groups {
			if len(groupBytes) > 0 {
				if b := groupBytes[i%len(groupBytes)] % 8; b != 0 {
					groups[i] = strconv.Itoa(int(b))
				}
			}
		}
		scores := make([][]float64, k)
		for j := range scores {
			scores[j] = make([]float64, n)
			for i := range n {
				b := scoreBytes[j*n+i]
				if b == 0xff {
					scores[j][i] = math.NaN()
				} else {
					scores[j][i] = float64(int8(b)) / 16
				}
			}
		}
		spec := Spec{Mode: Mode(mode % 4), Scale: Scale(scale % 4)}
		res, err := Compute(spec, groups, scores)
		if err != nil {
			return
		}
		if len(res.Rewards) != n || len(res.Advantages) != n {
			t.Fatalf("%d rollouts gave %d rewards and %d advantages", n, len(res.Rewards), len(res.Advantages))
		}
		unscorable := 0
		for i := range n {
			if !finite(res.Advantages[i]) || !finite(res.Rewards[i]) {
				t.Fatalf("rollout %d: reward %v, advantage %v", i, res.Rewards[i], res.Advantages[i])
			}
			allNaN := true
			for j := range k {
				allNaN = allNaN && math.IsNaN(scores[j][i])
			}
			if allNaN {
				unscorable++
				if res.Advantages[i] != 0 || res.Rewards[i] != 0 {
					t.Fatalf("unscorable rollout %d: reward %v, advantage %v; want 0, 0", i, res.Rewards[i], res.Advantages[i])
				}
			}
		}
		if res.Unscorable != unscorable {
			t.Fatalf("Unscorable = %d, want %d", res.Unscorable, unscorable)
		}
	})
}
