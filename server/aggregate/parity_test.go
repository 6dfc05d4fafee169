package aggregate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// python is Debian's interpreter, the one the tests use; `python3` on PATH
// can be a slow shim.
const python = "/usr/bin/python3"

// parityCases is how many random batches the parity test sends.
const parityCases = 300

// TestParityWithTRLReference compares Compute with testdata/trl_reference.py,
// an independent NumPy transcription of TRL's and Axolotl's formulas, on
// random batches: every mode and valid scale, 1–4 functions, groups of 2–16
// (TRL's contiguous layout, shuffled mixed sizes, and singletons with empty
// ids), NaNs sprinkled, unscorable rows, random weights.
func TestParityWithTRLReference(t *testing.T) {
	if _, err := os.Stat(python); err != nil {
		t.Skipf("parity reference needs %s: %v", python, err)
	}
	if out, err := exec.Command(python, "-c", "import numpy").CombinedOutput(); err != nil {
		t.Skipf("parity reference needs NumPy for %s: %v: %s", python, err, out)
	}

	rng := rand.New(rand.NewPCG(20261202, 4))
	cases := make([]parityCase, parityCases)
	for i := range cases {
		cases[i] = randomCase(rng)
	}
	in, err := json.Marshal(map[string]any{"cases": cases})
	if err != nil {
		t.Fatalf("encode cases: %v", err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "testdata/trl_reference.py")
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("trl_reference.py: %v\n%s", err, stderr.String())
	}
	t.Logf("reference took %v (%v CPU)", time.Since(start), cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	var out struct {
		Results []struct {
			Rewards    []*float64 `json:"rewards"`
			Advantages []*float64 `json:"advantages"`
			Unscorable int        `json:"unscorable"`
		} `json:"results"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("decode reference output: %v", err)
	}
	if len(out.Results) != len(cases) {
		t.Fatalf("reference returned %d results for %d cases", len(out.Results), len(cases))
	}

	const tol = 1e-6
	var compared, unscorable int
	for c, pc := range cases {
		spec, scores := pc.decode(t)
		got, err := Compute(spec, pc.Groups, scores)
		if err != nil {
			t.Fatalf("case %d (%s): Compute: %v", c, pc, err)
		}
		want := out.Results[c]
		if len(want.Rewards) != len(pc.Groups) || len(want.Advantages) != len(pc.Groups) {
			t.Fatalf("case %d: reference returned %d rewards and %d advantages for %d rollouts",
				c, len(want.Rewards), len(want.Advantages), len(pc.Groups))
		}
		for i := range pc.Groups {
			if w := deref(want.Rewards[i]); !closeEnough(got.Rewards[i], w, tol) {
				t.Errorf("case %d (%s) rollout %d: reward %.17g, reference %.17g", c, pc, i, got.Rewards[i], w)
			}
			if w := deref(want.Advantages[i]); !closeEnough(got.Advantages[i], w, tol) {
				t.Errorf("case %d (%s) rollout %d: advantage %.17g, reference %.17g", c, pc, i, got.Advantages[i], w)
			}
			compared++
		}
		if got.Unscorable != want.Unscorable {
			t.Errorf("case %d (%s): Unscorable = %d, reference %d", c, pc, got.Unscorable, want.Unscorable)
		}
		unscorable += got.Unscorable
	}
	t.Logf("compared %d rollouts in %d batches (%d unscorable) with the NumPy reference", compared, len(cases), unscorable)
}

// parityCase is one batch as trl_reference.py reads it. NaN travels as null.
type parityCase struct {
	Mode    string      `json:"mode"`
	Scale   string      `json:"scale"`
	Weights []float64   `json:"weights"`
	Groups  []string    `json:"groups"`
	Scores  [][]jsonNum `json:"scores"`
	layout  string
}

func (pc parityCase) String() string {
	return fmt.Sprintf("%s/%s, %d functions, %d rollouts, %s layout", pc.Mode, pc.Scale, len(pc.Scores), len(pc.Groups), pc.layout)
}

func (pc parityCase) decode(t *testing.T) (Spec, [][]float64) {
	t.Helper()
	mode, err := ParseMode(pc.Mode)
	if err != nil {
		t.Fatal(err)
	}
	scale, err := ParseScale(pc.Scale)
	if err != nil {
		t.Fatal(err)
	}
	scores := make([][]float64, len(pc.Scores))
	for k, col := range pc.Scores {
		scores[k] = make([]float64, len(col))
		for i, v := range col {
			scores[k][i] = float64(v)
		}
	}
	return Spec{Mode: mode, Scale: scale, Weights: pc.Weights}, scores
}

// jsonNum is a float64 that encodes NaN as null.
type jsonNum float64

func (v jsonNum) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(v)) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(v), 'g', -1, 64), nil
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func randomCase(rng *rand.Rand) parityCase {
	var pc parityCase
	pc.Mode = modeNames[rng.IntN(len(modeNames))]
	pc.Scale = ScaleGroup.String()
	if pc.Mode == SumThenNormalize.String() {
		pc.Scale = scaleNames[rng.IntN(len(scaleNames))]
	}
	nfunc := 1 + rng.IntN(4)

	pc.layout, pc.Groups = randomGroups(rng)
	pc.Scores = randomScores(rng, nfunc, len(pc.Groups))

	switch {
	case rng.IntN(3) == 0:
		// nil: every weight 1
	case pc.Mode == Hatchery.String():
		pc.Weights = make([]float64, nfunc)
		for k := range pc.Weights {
			pc.Weights[k] = 1
		}
	default:
		pc.Weights = make([]float64, nfunc)
		for k := range pc.Weights {
			pc.Weights[k] = 3*rng.Float64() - 1
		}
	}
	return pc
}

// randomGroups draws the group ids of a case and names their layout.
func randomGroups(rng *rand.Rand) (layout string, groups []string) {
	// Groups: TRL's layout (consecutive blocks of one size), shuffled groups
	// of mixed sizes, or shuffled mixed sizes with singletons and empty ids.
	ngroups := 1 + rng.IntN(10)
	switch rng.IntN(3) {
	case 0:
		layout = "trl"
		size := 2 + rng.IntN(15)
		for g := range ngroups {
			for range size {
				groups = append(groups, fmt.Sprintf("p%d", g))
			}
		}
	case 1:
		layout = "mixed"
		for g := range ngroups {
			for range 2 + rng.IntN(15) {
				groups = append(groups, fmt.Sprintf("p%d", g))
			}
		}
		rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
	default:
		layout = "singletons"
		for g := range ngroups {
			for range 1 + rng.IntN(16) {
				groups = append(groups, fmt.Sprintf("p%d", g))
			}
		}
		for range 1 + rng.IntN(4) {
			groups = append(groups, "")
		}
		rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
	}
	return layout, groups
}

// randomScores draws the scores of nfunc functions on n rollouts.
func randomScores(rng *rand.Rand, nfunc, n int) [][]jsonNum {
	// Scores: each function is binary, graded in quarters, or continuous,
	// with its own NaN rate; a few rows are NaN for every function.
	nanRates := []float64{0, 0.05, 0.3, 0.8}
	scores := make([][]jsonNum, nfunc)
	for k := range scores {
		kind, nanRate := rng.IntN(3), nanRates[rng.IntN(len(nanRates))]
		col := make([]jsonNum, n)
		for i := range col {
			switch {
			case rng.Float64() < nanRate:
				col[i] = jsonNum(math.NaN())
			case kind == 0:
				col[i] = jsonNum(rng.IntN(2))
			case kind == 1:
				col[i] = jsonNum(float64(rng.IntN(5)) / 4)
			default:
				col[i] = jsonNum(3*rng.Float64() - 1)
			}
		}
		scores[k] = col
	}
	for i := range n {
		if rng.IntN(20) == 0 {
			for k := range scores {
				scores[k][i] = jsonNum(math.NaN())
			}
		}
	}
	return scores
}
