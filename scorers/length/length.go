// Package length implements the length scorer kind: rewards and penalties
// that shape how long completions are.
//
// Modes:
//
//   - overlong: DAPO's soft overlong punishment (Yu et al. 2025, Eq. 13), as
//     verl's DAPORewardManager (overlong_buffer: len, penalty_factor) and
//     open-r1/TRL's get_soft_overlong_punishment compute it. With L the
//     length, Lmax = MaxLength and Lbuf = BufferLength: 0 while L ≤ Lmax −
//     Lbuf, then falling linearly to −PenaltyFactor at L = Lmax, and
//     −PenaltyFactor beyond. Range [−PenaltyFactor, 0]. verl never sees a
//     response longer than Lmax (the generator truncates it) and does not
//     clamp; rewardd measures text that may be longer and clamps, as the
//     paper and open-r1 do. BufferLength 0 is a hard cut-off at Lmax, as
//     open-r1 with soft_punish_cache 0.
//   - cosine: open-r1's get_cosine_scaled_reward (from "Demystifying Long
//     Chain-of-Thought Reasoning", Yeo et al. 2025): with p = min(L, Lmax)/Lmax
//     and c = cos(p·π), a correct completion scores
//     min_c + ½(max_c − min_c)(1 + c), falling from max_value_correct at
//     length 0 to min_value_correct at Lmax; a wrong one scores
//     max_w + ½(min_w − max_w)(1 + c), rising from min_value_wrong at length 0
//     to max_value_wrong at Lmax (a long wrong answer is penalised less, to
//     keep exploring). open-r1 does not clamp p, so past Lmax its cosine
//     turns back up (open-r1 issue #312); rewardd clamps at Lmax.
//   - kimi: the Kimi k1.5 length penalty (Kimi Team 2025), as open-r1's
//     len_reward: within a group, λ = 0.5 − (L − Lmin)/(Lmax − Lmin); a correct
//     completion scores λ, a wrong one min(0, λ); every completion scores 0
//     when all lengths are equal. Range [−0.5, 0.5]. open-r1 takes Lmin and
//     Lmax over the whole batch it is handed; rewardd takes them over the
//     group (the completions of one prompt), as the paper does. This mode
//     needs the group: see scorers.GroupScorer.
//
// # Length
//
// Length is counted in Unit: words (the default: runs of non-whitespace,
// as Python's str.split counts them), chars (Unicode code points, as Python's
// len), or tokens, read from a row field the trainer fills with the
// completion's token count (TokensField, default completion_tokens; a number,
// or a list such as TRL's completion_ids, whose length is taken). rewardd has
// no tokenizer: the model's tokenizer lives in the trainer, and one written
// in Go would drift from it. Words are the unit that needs nothing from the
// trainer and grows with tokens (English prose runs at roughly 1.3 tokens a
// word, mathematics at more); when limits must match the trainer's
// max_completion_length exactly, send the token count and use tokens. open-r1's cosine and kimi rewards
// count characters (len(content)); use chars to reproduce their numbers.
//
// # Correctness
//
// cosine and kimi multiply length by correctness, which another function
// (exact_match, math) decides. They read it from the row field CorrectField
// (default "correct"): a bool, or a number that counts as correct when it is
// at least 0.5 (so 1/0 and DAPO's 1/−1 both work). A rollout without it is
// NotApplicable. Without a correctness field, the additive kind of shaping
// still works: serve overlong next to the accuracy function and let the
// config's weights combine them.
package length

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/extract"
)

// Params configures a length function.
type Params struct {
	// Mode is overlong, cosine or kimi. Required.
	Mode string `yaml:"mode,omitempty"`
	// Unit is what length counts: words (default), chars, or tokens.
	Unit string `yaml:"unit,omitempty"`
	// TokensField is the row field holding the completion's token count
	// with unit tokens. Default completion_tokens.
	TokensField string `yaml:"tokens_field,omitempty"`

	// MaxLength is Lmax, in Unit: where the overlong penalty reaches its
	// floor, or where the cosine schedule ends. Required by overlong and
	// cosine.
	MaxLength *int `yaml:"max_length,omitempty"`
	// BufferLength is DAPO's overlong buffer (open-r1's soft_punish_cache):
	// the penalty starts at MaxLength − BufferLength. In [0, MaxLength];
	// 0 is a hard cut-off. overlong only.
	BufferLength *int `yaml:"buffer_length,omitempty"`
	// PenaltyFactor scales the overlong penalty; its floor is
	// −PenaltyFactor. Positive; default 1. overlong only.
	PenaltyFactor *float64 `yaml:"penalty_factor,omitempty"`

	// CorrectField is the row field saying whether the completion is
	// correct. Default "correct". cosine and kimi only.
	CorrectField string `yaml:"correct_field,omitempty"`
	// The cosine schedule's ends (open-r1's names and defaults): a correct
	// completion scores from MaxValueCorrect (length 0) down to
	// MinValueCorrect (MaxLength and beyond), a wrong one from
	// MinValueWrong (length 0) up to MaxValueWrong. Defaults 0.5, 1, −1,
	// −0.5. Each min must not exceed its max. cosine only.
	MinValueCorrect *float64 `yaml:"min_value_correct,omitempty"`
	MaxValueCorrect *float64 `yaml:"max_value_correct,omitempty"`
	MinValueWrong   *float64 `yaml:"min_value_wrong,omitempty"`
	MaxValueWrong   *float64 `yaml:"max_value_wrong,omitempty"`
}

// Modes.
const (
	Overlong = "overlong"
	Cosine   = "cosine"
	Kimi     = "kimi"
)

// Units.
const (
	Words  = "words"
	Chars  = "chars"
	Tokens = "tokens"
)

// *Scorer implements scorers.GroupScorer in every mode: the per-rollout
// modes score each rollout of the group in turn; kimi needs the group.
var _ scorers.GroupScorer = (*Scorer)(nil)

// Scorer scores rollouts for one length function. It is safe for concurrent
// use.
type Scorer struct {
	p           Params // with its defaults
	mode, unit  string
	tokensField string // unit tokens

	maxLength, bufferLength int     // overlong, cosine
	penalty                 float64 // overlong

	correctField                               string  // cosine, kimi
	minCorrect, maxCorrect, minWrong, maxWrong float64 // cosine

	noCorrect, noTokens string // reasons, formatted once
}

// Reasons.
const (
	needsGroup   = "kimi length needs the group: the engine must call ScoreGroup with every rollout of the prompt"
	otherLength  = "the length of another rollout of the group is unknown"
	equalLengths = "every rollout of the group has the same length"
)

// New builds a scorer from p, filling in defaults. Bad parameters are
// reported as a scorers.ParamErrors naming each key.
func New(p Params) (*Scorer, error) {
	var bad scorers.ParamErrors
	known := p.checkModeAndUnit(&bad)
	p.refuseOtherModes(&bad, known)
	p.checkRanges(&bad)
	if err := bad.Err(); err != nil {
		return nil, err
	}
	s := &Scorer{p: p, mode: p.Mode, unit: p.Unit, tokensField: p.TokensField, correctField: p.CorrectField}
	if p.MaxLength != nil {
		s.maxLength = *p.MaxLength
	}
	switch p.Mode {
	case Overlong:
		s.bufferLength, s.penalty = *p.BufferLength, *p.PenaltyFactor
	case Cosine:
		s.minCorrect, s.maxCorrect = *p.MinValueCorrect, *p.MaxValueCorrect
		s.minWrong, s.maxWrong = *p.MinValueWrong, *p.MaxValueWrong
	}
	s.noCorrect = fmt.Sprintf("no correctness in field %q", s.correctField)
	s.noTokens = fmt.Sprintf("no token count in field %q", s.tokensField)
	return s, nil
}

// checkModeAndUnit checks the mode, unit and tokens field, filling in the
// defaults of the last two; known reports whether the mode is one of the
// modes.
func (p *Params) checkModeAndUnit(bad *scorers.ParamErrors) (known bool) {
	_, known = scorers.Choice(bad, "mode", p.Mode, "", Overlong, Cosine, Kimi)
	p.Unit, _ = scorers.Choice(bad, "unit", p.Unit, Words, Words, Chars, Tokens)
	switch {
	case p.Unit == Tokens && p.TokensField == "":
		p.TokensField = "completion_tokens"
	case p.Unit != Tokens && p.TokensField != "":
		bad.Add("tokens_field", errors.New("needs unit: tokens"))
	}
	return known
}

// refuseOtherModes refuses each parameter set for a known mode it does not
// belong to, so that a typo in the mode does not silently ignore half the
// config.
func (p *Params) refuseOtherModes(bad *scorers.ParamErrors, known bool) {
	for _, c := range []struct {
		key   string
		set   bool
		modes []string
	}{
		{"max_length", p.MaxLength != nil, []string{Overlong, Cosine}},
		{"buffer_length", p.BufferLength != nil, []string{Overlong}},
		{"penalty_factor", p.PenaltyFactor != nil, []string{Overlong}},
		{"correct_field", p.CorrectField != "", []string{Cosine, Kimi}},
		{"min_value_correct", p.MinValueCorrect != nil, []string{Cosine}},
		{"max_value_correct", p.MaxValueCorrect != nil, []string{Cosine}},
		{"min_value_wrong", p.MinValueWrong != nil, []string{Cosine}},
		{"max_value_wrong", p.MaxValueWrong != nil, []string{Cosine}},
	} {
		if c.set && known && !slices.Contains(c.modes, p.Mode) {
			bad.Addf(c.key, "applies only to mode %s", strings.Join(c.modes, " or "))
		}
	}
}

// checkRanges checks the values of the mode's parameters and fills in
// their defaults.
func (p *Params) checkRanges(bad *scorers.ParamErrors) {
	if p.Mode == Overlong || p.Mode == Cosine {
		if p.MaxLength == nil {
			bad.Addf("max_length", "is required by mode %s", p.Mode)
			p.MaxLength = new(1) // to check the other parameters
		}
		p.MaxLength = scorers.Optional(bad, "max_length", p.MaxLength, 1, 1, math.MaxInt)
	}
	if p.Mode == Overlong {
		p.BufferLength = scorers.Optional(bad, "buffer_length", p.BufferLength, 0, 0, *p.MaxLength)
		if f := p.PenaltyFactor; f != nil && (!(*f > 0) || math.IsInf(*f, 0)) {
			bad.Addf("penalty_factor", "%v is not a positive number", *f)
		}
		if p.PenaltyFactor == nil {
			p.PenaltyFactor = new(1.0)
		}
	}
	if p.Mode == Cosine {
		p.MinValueCorrect = value(bad, "min_value_correct", p.MinValueCorrect, 0.5)
		p.MaxValueCorrect = value(bad, "max_value_correct", p.MaxValueCorrect, 1)
		p.MinValueWrong = value(bad, "min_value_wrong", p.MinValueWrong, -1)
		p.MaxValueWrong = value(bad, "max_value_wrong", p.MaxValueWrong, -0.5)
		if *p.MinValueCorrect > *p.MaxValueCorrect {
			bad.Addf("min_value_correct", "%v exceeds max_value_correct %v", *p.MinValueCorrect, *p.MaxValueCorrect)
		}
		if *p.MinValueWrong > *p.MaxValueWrong {
			bad.Addf("min_value_wrong", "%v exceeds max_value_wrong %v", *p.MinValueWrong, *p.MaxValueWrong)
		}
	}
	if (p.Mode == Cosine || p.Mode == Kimi) && p.CorrectField == "" {
		p.CorrectField = "correct"
	}
}

// Params returns the parameters s runs with, defaults filled in: only those
// of its mode and unit.
func (s *Scorer) Params() Params { return s.p }

// value fills in one of the cosine schedule's ends: def when v is nil, and a
// problem in bad when v is not finite.
func value(bad *scorers.ParamErrors, key string, v *float64, def float64) *float64 {
	if v == nil {
		return &def
	}
	if math.IsNaN(*v) || math.IsInf(*v, 0) {
		bad.Addf(key, "%v is not a finite number", *v)
	}
	return v
}

// Range returns the closed interval every OK value lies in.
func (s *Scorer) Range() (lo, hi float64) {
	switch s.mode {
	case Overlong:
		return -s.penalty, 0
	case Cosine:
		return min(s.minCorrect, s.minWrong), max(s.maxCorrect, s.maxWrong)
	default:
		return -0.5, 0.5
	}
}

// Score scores one rollout in modes overlong and cosine. In mode kimi it
// returns an Error result: that reward needs the group (see ScoreGroup).
// It costs one pass over the completion (none with unit tokens) and does not
// look at ctx.
func (s *Scorer) Score(_ context.Context, r *scorers.Rollout) scorers.Result {
	if s.mode == Kimi {
		return scorers.Errorf(needsGroup)
	}
	n, bad := s.measure(r)
	if bad.Outcome != 0 {
		return bad
	}
	if s.mode == Overlong {
		return scorers.Score(s.overlong(n))
	}
	correct, bad := s.correct(r)
	if bad.Outcome != 0 {
		return bad
	}
	return scorers.Score(s.cosine(n, correct))
}

// ScoreGroup scores every rollout of one group into out (see scorers.GroupScorer).
// In modes overlong and cosine each rollout is scored alone, as Score does.
// In mode kimi, a rollout whose length cannot be measured (unit tokens
// without a usable count) is an Error, and so is every other rollout of the
// group, since the group's shortest and longest are then unknown; a rollout
// without correctness is NotApplicable and its length still counts.
func (s *Scorer) ScoreGroup(ctx context.Context, group []*scorers.Rollout, out []scorers.Result) {
	if len(out) != len(group) {
		panic(fmt.Sprintf("length: ScoreGroup with %d rollouts and %d results", len(group), len(out)))
	}
	if s.mode != Kimi {
		for i, r := range group {
			out[i] = s.Score(ctx, r)
		}
		return
	}
	if err := ctx.Err(); err != nil {
		for i := range out {
			out[i] = scorers.Errorf("cancelled: %v", err)
		}
		return
	}
	lengths := make([]int, len(group))
	lo, hi, failed := math.MaxInt, -1, false
	for i, r := range group {
		n, bad := s.measure(r)
		if bad.Outcome != 0 {
			out[i], failed = bad, true
			continue
		}
		lengths[i] = n
		lo, hi = min(lo, n), max(hi, n)
	}
	for i, r := range group {
		if failed {
			if out[i].Outcome == 0 {
				out[i] = scorers.Errorf(otherLength)
			}
			continue
		}
		correct, bad := s.correct(r)
		switch {
		case bad.Outcome != 0:
			out[i] = bad
		case lo == hi:
			out[i] = scorers.ScoreWhy(0, equalLengths)
		default:
			out[i] = scorers.Score(kimi(lengths[i], lo, hi, correct))
		}
	}
}

// overlong is DAPO's soft overlong punishment of a completion of n units.
func (s *Scorer) overlong(n int) float64 {
	start := s.maxLength - s.bufferLength
	switch {
	case n <= start:
		return 0
	case n >= s.maxLength:
		return -s.penalty
	default: // start < n < maxLength, so bufferLength > 0
		return -s.penalty * float64(n-start) / float64(s.bufferLength)
	}
}

// cosine is open-r1's cosine-scaled reward of a completion of n units,
// with the progress clamped at MaxLength.
func (s *Scorer) cosine(n int, correct bool) float64 {
	progress := float64(min(n, s.maxLength)) / float64(s.maxLength)
	c := math.Cos(progress * math.Pi)
	lo, hi := s.minCorrect, s.maxCorrect
	start, end := hi, lo // the values at length 0 and at MaxLength
	if !correct {
		// open-r1 swaps the wrong ends, so that length raises the value.
		lo, hi = s.minWrong, s.maxWrong
		start, end = lo, hi
	}
	v := end + 0.5*(start-end)*(1+c)
	return min(max(v, lo), hi) // rounding must not leave the range
}

// kimi is the Kimi 1.5 length reward of a completion of n units in a group
// whose lengths span [lo, hi], lo < hi.
func kimi(n, lo, hi int, correct bool) float64 {
	lambda := 0.5 - float64(n-lo)/float64(hi-lo)
	if !correct {
		lambda = min(0, lambda)
	}
	return lambda + 0 // no −0
}

// measure returns the length of r's completion in s's unit, or a non-zero
// Result when it cannot be measured.
func (s *Scorer) measure(r *scorers.Rollout) (int, scorers.Result) {
	switch s.unit {
	case Chars:
		return utf8.RuneCountInString(r.Completion), scorers.Result{}
	case Tokens:
		return s.tokens(r)
	default:
		return countWords(r.Completion), scorers.Result{}
	}
}

// tokens reads the token count from s.tokensField: a non-negative integer,
// or a list (of token ids) whose length is the count.
func (s *Scorer) tokens(r *scorers.Rollout) (int, scorers.Result) {
	v, ok := r.Field(s.tokensField)
	if !ok {
		return 0, scorers.Errorf("%s", r.WhyMissing(s.noTokens, s.tokensField))
	}
	switch k := v.Kind.(type) {
	case *structpb.Value_NumberValue:
		f := k.NumberValue
		if f < 0 || f != math.Trunc(f) || f > 1<<53 { // NaN fails f == Trunc(f)
			return 0, scorers.Errorf("field %q holds %v, want a non-negative whole number of tokens", s.tokensField, f)
		}
		return int(f), scorers.Result{}
	case *structpb.Value_ListValue:
		return len(k.ListValue.GetValues()), scorers.Result{}
	default:
		return 0, scorers.Errorf("field %q holds %s, want a number of tokens or a list of token ids", s.tokensField, scorers.KindName(v))
	}
}

// correct reads the correctness of r from s.correctField, or returns a
// non-zero Result when it is missing (NotApplicable) or unusable (Error).
func (s *Scorer) correct(r *scorers.Rollout) (bool, scorers.Result) {
	v, ok := r.Field(s.correctField)
	if !ok {
		return false, scorers.Skip(r.WhyMissing(s.noCorrect, s.correctField))
	}
	switch k := v.Kind.(type) {
	case *structpb.Value_BoolValue:
		return k.BoolValue, scorers.Result{}
	case *structpb.Value_NumberValue:
		f := k.NumberValue
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false, scorers.Errorf("field %q holds the non-finite number %v", s.correctField, f)
		}
		return f >= 0.5, scorers.Result{}
	default:
		return false, scorers.Errorf("field %q holds %s, want a bool or a number", s.correctField, scorers.KindName(v))
	}
}

// countWords counts the runs of non-whitespace in s, as len(s.split()) does
// in Python: white space is Unicode White_Space plus the ASCII separators
// U+001C–U+001F, which Python also splits on. An invalid UTF-8 byte is not
// white space.
func countWords(s string) int {
	// A word starts at a non-space after a space (or at the start). ASCII
	// is counted without a branch per byte: prev is 1 after a space.
	n, prev := 0, 1
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			sp := int(extract.PySpace(c))
			n += prev &^ sp
			prev = sp
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		sp := 0
		if unicode.IsSpace(r) {
			sp = 1
		}
		n += prev &^ sp
		prev = sp
		i += size
	}
	return n
}
