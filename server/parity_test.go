package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/builtin"
)

// fixed is a test kind whose score is the number in a row field (null:
// NOT_APPLICABLE), so that a request can carry any scores, NaNs included.
type fixed struct{ field string }

type fixedParams struct {
	Field string `yaml:"field"`
}

func newFixed(p fixedParams) (*fixed, error) { return &fixed{p.Field}, nil }

func (f *fixed) Params() fixedParams { return fixedParams{f.field} }

func (f *fixed) Score(_ context.Context, r *scorers.Rollout) scorers.Result {
	v, ok := r.Field(f.field)
	if !ok {
		return scorers.Skip("null")
	}
	return scorers.Score(v.GetNumberValue())
}

// TestAggregationParity sends random batches through gRPC Score with
// aggregation — 1–4 functions, groups of 2–16 in any order, NaNs sprinkled,
// random weights, every mode and scale — and compares the server's rewards
// and advantages with server/aggregate/testdata/trl_reference.py, an
// independent NumPy transcription of TRL's formulas, to 1e-6.
func TestAggregationParity(t *testing.T) {
	const python = "/usr/bin/python3"
	if out, err := exec.Command(python, "-c", "import numpy").CombinedOutput(); err != nil {
		t.Skipf("the NumPy reference needs %s with NumPy (make deps installs python3-numpy): %v %s", python, err, out)
	}
	kinds := builtin.Registry()
	kinds["fixed"] = scorers.Kind(newFixed)
	st := newStackWith(t, testConfig, nil, kinds)

	modes := map[string]rewardv1.AggregationMode{
		"sum_then_normalize": rewardv1.AggregationMode_AGGREGATION_MODE_SUM_THEN_NORMALIZE,
		"normalize_then_sum": rewardv1.AggregationMode_AGGREGATION_MODE_NORMALIZE_THEN_SUM,
		"hatchery":           rewardv1.AggregationMode_AGGREGATION_MODE_HATCHERY,
	}
	scales := map[string]rewardv1.AggregationScale{
		"group": rewardv1.AggregationScale_AGGREGATION_SCALE_GROUP,
		"batch": rewardv1.AggregationScale_AGGREGATION_SCALE_BATCH,
		"none":  rewardv1.AggregationScale_AGGREGATION_SCALE_NONE,
	}
	rng := rand.New(rand.NewPCG(2026, 12))
	var cases []refCase
	var answers []*rewardv1.ScoreResponse
	for c := range 120 {
		rc, req := randomParityCase(rng, c, modes, scales)
		resp, err := st.client.Score(context.Background(), req)
		if err != nil {
			t.Fatalf("case %d: %v", c, err)
		}
		cases = append(cases, rc)
		answers = append(answers, resp)
	}

	ref := runTRLReference(t, python, cases)
	compared := 0
	for c, resp := range answers {
		want := ref[c]
		for i := range cases[c].Groups {
			for _, pair := range [][2]any{{resp.Rewards[i], want.Rewards[i]}, {resp.Advantages[i], want.Advantages[i]}} {
				got, w := pair[0].(float64), pair[1].(*float64)
				wv := math.NaN()
				if w != nil {
					wv = *w
				}
				if !(math.Abs(got-wv) <= 1e-6 || math.IsNaN(got) && math.IsNaN(wv)) {
					t.Errorf("case %d (%s/%s) rollout %d: server %v, NumPy reference %v", c, cases[c].Mode, cases[c].Scale, i, got, wv)
				}
			}
			compared++
		}
	}
	t.Logf("%d rollouts in %d batches agree with the NumPy reference", compared, len(answers))
}

// refCase is one batch as trl_reference.py reads it.
type refCase struct {
	Mode    string       `json:"mode"`
	Scale   string       `json:"scale"`
	Weights []float64    `json:"weights"`
	Groups  []string     `json:"groups"`
	Scores  [][]*float64 `json:"scores"`
}

// randomParityCase draws batch c: its mode (in turn), scale, 1–4 inline
// "fixed" functions with their weights, and shuffled groups of 2–16
// rollouts whose scores are quarters or null; it returns the batch as the
// reference reads it and as a Score request.
func randomParityCase(rng *rand.Rand, c int, modes map[string]rewardv1.AggregationMode, scales map[string]rewardv1.AggregationScale) (refCase, *rewardv1.ScoreRequest) {
	rc := refCase{Mode: []string{"sum_then_normalize", "normalize_then_sum", "hatchery"}[c%3], Scale: "group"}
	if rc.Mode == "sum_then_normalize" {
		rc.Scale = []string{"group", "batch", "none"}[rng.IntN(3)]
	}
	nfunc := 1 + rng.IntN(4)
	for g := range 1 + rng.IntN(8) {
		for range 2 + rng.IntN(15) {
			rc.Groups = append(rc.Groups, fmt.Sprintf("q%d", g))
		}
	}
	rng.Shuffle(len(rc.Groups), func(i, j int) { rc.Groups[i], rc.Groups[j] = rc.Groups[j], rc.Groups[i] })
	req := &rewardv1.ScoreRequest{BatchId: fmt.Sprint(c), Aggregation: &rewardv1.Aggregation{
		Mode: modes[rc.Mode], Scale: scales[rc.Scale], Weights: map[string]float64{}}}
	nanRate := []float64{0, 0.1, 0.5}[rng.IntN(3)]
	rc.Scores = make([][]*float64, nfunc)
	for k := range nfunc {
		name := fmt.Sprintf("f%d", k)
		params, _ := structpb.NewStruct(map[string]any{"field": name})
		req.Inline = append(req.Inline, &rewardv1.FunctionSpec{Name: name, Kind: "fixed", Params: params})
		w := 1.0
		if rc.Mode != "hatchery" {
			w = math.Round(4*rng.Float64()*100) / 100
		}
		rc.Weights = append(rc.Weights, w)
		req.Aggregation.Weights[name] = w
		rc.Scores[k] = make([]*float64, len(rc.Groups))
	}
	for i, g := range rc.Groups {
		fields := map[string]*structpb.Value{}
		for k := range nfunc {
			if rng.Float64() < nanRate {
				fields[fmt.Sprintf("f%d", k)] = structpb.NewNullValue()
				continue
			}
			v := float64(rng.IntN(5)) / 4
			rc.Scores[k][i] = &v
			fields[fmt.Sprintf("f%d", k)] = structpb.NewNumberValue(v)
		}
		req.Rollouts = append(req.Rollouts, &rewardv1.Rollout{Group: g, Completion: "x", Fields: &structpb.Struct{Fields: fields}})
	}
	return rc, req
}

// runTRLReference runs trl_reference.py on cases and returns its rewards
// and advantages per case (null for NaN).
func runTRLReference(t *testing.T, python string, cases []refCase) []refResult {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"cases": cases})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "aggregate/testdata/trl_reference.py")
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var ref struct{ Results []refResult }
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatal(err)
	}
	return ref.Results
}

// refResult is trl_reference.py's answer on one case.
type refResult struct{ Rewards, Advantages []*float64 }
