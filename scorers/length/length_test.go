package length_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/length"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

func ptr(f float64) *float64 { return &f }

// row is a rollout as the test data writes it.
type row struct {
	Completion string
	Fields     map[string]any
}

func (r row) rollout(t *testing.T) *scorers.Rollout {
	t.Helper()
	out := &scorers.Rollout{Completion: r.Completion}
	if r.Fields != nil {
		out.Fields = make(map[string]*structpb.Value, len(r.Fields))
		for k, v := range r.Fields {
			pv, err := structpb.NewValue(v)
			if err != nil {
				t.Fatal(err)
			}
			out.Fields[k] = pv
		}
	}
	return out
}

// check compares a result with a number (within 1e-12) or an outcome name.
func check(t *testing.T, got scorers.Result, want any) {
	t.Helper()
	switch want := want.(type) {
	case float64:
		if got.Outcome != scorers.OK || math.Abs(got.Value-want) > 1e-12 {
			t.Errorf("got %v %v (%s), want ok %v", got.Outcome, got.Value, got.Reason, want)
		}
		if got.Value == 0 && math.Signbit(got.Value) {
			t.Errorf("got -0, want 0")
		}
	case string:
		if got.Outcome.String() != want {
			t.Errorf("got %v %v (%s), want %s", got.Outcome, got.Value, got.Reason, want)
		}
	default:
		t.Fatalf("bad want %v", want)
	}
}

func TestCases(t *testing.T) {
	data, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name   string
		Params json.RawMessage
		row
		Want      any
		Group     []row
		WantGroup []any `json:"want_group"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			s, _, err := scorertest.Compile(scorers.Kind(length.New), string(c.Params)) // JSON is YAML
			if err != nil {
				t.Fatalf("params %s: %v", c.Params, err)
			}
			if c.Group == nil {
				check(t, s.Score(ctx, c.rollout(t)), c.Want)
				return
			}
			group := make([]*scorers.Rollout, len(c.Group))
			for i, r := range c.Group {
				group[i] = r.rollout(t)
			}
			out := make([]scorers.Result, len(group))
			s.(scorers.GroupScorer).ScoreGroup(ctx, group, out)
			if len(c.WantGroup) != len(out) {
				t.Fatalf("want_group has %d entries for %d rollouts", len(c.WantGroup), len(out))
			}
			for i := range out {
				check(t, out[i], c.WantGroup[i])
			}
		})
	}
}

func TestReasons(t *testing.T) {
	ctx := context.Background()
	kimi := scorertest.MustNew(t, length.New, length.Params{Mode: length.Kimi})
	if got := kimi.Score(ctx, &scorers.Rollout{}); got.Outcome != scorers.Error || !strings.Contains(got.Reason, "needs the group") {
		t.Errorf("kimi Score: got %+v, want an error saying it needs the group", got)
	}
	cos := scorertest.MustNew(t, length.New, length.Params{Mode: length.Cosine, MaxLength: new(10), CorrectField: "acc"})
	if got := cos.Score(ctx, &scorers.Rollout{}); got.Reason != `no correctness in field "acc"` {
		t.Errorf("no correctness: reason %q", got.Reason)
	}
	tok := scorertest.MustNew(t, length.New, length.Params{Mode: length.Overlong, MaxLength: new(10), Unit: length.Tokens})
	if got := tok.Score(ctx, &scorers.Rollout{}); got.Reason != `no token count in field "completion_tokens"` {
		t.Errorf("no token count: reason %q", got.Reason)
	}
	out := make([]scorers.Result, 2)
	kimi.ScoreGroup(ctx, []*scorers.Rollout{
		{Completion: "a", Fields: map[string]*structpb.Value{"correct": structpb.NewBoolValue(true)}},
		{Completion: "b", Fields: map[string]*structpb.Value{"correct": structpb.NewBoolValue(true)}},
	}, out)
	if out[0].Value != 0 || out[0].Reason != "every rollout of the group has the same length" {
		t.Errorf("equal lengths: got %+v", out[0])
	}
}

func TestRange(t *testing.T) {
	for _, c := range []struct {
		p      length.Params
		lo, hi float64
	}{
		{length.Params{Mode: length.Overlong, MaxLength: new(10)}, -1, 0},
		{length.Params{Mode: length.Overlong, MaxLength: new(10), PenaltyFactor: ptr(2.5)}, -2.5, 0},
		{length.Params{Mode: length.Cosine, MaxLength: new(10)}, -1, 1},
		{length.Params{Mode: length.Cosine, MaxLength: new(10), MinValueWrong: ptr(-3), MaxValueCorrect: ptr(0.75)}, -3, 0.75},
		{length.Params{Mode: length.Kimi}, -0.5, 0.5},
	} {
		if lo, hi := scorertest.MustNew(t, length.New, c.p).Range(); lo != c.lo || hi != c.hi {
			t.Errorf("%+v: Range = [%v, %v], want [%v, %v]", c.p, lo, hi, c.lo, c.hi)
		}
	}
}

// conformanceRollouts are the interesting cases of every mode.
func conformanceRollouts() []*scorers.Rollout {
	t, f := structpb.NewBoolValue(true), structpb.NewBoolValue(false)
	long := strings.Repeat("word ", 5000)
	var rs []*scorers.Rollout
	for _, c := range []string{"", "one", "a b c d e f g", long, "日本語のテキスト", "\xff\xfe"} {
		for _, correct := range []*structpb.Value{t, f, structpb.NewNumberValue(0.7), nil} {
			fields := map[string]*structpb.Value{
				"completion_tokens": structpb.NewNumberValue(float64(len(c))),
			}
			if correct != nil {
				fields["correct"] = correct
			}
			rs = append(rs, &scorers.Rollout{Completion: c, Fields: fields})
		}
	}
	return rs
}

func TestConformance(t *testing.T) {
	for name, p := range map[string]length.Params{
		"overlong":        {Mode: length.Overlong, MaxLength: new(8), BufferLength: new(4)},
		"overlong hard":   {Mode: length.Overlong, MaxLength: new(8)},
		"overlong chars":  {Mode: length.Overlong, Unit: length.Chars, MaxLength: new(100), BufferLength: new(50), PenaltyFactor: ptr(0.3)},
		"overlong tokens": {Mode: length.Overlong, Unit: length.Tokens, MaxLength: new(100), BufferLength: new(50)},
		"cosine":          {Mode: length.Cosine, MaxLength: new(8)},
		"cosine tokens":   {Mode: length.Cosine, Unit: length.Tokens, MaxLength: new(100), MinValueWrong: ptr(-2), MaxValueCorrect: ptr(3)},
		"kimi":            {Mode: length.Kimi},
	} {
		t.Run(name, func(t *testing.T) {
			s := scorertest.MustNew(t, length.New, p)
			lo, hi := s.Range()
			scorertest.Run(t, s, scorertest.Range{Min: lo, Max: hi}, conformanceRollouts(), "correct", "completion_tokens")
		})
	}
}

// TestScoreGroupContract checks ScoreGroup against the GroupScorer contract
// on groups cut from the conformance and junk rollouts: every result is set,
// OK values are finite and in range, the same group gives the same results,
// and in any order.
func TestScoreGroupContract(t *testing.T) {
	all := append(conformanceRollouts(), scorertest.Junk("correct", "completion_tokens")...)
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	for name, p := range map[string]length.Params{
		"kimi":          {Mode: length.Kimi},
		"kimi chars":    {Mode: length.Kimi, Unit: length.Chars},
		"kimi tokens":   {Mode: length.Kimi, Unit: length.Tokens},
		"cosine tokens": {Mode: length.Cosine, Unit: length.Tokens, MaxLength: new(100)},
	} {
		t.Run(name, func(t *testing.T) {
			s := scorertest.MustNew(t, length.New, p)
			lo, hi := s.Range()
			for range 200 {
				group := make([]*scorers.Rollout, 1+rng.IntN(16))
				for i := range group {
					group[i] = all[rng.IntN(len(all))]
				}
				out := make([]scorers.Result, len(group))
				s.ScoreGroup(ctx, group, out)
				for i, res := range out {
					switch res.Outcome {
					case scorers.OK:
						if math.IsNaN(res.Value) || res.Value < lo || res.Value > hi {
							t.Fatalf("rollout %d: value %v outside [%v, %v]", i, res.Value, lo, hi)
						}
					case scorers.NotApplicable, scorers.Error:
						if !math.IsNaN(res.Value) || res.Reason == "" {
							t.Fatalf("rollout %d: %+v", i, res)
						}
					default:
						t.Fatalf("rollout %d: no outcome", i)
					}
				}
				// Reversed, each rollout keeps its result.
				rev := make([]*scorers.Rollout, len(group))
				for i, r := range group {
					rev[len(group)-1-i] = r
				}
				outRev := make([]scorers.Result, len(group))
				s.ScoreGroup(ctx, rev, outRev)
				for i := range out {
					a, b := out[i], outRev[len(group)-1-i]
					if a.Outcome != b.Outcome || a.Reason != b.Reason || a.Value != b.Value && !(math.IsNaN(a.Value) && math.IsNaN(b.Value)) {
						t.Fatalf("rollout %d: %+v in order, %+v reversed", i, a, b)
					}
				}
			}
		})
	}
}

func TestScoreGroupCancelled(t *testing.T) {
	s := scorertest.MustNew(t, length.New, length.Params{Mode: length.Kimi})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := make([]scorers.Result, 3)
	s.ScoreGroup(ctx, []*scorers.Rollout{{}, {}, {}}, out)
	for i, res := range out {
		if res.Outcome != scorers.Error {
			t.Errorf("rollout %d: got %+v, want an error", i, res)
		}
	}
}

func TestNewErrors(t *testing.T) {
	scorertest.RunRefusals(t, length.New, []scorertest.Refusal[length.Params]{
		{Name: "no mode", Params: length.Params{}, Key: "mode"},
		{Name: "unknown mode", Params: length.Params{Mode: "dapo"}, Key: "mode"},
		{Name: "unknown unit", Params: length.Params{Mode: length.Kimi, Unit: "bytes"}, Key: "unit"},
		{Name: "tokens_field without tokens", Params: length.Params{Mode: length.Kimi, TokensField: "n"}, Key: "tokens_field"},
		{Name: "overlong without max_length", Params: length.Params{Mode: length.Overlong, BufferLength: new(4)}, Key: "max_length"},
		{Name: "negative max_length", Params: length.Params{Mode: length.Cosine, MaxLength: new(-1)}, Key: "max_length"},
		{Name: "buffer over max", Params: length.Params{Mode: length.Overlong, MaxLength: new(4), BufferLength: new(5)}, Key: "buffer_length"},
		{Name: "negative buffer", Params: length.Params{Mode: length.Overlong, MaxLength: new(4), BufferLength: new(-1)}, Key: "buffer_length"},
		{Name: "zero penalty", Params: length.Params{Mode: length.Overlong, MaxLength: new(4), PenaltyFactor: ptr(0)}, Key: "penalty_factor"},
		{Name: "NaN penalty", Params: length.Params{Mode: length.Overlong, MaxLength: new(4), PenaltyFactor: ptr(math.NaN())}, Key: "penalty_factor"},
		{Name: "infinite penalty", Params: length.Params{Mode: length.Overlong, MaxLength: new(4), PenaltyFactor: ptr(math.Inf(1))}, Key: "penalty_factor"},
		{Name: "buffer in cosine", Params: length.Params{Mode: length.Cosine, MaxLength: new(4), BufferLength: new(2)}, Key: "buffer_length"},
		{Name: "max_length in kimi", Params: length.Params{Mode: length.Kimi, MaxLength: new(4)}, Key: "max_length"},
		{Name: "correct_field in overlong", Params: length.Params{Mode: length.Overlong, MaxLength: new(4), CorrectField: "c"}, Key: "correct_field"},
		{Name: "cosine value in kimi", Params: length.Params{Mode: length.Kimi, MinValueWrong: ptr(-1)}, Key: "min_value_wrong"},
		{Name: "min over max correct", Params: length.Params{Mode: length.Cosine, MaxLength: new(4), MinValueCorrect: ptr(2)}, Key: "min_value_correct"},
		{Name: "min over max wrong", Params: length.Params{Mode: length.Cosine, MaxLength: new(4), MaxValueWrong: ptr(-2)}, Key: "min_value_wrong"},
		{Name: "infinite value", Params: length.Params{Mode: length.Cosine, MaxLength: new(4), MaxValueCorrect: ptr(math.Inf(1))}, Key: "max_value_correct"},
	})
}

func TestConfig(t *testing.T) {
	s := scorertest.MustCompile(t, scorers.Kind(length.New), `
mode: overlong
unit: tokens
tokens_field: n_tokens
max_length: 20480
buffer_length: 4096
penalty_factor: 1.0
`)
	r := &scorers.Rollout{Fields: map[string]*structpb.Value{"n_tokens": structpb.NewNumberValue(18432)}}
	if got := s.Score(context.Background(), r); got.Outcome != scorers.OK || got.Value != -0.5 {
		t.Errorf("Score = %+v, want -0.5", got)
	}
}
