package aggregate

import (
	"math"
	"slices"
	"testing"
)

var nan = math.NaN()

// eps is Epsilon, short for the expected values below.
const eps = Epsilon

func TestCompute(t *testing.T) {
	s2 := math.Sqrt(2)
	third := math.Sqrt(1.0 / 3) // sample std of {1,0,1,0} and of {1,0,1}
	half := math.Sqrt(0.5)      // sample std of {1,0} and of {0,1}
	// GDPO, two functions with weights 1 and 0.5 on {1,0} and {0,1}.
	gdpoZ := 0.5 / (half + eps)
	// GDPO, f0 = {1,0,0}: normalized values 2c, -c, -c.
	gdpoC := (1.0 / 3) / (third + eps)

	tests := []struct {
		name           string
		spec           Spec
		groups         []string
		scores         [][]float64
		wantRewards    []float64
		wantAdvantages []float64
		wantUnscorable int
	}{
		{
			name:           "grpo/group/binary",
			groups:         []string{"a", "a", "a", "a"},
			scores:         [][]float64{{1, 0, 1, 0}},
			wantRewards:    []float64{1, 0, 1, 0},
			wantAdvantages: []float64{0.5 / (third + eps), -0.5 / (third + eps), 0.5 / (third + eps), -0.5 / (third + eps)},
		},
		{
			name:           "grpo/group/all equal gives 0 not NaN",
			groups:         []string{"a", "a", "a"},
			scores:         [][]float64{{0.75, 0.75, 0.75}},
			wantRewards:    []float64{0.75, 0.75, 0.75},
			wantAdvantages: []float64{0, 0, 0},
		},
		{
			name:   "grpo/group/epsilon dominates a tiny std",
			groups: []string{"a", "a"},
			scores: [][]float64{{0, 1e-4}},
			// mean 5e-5, std sqrt(2)*5e-5
			wantRewards:    []float64{0, 1e-4},
			wantAdvantages: []float64{-5e-5 / (s2*5e-5 + eps), 5e-5 / (s2*5e-5 + eps)},
		},
		{
			name:           "grpo/group/weights",
			spec:           Spec{Weights: []float64{1, 0.5}},
			groups:         []string{"a", "a"},
			scores:         [][]float64{{1, 0}, {0, 1}},
			wantRewards:    []float64{1, 0.5},
			wantAdvantages: []float64{0.25 / (half*0.5 + eps), -0.25 / (half*0.5 + eps)},
		},
		{
			name:           "grpo/group/negative and zero weights",
			spec:           Spec{Weights: []float64{-1, 0}},
			groups:         []string{"a", "a"},
			scores:         [][]float64{{1, 0}, {5, -5}},
			wantRewards:    []float64{-1, 0},
			wantAdvantages: []float64{-0.5 / (half + eps), 0.5 / (half + eps)},
		},
		{
			name:   "grpo/group/NaN skipped and unscorable row counted",
			groups: []string{"a", "a", "a"},
			scores: [][]float64{{1, nan, 0}, {nan, nan, 1}},
			// rewards {1, 0, 1}: TRL's nansum gives the unscorable row 0 and
			// keeps it in the group mean 2/3 and std sqrt(1/3); its own
			// advantage is forced to 0.
			wantRewards:    []float64{1, 0, 1},
			wantAdvantages: []float64{(1.0 / 3) / (third + eps), 0, (1.0 / 3) / (third + eps)},
			wantUnscorable: 1,
		},
		{
			name:           "grpo/group/single-rollout group",
			groups:         []string{"a", "a", "b"},
			scores:         [][]float64{{1, 0, 5}},
			wantRewards:    []float64{1, 0, 5},
			wantAdvantages: []float64{0.5 / (half + eps), -0.5 / (half + eps), 0},
		},
		{
			name:           "grpo/group/non-contiguous groups of different spread",
			groups:         []string{"a", "b", "a", "b"},
			scores:         [][]float64{{1, 2, 3, 6}},
			wantRewards:    []float64{1, 2, 3, 6},
			wantAdvantages: []float64{-1 / (s2 + eps), -2 / (2*s2 + eps), 1 / (s2 + eps), 2 / (2*s2 + eps)},
		},
		{
			name:           "grpo/group/empty group id is its own group",
			groups:         []string{"", "", "a", "a"},
			scores:         [][]float64{{3, 4, 0, 1}},
			wantRewards:    []float64{3, 4, 0, 1},
			wantAdvantages: []float64{0, 0, -0.5 / (half + eps), 0.5 / (half + eps)},
		},
		{
			name:           "grpo/group/whole group unscorable",
			groups:         []string{"a", "a"},
			scores:         [][]float64{{nan, nan}},
			wantRewards:    []float64{0, 0},
			wantAdvantages: []float64{0, 0},
			wantUnscorable: 2,
		},
		{
			name:   "grpo/batch",
			spec:   Spec{Scale: ScaleBatch},
			groups: []string{"a", "a", "b", "b"},
			scores: [][]float64{{1, 0, 1, 1}},
			// group means .5 and 1; batch std of {1,0,1,1} is 0.5
			wantRewards:    []float64{1, 0, 1, 1},
			wantAdvantages: []float64{0.5 / (0.5 + eps), -0.5 / (0.5 + eps), 0, 0},
		},
		{
			name:           "grpo/batch/one rollout",
			spec:           Spec{Scale: ScaleBatch},
			groups:         []string{"a"},
			scores:         [][]float64{{3}},
			wantRewards:    []float64{3},
			wantAdvantages: []float64{0},
		},
		{
			name:           "grpo/none",
			spec:           Spec{Scale: ScaleNone},
			groups:         []string{"a", "a", "b", "b"},
			scores:         [][]float64{{1, 0, 1, 1}},
			wantRewards:    []float64{1, 0, 1, 1},
			wantAdvantages: []float64{0.5, -0.5, 0, 0},
		},
		{
			name:           "grpo/empty batch",
			groups:         []string{},
			scores:         [][]float64{{}},
			wantRewards:    []float64{},
			wantAdvantages: []float64{},
		},
		{
			name:   "gdpo/weights",
			spec:   Spec{Mode: NormalizeThenSum, Weights: []float64{1, 0.5}},
			groups: []string{"a", "a"},
			scores: [][]float64{{1, 0}, {0, 1}},
			// per-function z = ±gdpoZ; sums ±0.5·gdpoZ; batch std 0.5·gdpoZ·√2
			wantRewards:    []float64{1, 0.5},
			wantAdvantages: []float64{0.5 * gdpoZ / (0.5*gdpoZ*s2 + eps), -0.5 * gdpoZ / (0.5*gdpoZ*s2 + eps)},
		},
		{
			name:   "gdpo/function with one value in the group contributes nothing",
			spec:   Spec{Mode: NormalizeThenSum},
			groups: []string{"a", "a", "a"},
			scores: [][]float64{{1, 0, 0}, {nan, 1, nan}},
			// f1's nanstd is NaN (one value) so nansum drops it; sums 2c,-c,-c;
			// batch std c·√3
			wantRewards: []float64{1, 1, 0},
			wantAdvantages: []float64{
				2 * gdpoC / (gdpoC*math.Sqrt(3) + eps),
				-gdpoC / (gdpoC*math.Sqrt(3) + eps),
				-gdpoC / (gdpoC*math.Sqrt(3) + eps),
			},
		},
		{
			name:   "gdpo/unscorable row",
			spec:   Spec{Mode: NormalizeThenSum},
			groups: []string{"a", "a", "a"},
			scores: [][]float64{{1, 0, nan}},
			// sums z,-z,0 with z = gdpoZ; batch std z
			wantRewards:    []float64{1, 0, 0},
			wantAdvantages: []float64{gdpoZ / (gdpoZ + eps), -gdpoZ / (gdpoZ + eps), 0},
			wantUnscorable: 1,
		},
		{
			name:           "gdpo/single-rollout groups",
			spec:           Spec{Mode: NormalizeThenSum},
			groups:         []string{"a", "b", ""},
			scores:         [][]float64{{1, 0, 7}},
			wantRewards:    []float64{1, 0, 7},
			wantAdvantages: []float64{0, 0, 0},
		},
		{
			name:           "gdpo/all-equal function",
			spec:           Spec{Mode: NormalizeThenSum},
			groups:         []string{"a", "a", "b", "b"},
			scores:         [][]float64{{1, 1, 1, 0}},
			wantRewards:    []float64{1, 1, 1, 0},
			wantAdvantages: gdpoAllEqual(),
		},
		{
			name:           "hatchery/population std",
			spec:           Spec{Mode: Hatchery},
			groups:         []string{"a", "a", "a", "a"},
			scores:         [][]float64{{1, 0, 0, 0}, {0, 0, 1, 0}},
			wantRewards:    []float64{1, 0, 1, 0},
			wantAdvantages: []float64{1, -1, 1, -1},
		},
		{
			name:           "hatchery/variance at most 1e-8 divides by 1",
			spec:           Spec{Mode: Hatchery, Weights: []float64{1}},
			groups:         []string{"a", "a", "b", "b"},
			scores:         [][]float64{{0, 1e-4, 2, 2}},
			wantRewards:    []float64{0, 1e-4, 2, 2},
			wantAdvantages: []float64{-5e-5, 5e-5, 0, 0},
		},
		{
			name:           "hatchery/NaN skipped",
			spec:           Spec{Mode: Hatchery},
			groups:         []string{"a", "a", "a"},
			scores:         [][]float64{{1, nan, nan}, {1, 2, nan}},
			wantRewards:    []float64{2, 2, 0},
			wantAdvantages: []float64{2.0 / 3 / math.Sqrt(8.0/9), 2.0 / 3 / math.Sqrt(8.0/9), 0},
			wantUnscorable: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Compute(tt.spec, tt.groups, tt.scores)
			if err != nil {
				t.Fatalf("Compute: %v", err)
			}
			assertClose(t, "rewards", got.Rewards, tt.wantRewards)
			assertClose(t, "advantages", got.Advantages, tt.wantAdvantages)
			if got.Unscorable != tt.wantUnscorable {
				t.Errorf("Unscorable = %d, want %d", got.Unscorable, tt.wantUnscorable)
			}
		})
	}
}

// gdpoAllEqual is the hand computation for "gdpo/all-equal function": group
// a is flat (normalized 0, 0); group b is {1,0}, normalized ±z; the batch of
// sums {0, 0, z, -z} has mean 0 and sample std z·√(2/3).
func gdpoAllEqual() []float64 {
	z := 0.5 / (math.Sqrt(0.5) + eps)
	s := z * math.Sqrt(2.0/3)
	return []float64{0, 0, z / (s + eps), -z / (s + eps)}
}

func TestComputeErrors(t *testing.T) {
	tests := []struct {
		name   string
		spec   Spec
		groups []string
		scores [][]float64
	}{
		{"unknown mode", Spec{Mode: 9}, []string{"a"}, [][]float64{{1}}},
		{"unknown scale", Spec{Scale: 9}, []string{"a"}, [][]float64{{1}}},
		{"gdpo with batch scale", Spec{Mode: NormalizeThenSum, Scale: ScaleBatch}, []string{"a"}, [][]float64{{1}}},
		{"gdpo with no scale", Spec{Mode: NormalizeThenSum, Scale: ScaleNone}, []string{"a"}, [][]float64{{1}}},
		{"hatchery with batch scale", Spec{Mode: Hatchery, Scale: ScaleBatch}, []string{"a"}, [][]float64{{1}}},
		{"hatchery with a weight", Spec{Mode: Hatchery, Weights: []float64{0.5}}, []string{"a"}, [][]float64{{1}}},
		{"NaN weight", Spec{Weights: []float64{nan}}, []string{"a"}, [][]float64{{1}}},
		{"infinite weight", Spec{Weights: []float64{math.Inf(1)}}, []string{"a"}, [][]float64{{1}}},
		{"too few weights", Spec{Weights: []float64{1}}, []string{"a"}, [][]float64{{1}, {1}}},
		{"no functions", Spec{}, []string{"a"}, nil},
		{"short score column", Spec{}, []string{"a", "a"}, [][]float64{{1, 1}, {1}}},
		{"infinite score", Spec{}, []string{"a", "a"}, [][]float64{{1, math.Inf(-1)}}},
		{"overflow in the group std", Spec{}, []string{"a", "a"}, [][]float64{{1e200, -1e200}}},
		{"overflow in the reward sum", Spec{Scale: ScaleNone}, []string{"a", "a"}, [][]float64{{1.5e308, 1}, {1.5e308, 1}}},
		{"overflow in gdpo", Spec{Mode: NormalizeThenSum}, []string{"a", "a"}, [][]float64{{1e200, -1e200}}},
		{"overflow in hatchery", Spec{Mode: Hatchery}, []string{"a", "a"}, [][]float64{{1e200, -1e200}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Compute(tt.spec, tt.groups, tt.scores)
			if err == nil {
				t.Fatalf("Compute = %+v, want an error", got)
			}
		})
	}
}

func TestParse(t *testing.T) {
	for _, m := range []Mode{SumThenNormalize, NormalizeThenSum, Hatchery} {
		got, err := ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", m.String(), got, err, m)
		}
		var u Mode
		text, err := m.MarshalText()
		if err != nil {
			t.Fatalf("MarshalText(%v): %v", m, err)
		}
		if err := u.UnmarshalText(text); err != nil || u != m {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", text, u, err, m)
		}
	}
	for _, s := range []Scale{ScaleGroup, ScaleBatch, ScaleNone} {
		got, err := ParseScale(s.String())
		if err != nil || got != s {
			t.Errorf("ParseScale(%q) = %v, %v; want %v", s.String(), got, err, s)
		}
		var u Scale
		text, err := s.MarshalText()
		if err != nil {
			t.Fatalf("MarshalText(%v): %v", s, err)
		}
		if err := u.UnmarshalText(text); err != nil || u != s {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", text, u, err, s)
		}
	}
	if m, err := ParseMode(""); err != nil || m != SumThenNormalize {
		t.Errorf(`ParseMode("") = %v, %v; want the default %v`, m, err, SumThenNormalize)
	}
	if s, err := ParseScale(""); err != nil || s != ScaleGroup {
		t.Errorf(`ParseScale("") = %v, %v; want the default %v`, s, err, ScaleGroup)
	}
	for _, bad := range []string{"grpo", "GROUP", "sum-then-normalize", " hatchery"} {
		if m, err := ParseMode(bad); err == nil {
			t.Errorf("ParseMode(%q) = %v, want an error", bad, m)
		}
		if s, err := ParseScale(bad); err == nil {
			t.Errorf("ParseScale(%q) = %v, want an error", bad, s)
		}
	}
	var m Mode
	if err := m.UnmarshalText([]byte("gdpo")); err == nil {
		t.Error(`UnmarshalText("gdpo") succeeded, want an error`)
	}
	if _, err := Mode(7).MarshalText(); err == nil {
		t.Error("MarshalText(Mode(7)) succeeded, want an error")
	}
}

// TestComputeDoesNotModifyInputs guards the column-major scores the server
// still has to send back to the client.
func TestComputeDoesNotModifyInputs(t *testing.T) {
	groups := []string{"a", "b", "a", "b"}
	scores := [][]float64{{1, nan, 0, 1}, {0.5, 0.25, nan, 1}}
	weights := []float64{1, 2}
	for _, mode := range []Mode{SumThenNormalize, NormalizeThenSum} {
		g, s, w := slices.Clone(groups), [][]float64{slices.Clone(scores[0]), slices.Clone(scores[1])}, slices.Clone(weights)
		if _, err := Compute(Spec{Mode: mode, Weights: w}, g, s); err != nil {
			t.Fatalf("%v: Compute: %v", mode, err)
		}
		if !slices.Equal(g, groups) || !slices.Equal(w, weights) ||
			!equalNaN(s[0], scores[0]) || !equalNaN(s[1], scores[1]) {
			t.Errorf("%v: Compute modified its inputs", mode)
		}
	}
}

func assertClose(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values %v, want %d %v", what, len(got), got, len(want), want)
	}
	for i := range want {
		if !closeEnough(got[i], want[i], 1e-12) {
			t.Errorf("%s[%d] = %.17g, want %.17g", what, i, got[i], want[i])
		}
	}
}

// closeEnough compares with tolerance tol, relative above magnitude 1; NaN
// equals NaN.
func closeEnough(got, want, tol float64) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.IsNaN(got) && math.IsNaN(want)
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func equalNaN(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) })
}
