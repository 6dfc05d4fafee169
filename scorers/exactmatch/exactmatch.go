// Package exactmatch implements the exact_match scorer kind: 1 when the
// answer extracted from the completion equals one of the row's reference
// answers after normalization, else 0.
package exactmatch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/extract"
)

// Params configures an exact_match function.
type Params struct {
	// ReferenceField is the row field holding the reference answer: a
	// string, a number, or a list of acceptable answers. Default "answer".
	ReferenceField string `yaml:"reference_field"`
	// Extract lists the extractors tried on the completion, in order; the
	// first that finds an answer wins. Names: boxed, answer_tag, gsm8k,
	// last_number, regex, none (the whole completion). Default [none].
	Extract []string `yaml:"extract"`
	// ExtractPattern is the regular expression (RE2 syntax) of the regex
	// extractor: the answer is its group named "answer", else its first
	// group, else the whole match, in the last match. It is required by
	// regex, and refused without it; extract and reference_extract share
	// it.
	ExtractPattern string `yaml:"extract_pattern"`
	// Normalize lists the normalizers applied to both sides, in order:
	// strip, lower, whitespace, punctuation, numeric. Default [strip].
	// With numeric, two answers that both read as numbers compare as
	// numbers (see extract.ParseNumber; the number is read from the
	// extracted text before the other normalizers); otherwise they compare
	// as strings after the other normalizers.
	Normalize []string `yaml:"normalize"`
	// Tolerance is the relative tolerance of numeric comparisons, in
	// [0, 1); 0 means exact. It needs the numeric normalizer.
	Tolerance float64 `yaml:"tolerance"`
	// ReferenceExtract lists extractors applied to each reference, as
	// Extract is to the completion (for example [gsm8k] when the reference
	// is a whole GSM8K solution ending in "#### 18"). Default: none, the
	// reference is used as it is.
	ReferenceExtract []string `yaml:"reference_extract"`
}

// Scorer scores rollouts for one exact_match function. It is safe for
// concurrent use.
type Scorer struct {
	p          Params // with its defaults
	field      string
	extract    []extractor
	refExtract []extractor
	normalize  []func(string) string
	numeric    bool
	tolerance  float64

	noReference, noRefAnswer string // NotApplicable reasons
}

// extractor finds an answer in a text; see package extract.
type extractor func(string) (string, bool)

// New builds a scorer from p, filling in defaults. Bad parameters are
// reported as a scorers.ParamErrors naming each key.
func New(p Params) (*Scorer, error) {
	if p.ReferenceField == "" {
		p.ReferenceField = "answer"
	}
	if len(p.Extract) == 0 {
		p.Extract = []string{"none"}
	}
	if len(p.Normalize) == 0 {
		p.Normalize = []string{"strip"}
	}
	s := &Scorer{p: p, field: p.ReferenceField, tolerance: p.Tolerance}
	var bad scorers.ParamErrors
	re := extract.PatternParam(&bad, p.ExtractPattern, p.Extract, p.ReferenceExtract)
	var err error
	set := p.ExtractPattern != ""
	s.extract, err = extractors("extract", p.Extract, re, set)
	bad.Add("extract", err)
	s.refExtract, err = extractors("reference_extract", p.ReferenceExtract, re, set)
	bad.Add("reference_extract", err)
	for _, name := range p.Normalize {
		if name == "numeric" {
			s.numeric = true
			continue
		}
		f, ok := extract.Normalizer(name)
		if !ok {
			bad.Addf("normalize", "unknown normalizer %q (one of strip, lower, whitespace, punctuation, numeric)", name)
			continue
		}
		s.normalize = append(s.normalize, f)
	}
	switch t := p.Tolerance; {
	case math.IsNaN(t) || t < 0 || t >= 1:
		bad.Addf("tolerance", "%v is not in [0, 1)", t)
	case t > 0 && !s.numeric:
		bad.Add("tolerance", errors.New("needs the numeric normalizer"))
	}
	if err := bad.Err(); err != nil {
		return nil, err
	}
	s.noReference = fmt.Sprintf("no reference in field %q", s.field)
	s.noRefAnswer = fmt.Sprintf("no answer found in the reference in field %q", s.field)
	return s, nil
}

// Params returns the parameters s runs with, defaults filled in. It shares
// their lists with s: the caller must not change them.
func (s *Scorer) Params() Params { return s.p }

// extractors resolves a list of extractor names; key is the parameter that
// holds them. re is the compiled extract_pattern, nil when there is none or
// it does not compile (patternSet tells which: only the first is a problem
// of key's).
func extractors(key string, names []string, re *extract.Regexp, patternSet bool) ([]extractor, error) {
	var bad scorers.ParamErrors
	fs := make([]extractor, 0, len(names))
	for _, name := range names {
		var f extractor
		switch name {
		case "boxed":
			f = extract.Boxed
		case "first_boxed":
			f = extract.FirstBoxed
		case "answer_tag":
			f = extract.AnswerTag
		case "gsm8k":
			f = extract.GSM8K
		case "last_number":
			f = extract.LastNumber
		case "none":
			f = extract.NonBlank
		case "regex":
			if !patternSet {
				bad.Add(key, errors.New("regex needs extract_pattern"))
			}
			if re != nil {
				f = re.Extract
			}
		default:
			bad.Addf(key, "unknown extractor %q (one of boxed, first_boxed, answer_tag, gsm8k, last_number, regex, none)", name)
		}
		fs = append(fs, f)
	}
	return fs, bad.Err()
}

// Score returns 1 when the completion's answer matches a reference, 0 when it
// does not or when no answer is found, NotApplicable when the row has no
// reference, and Error when the reference field holds something other than
// strings or numbers. It costs a few hundred nanoseconds of string scanning
// per rollout (microseconds with the regex extractor) and does not look at
// ctx.
func (s *Scorer) Score(_ context.Context, r *scorers.Rollout) scorers.Result {
	refs, found, err := scorers.Strings(r, s.field)
	if err != nil {
		return scorers.Errorf("%v", err)
	}
	if !found {
		return scorers.Skip(r.WhyMissing(s.noReference, s.field))
	}
	var ans answer
	answered := false // ans holds the completion's answer
	for _, ref := range refs {
		ref, ok := s.reference(ref)
		if !ok {
			continue
		}
		if !answered {
			text, ok := find(s.extract, r.Completion)
			if !ok {
				return scorers.ScoreWhy(0, "no answer found")
			}
			ans, answered = s.prepare(text), true
		}
		if s.match(ans, s.prepare(ref)) {
			return scorers.Score(1)
		}
	}
	switch {
	case answered:
		return scorers.Score(0)
	case len(s.refExtract) > 0 && hasText(refs):
		return scorers.Skip(s.noRefAnswer)
	default:
		return scorers.Skip(s.noReference)
	}
}

// reference applies the reference extractors to ref; it reports false when
// ref is blank or holds no answer.
func (s *Scorer) reference(ref string) (string, bool) {
	if len(s.refExtract) == 0 {
		return extract.NonBlank(ref)
	}
	return find(s.refExtract, ref)
}

// answer is a text ready for comparison.
type answer struct {
	text   string // after the string normalizers
	num    extract.Number
	number bool // num holds the text's value
}

func (s *Scorer) prepare(text string) answer {
	var a answer
	if s.numeric {
		a.num, a.number = extract.ParseNumber(text)
	}
	for _, f := range s.normalize {
		text = f(text)
	}
	a.text = text
	return a
}

func (s *Scorer) match(a, b answer) bool {
	if a.number && b.number {
		return a.num.Equal(b.num, s.tolerance)
	}
	return a.text == b.text && a.text != "" // "?" and "!" are not equal once punctuation is gone
}

// find returns the answer of the first extractor that finds one.
func find(fs []extractor, text string) (string, bool) {
	for _, f := range fs {
		if ans, ok := f(text); ok {
			return ans, true
		}
	}
	return "", false
}

func hasText(refs []string) bool {
	return slices.ContainsFunc(refs, func(r string) bool { return strings.TrimSpace(r) != "" })
}
