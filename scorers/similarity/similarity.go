// Package similarity implements the similarity scorer kind: how close the
// completion is to a reference text, in [0, 1].
//
// Metrics:
//
//   - fuzzy: the Indel similarity of the two texts' code points, 1 −
//     indel/(len₁ + len₂) = 2·LCS/(len₁ + len₂), which is rapidfuzz's
//     fuzz.ratio / 100 (and python-Levenshtein's ratio). Two empty texts
//     score 1, as in rapidfuzz.
//   - rouge_l: the ROUGE-L F-measure (β = 1) of the two texts' white-space
//     tokens: with P = LCS/len(completion) and R = LCS/len(reference),
//     2PR/(P + R) = 2·LCS/(len₁ + len₂), 0 when either is empty, as Google's
//     rouge-score computes it (rouge_scorer, "rougeL"). rouge-score
//     tokenizes differently (lower-cased, non-alphanumerics dropped, optional
//     stemming); here tokens are what Python's str.split gives, after the
//     normalizers, so normalize: [lower, punctuation] comes close to it.
//   - bleu: sentence BLEU with n-grams up to 4, clipped counts, the brevity
//     penalty, effective order and the "exp" smoothing (NIST's geometric
//     sequence, Chen and Cherry's method 3: the k-th order with no match
//     counts as 1/(2^k · total)), on white-space tokens: sacrebleu's
//     sentence_bleu(completion, [reference], tokenize="none") / 100, which
//     uses the same defaults. sacrebleu's default tokenize="13a" also
//     splits punctuation off; use the punctuation normalizer to drop it
//     instead.
//
// The reference comes from the row field ReferenceField: a string, a number,
// or a list of them, in which case the best score over the list is taken
// (sacrebleu, given several references, pools their n-gram counts instead).
// A row without a reference (absent, null, an empty list, or only blank
// strings) is NotApplicable.
//
// fuzzy and rouge_l cost O(n·m/64) word operations for texts of n and m
// code points or tokens (a bit-parallel LCS, as rapidfuzz's); bleu is linear.
// To bound the work, a completion or a reference longer than MaxChars code
// points is an Error, never a long wait; the LCS also checks ctx as it goes.
package similarity

import (
	"context"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/extract"
)

// Params configures a similarity function.
type Params struct {
	// Metric is fuzzy, rouge_l or bleu. Required.
	Metric string `yaml:"metric,omitempty"`
	// ReferenceField is the row field holding the reference text: a string,
	// a number, or a list of them (the best match counts). Default "answer".
	ReferenceField string `yaml:"reference_field,omitempty"`
	// Normalize lists normalizers applied to both texts, in order: strip,
	// lower, whitespace (collapse runs, trim), punctuation (drop Unicode
	// punctuation). Default none, as rapidfuzz, rouge-score (which has its
	// own tokenizer) and sacrebleu with tokenize none.
	Normalize []string `yaml:"normalize,omitempty"`
	// MaxChars bounds the completion and each reference, in code points: a
	// longer text is an Error. In [1, 200,000]; default 20,000.
	MaxChars *int `yaml:"max_chars,omitempty"`
}

// Metrics.
const (
	Fuzzy  = "fuzzy"
	RougeL = "rouge_l"
	BLEU   = "bleu"
)

const (
	defaultMaxChars = 20000
	maxMaxChars     = 200000
)

// Scorer scores rollouts for one similarity function. It is safe for
// concurrent use.
type Scorer struct {
	p         Params // with its defaults
	metric    string
	field     string
	normalize []func(string) string
	maxChars  int

	noReference string
}

// New builds a scorer from p, filling in defaults. Bad parameters are
// reported as a scorers.ParamErrors naming each key.
func New(p Params) (*Scorer, error) {
	var bad scorers.ParamErrors
	scorers.Choice(&bad, "metric", p.Metric, "", Fuzzy, RougeL, BLEU)
	if p.ReferenceField == "" {
		p.ReferenceField = "answer"
	}
	p.MaxChars = scorers.Optional(&bad, "max_chars", p.MaxChars, defaultMaxChars, 1, maxMaxChars)
	s := &Scorer{p: p, metric: p.Metric, field: p.ReferenceField, maxChars: *p.MaxChars}
	for _, name := range p.Normalize {
		f, ok := extract.Normalizer(name)
		if !ok {
			bad.Addf("normalize", "unknown normalizer %q (one of strip, lower, whitespace, punctuation)", name)
			continue
		}
		s.normalize = append(s.normalize, f)
	}
	if err := bad.Err(); err != nil {
		return nil, err
	}
	s.noReference = fmt.Sprintf("no reference in field %q", s.field)
	return s, nil
}

// Params returns the parameters s runs with, defaults filled in. It shares
// their lists with s: the caller must not change them.
func (s *Scorer) Params() Params { return s.p }

// Score returns the similarity of the completion to the closest reference,
// NotApplicable when the row has none, and Error when the reference field
// holds something other than strings or numbers, when a text is longer than
// MaxChars, or when ctx ends during an LCS. A GSM8K-sized pair costs a few
// microseconds; two texts of 20,000 code points, a few milliseconds.
func (s *Scorer) Score(ctx context.Context, r *scorers.Rollout) scorers.Result {
	refs, found, err := scorers.Strings(r, s.field)
	if err != nil {
		return scorers.Errorf("%v", err)
	}
	if !found {
		return scorers.Skip(s.noReference)
	}
	if n, over := s.over(r.Completion); over {
		return scorers.Errorf("the completion has %d characters, over max_chars %d", n, s.maxChars)
	}
	var cand *text
	best, scored := 0.0, false
	for i, ref := range refs {
		if strings.TrimSpace(ref) == "" {
			continue
		}
		if n, over := s.over(ref); over {
			return scorers.Errorf("reference %d in field %q has %d characters, over max_chars %d", i, s.field, n, s.maxChars)
		}
		if cand == nil {
			cand = s.prepare(r.Completion)
		}
		v, err := s.similarity(ctx, cand, s.prepare(ref))
		if err != nil {
			return scorers.Errorf("cancelled: %v", err)
		}
		best, scored = max(best, v), true
		if best == 1 {
			break
		}
	}
	if !scored {
		return scorers.Skip(s.noReference)
	}
	return scorers.Score(best)
}

// over reports whether s is longer than MaxChars code points, and how long.
func (s *Scorer) over(t string) (int, bool) {
	if len(t) <= s.maxChars {
		return 0, false
	}
	n := utf8.RuneCountInString(t)
	return n, n > s.maxChars
}

// text is one side of a comparison, normalized, in the form the metric
// needs.
type text struct {
	s      string
	tokens []string // rouge_l, bleu: the white-space tokens of s
	// bleu: the tokens joined by single spaces, and the offset in joined of
	// each token, then len(joined)+1, so that n-grams are substrings.
	joined string
	starts []int
}

func (s *Scorer) prepare(t string) *text {
	for _, f := range s.normalize {
		t = f(t)
	}
	x := &text{s: t}
	if s.metric == Fuzzy {
		return x
	}
	x.tokens = strings.FieldsFunc(t, isSpace)
	if s.metric == BLEU {
		x.joined = strings.Join(x.tokens, " ")
		x.starts = make([]int, 0, len(x.tokens)+1)
		at := 0
		for _, tok := range x.tokens {
			x.starts = append(x.starts, at)
			at += len(tok) + 1
		}
		x.starts = append(x.starts, at)
	}
	return x
}

// ngram returns the n tokens from token i, joined by single spaces.
func (x *text) ngram(i, n int) string { return x.joined[x.starts[i] : x.starts[i+n]-1] }

func (s *Scorer) similarity(ctx context.Context, cand, ref *text) (float64, error) {
	switch s.metric {
	case Fuzzy:
		return fuzzy(ctx, cand.s, ref.s)
	case RougeL:
		return rougeL(ctx, cand.tokens, ref.tokens)
	default:
		return bleu(cand, ref), nil
	}
}

// fuzzy is rapidfuzz's fuzz.ratio / 100 on code points.
func fuzzy(ctx context.Context, a, b string) (float64, error) {
	if a == b {
		return 1, nil // also two empty texts, as rapidfuzz
	}
	x := runes(make([]int32, 0, len(a)), a)
	y := runes(make([]int32, 0, len(b)), b)
	n, err := lcs(ctx, x, y)
	if err != nil {
		return 0, err
	}
	return 2 * float64(n) / float64(len(x)+len(y)), nil
}

// rougeL is the ROUGE-L F-measure of two token sequences.
func rougeL(ctx context.Context, cand, ref []string) (float64, error) {
	if len(cand) == 0 || len(ref) == 0 {
		return 0, nil
	}
	// Number the distinct tokens, so that the LCS compares integers.
	ids := make(map[string]int32, len(ref))
	number := func(tokens []string) []int32 {
		out := make([]int32, len(tokens))
		for i, t := range tokens {
			id, ok := ids[t]
			if !ok {
				id = int32(len(ids))
				ids[t] = id
			}
			out[i] = id
		}
		return out
	}
	y := number(ref)
	x := number(cand)
	n, err := lcs(ctx, x, y)
	if err != nil {
		return 0, err
	}
	return 2 * float64(n) / float64(len(x)+len(y)), nil
}

// isSpace is the white space of Python's str.split: Unicode White_Space and
// the ASCII separators U+001C–U+001F.
func isSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// bleuOrder is the highest n-gram order of BLEU.
const bleuOrder = 4

// bleu is sacrebleu's sentence BLEU (smooth_method exp, effective order) of
// a candidate against one reference, both tokenized, scaled to [0, 1].
func bleu(cand, ref *text) float64 {
	if len(cand.tokens) == 0 {
		return 0
	}
	refCounts := make(map[string]int32, bleuOrder*len(ref.tokens))
	for n := 1; n <= bleuOrder; n++ {
		for i := 0; i+n <= len(ref.tokens); i++ {
			refCounts[ref.ngram(i, n)]++
		}
	}
	candCounts := make(map[string]int32, bleuOrder*len(cand.tokens))
	var correct, total [bleuOrder]int
	for n := 1; n <= bleuOrder; n++ {
		for i := 0; i+n <= len(cand.tokens); i++ {
			k := cand.ngram(i, n)
			c := candCounts[k] + 1
			candCounts[k] = c
			if c <= refCounts[k] {
				correct[n-1]++
			}
			total[n-1]++
		}
	}
	if correct == [bleuOrder]int{} {
		return 0 // sacrebleu's early stop (its issue #141)
	}
	logSum, order, smooth := 0.0, 0, 1.0
	for n := range bleuOrder {
		if total[n] == 0 {
			break // effective order: only the orders the candidate has
		}
		order = n + 1
		p := float64(correct[n]) / float64(total[n])
		if correct[n] == 0 {
			smooth *= 2
			p = 1 / (smooth * float64(total[n]))
		}
		logSum += math.Log(p)
	}
	bp := 1.0
	if c, r := len(cand.tokens), len(ref.tokens); c < r {
		bp = math.Exp(1 - float64(r)/float64(c))
	}
	return min(1, bp*math.Exp(logSum/float64(order)))
}
