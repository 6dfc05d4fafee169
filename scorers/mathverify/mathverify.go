// Package mathverify implements the math scorer kind: 1 when the answer
// extracted from the completion is mathematically equivalent to a reference
// answer, else 0. (The package is not called math so as not to shadow the
// standard library's; the kind's config name is "math".)
//
// The comparison is gold first: the reference decides the shape of the
// expected answer, and a vague or hedged prediction cannot win: "5, 6" and
// "at least 5" do not match 5, x > 1 does not match x < 1, {1, 2} does not
// match (1, 2).
//
// Answers are read by a hand-written LaTeX and plain-text parser that
// normalises as it reads: \frac, \dfrac, \tfrac, \sqrt, ^, \cdot and \times,
// \left and \right, \text{} and \mathrm{}, TeX spacing, units and other
// words, degrees, percent and dollar signs (50\% is 50), thousands
// separators (1,000 and 5,\!525), trailing periods, \pi, \infty, \pm,
// Unicode symbols. Number literals keep their meaning: .38 is 0.38,
// 0.\overline{3} is 1/3, 52_8 is 52 in base 8. They are compared by value:
// exactly, in rationals (math/big), while the operations allow it; in
// floating point within a tolerance after (√2, π, sin); at deterministic
// pseudo-random points when they have free variables. Tuples and intervals
// compare in order with their brackets, sets and bare lists ("1, 2", "1, 2,
// and 3") without order, relations up to a positive factor (x > 1 and
// 2x > 2), assignments by their right-hand side (x = 5 and 5), ratios up to
// a positive factor (3:1 and 6:2), clock times as times of day (4:30 pm and
// 16:30), texts as words in any case (\text{odd} and odd), and a number
// written in a base by its digits in the gold's base (52_8 and 52).
//
// What cannot be read is compared as text: when the gold or the answer
// does not parse (or the gold is undefined, as 1/0), the two are equal when
// their normalised texts are (spaces, TeX spacing, \left and \right, \dfrac,
// dollar, degree and percent signs, a trailing period and a \text{} around
// the whole do not count), so an unusual gold still scores 1 against
// itself and an unreadable answer 0 against anything else.
//
// Not supported: complex numbers (i is a variable), units other than by
// dropping them (30° is 30, not π/6; 5 m is 5·m, 5 cm is 5), matrices
// beyond their entries in order, and anything SymPy would need to simplify
// symbolically rather than evaluate.
//
// Every check runs on a step budget counted by the lexer, the parser, the
// evaluator and the comparer: it always ends, without timers or signals,
// and a check that runs out of steps is an Error result, never a 0. A
// check is an Error only when a limit is hit: the step budget, or a limit
// of the parser (nesting, size, ± signs) in a gold that no other gold
// matched.
package mathverify

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

// DefaultStepBudget is the step budget of a check when Params.StepBudget is
// nil. Typical checks spend tens of steps (median 34, under 600 over
// testdata/equivalence.tsv); the costliest steps take about 100 ns, so a
// check that spends the whole default budget takes about 2 ms of CPU.
const DefaultStepBudget = 20_000

// maxStepBudget bounds a configured budget (seconds of work).
const maxStepBudget = 100_000_000

// defaultExtract is the extractor chain of the completion when
// Params.Extract is empty.
var defaultExtract = []string{"bare", "boxed", "answer_tag", "answer_is", "latex", "last_number"}

// Params configures a math function.
type Params struct {
	// ReferenceField is the row field holding the gold answer: a string, a
	// number, or a list of acceptable answers (any one may match). Default
	// "answer".
	ReferenceField string `yaml:"reference_field"`
	// Extract lists the extractors tried on the completion, in order; the
	// first that finds an answer wins. Names: bare (the whole text, when it
	// is one answer with no delimiters, box or tag, on one line, with no
	// words but units: "\frac{1}{2}", "-\frac{7}{3}", "28 pct"; else the
	// chain goes on), boxed (the last \boxed{} or \fbox{}, with the boxes
	// that only a connective joins to it as one list), answer_tag (<answer>…</answer>), answer_is (after the last
	// "answer is" or "answer:"; in a sentence about the value, what follows
	// its first "is" or "are"), latex (the last $…$, $$…$$, \(…\) or
	// \[…\]), gsm8k (after the last ####), last_number, regex, none (the
	// whole completion). Default [bare, boxed, answer_tag, answer_is, latex,
	// last_number]. The answer of answer_tag and answer_is is narrowed to
	// its \boxed{} or math span when it has one. A latex span that cannot
	// be read lets the chain go on over the text after it only, so that an
	// unreadable final answer is 0, never a digit pulled from before it;
	// last_number takes only a number that stands on its own (after white
	// space, "=" or a currency sign), not the 2 of "AZYUK2A".
	Extract []string `yaml:"extract"`
	// ExtractPattern is the regular expression (RE2 syntax) of the regex
	// extractor, as in exact_match: its group named "answer", else its
	// first group, else the whole match, in the last match.
	ExtractPattern string `yaml:"extract_pattern"`
	// ReferenceExtract lists extractors applied to each reference, as
	// Extract is to the completion (for example [boxed] for a MATH
	// solution, [gsm8k] for a GSM8K one). Default: none, the whole
	// reference is the gold answer.
	ReferenceExtract []string `yaml:"reference_extract"`
	// Tolerance is the relative tolerance of comparisons between numbers
	// that are not both integers, in [0, 1). Default 0: exact. 0.333 and
	// 1/3 differ under 0 and match under 0.01; two integers match only when
	// they are equal, whatever the tolerance. Values computed in floating
	// point (√2, π, expressions with variables) always get at least a
	// relative 1e-9 for rounding.
	Tolerance float64 `yaml:"tolerance"`
	// Precision is Math-Verify's float_rounding: when one of two numbers
	// compared is written as a decimal (0.0833333), both are rounded to
	// this many decimal places, in [0, 15], and match when the roundings
	// are equal: 1/12 and 0.0833333333333333 match under 6, 8/3 and 2.6667
	// under 2. Default: none (Math-Verify's default is 6), because a
	// decimal that agrees to 6 places with a surd is not what PRM800K's
	// grader or MATH's human labels accept; numbers then compare exactly,
	// or within Tolerance.
	Precision *int `yaml:"precision"`
	// InequalityForInterval accepts an inequality for a gold interval or
	// set: 1 < x < 3 for (1, 3), x \le 3 for (-\infty, 3]. Default false,
	// as Math-Verify's allow_set_relation_comp. An inequality gold is
	// matched by its interval either way.
	InequalityForInterval bool `yaml:"inequality_for_interval"`
	// RequireSimplified scores 0 an answer equal to the gold but not in
	// simplest form, as MATH's human labels count it: an operation on
	// numbers alone left to carry out (2+3 for 5, 2^3, 2\cdot 3) or a
	// fraction of integers not in lowest terms (\frac{6}{8}, 4/2). Mixed
	// numbers (2\frac{1}{2}) and surds (2\sqrt{2}) count as simplified, and
	// so does \sqrt{8} (not checked). An answer written exactly as the
	// gold is still 1. Default false: Math-Verify and PRM800K's grader.py
	// accept unsimplified answers.
	RequireSimplified bool `yaml:"require_simplified"`
	// StepBudget bounds the work of one check (lexing, parsing, evaluating
	// and comparing the gold answers and the prediction), in steps of at
	// most about 100 ns. Default DefaultStepBudget (20,000: about 2 ms);
	// at most 100,000,000. A check that exhausts it is an Error result.
	StepBudget *int `yaml:"step_budget"`
	// MaxAnswerChars bounds the extracted answer of the completion; a longer
	// one scores 0 ("answer too long") without being parsed. Default
	// DefaultMaxAnswerChars. Without it a policy could learn that a huge or
	// deeply nested answer exhausts the step budget, which is an Error (NaN,
	// advantage 0), and so escapes the 0 a wrong answer earns. At least 1.
	MaxAnswerChars *int `yaml:"max_answer_chars"`
}

// DefaultMaxAnswerChars is the longest extracted answer checked by default.
const DefaultMaxAnswerChars = 1000

// Scorer scores rollouts for one math function. It is safe for concurrent
// use: it holds only its configuration.
type Scorer struct {
	p          Params // with its defaults
	field      string
	extract    []extractor
	refExtract []extractor
	tol        float64
	prec       int // -1: no precision
	budget     int
	maxAnswer  int

	noReference, noRefAnswer string // NotApplicable reasons
}

// extractor finds an answer in a text. A lenient extractor's answer that
// cannot be parsed lets the chain go on over the text after it.
type extractor struct {
	find    func(string) (string, bool)
	lenient bool
	after   func(string) int // lenient: where the text after the answer starts
	bare    bool             // the whole text as one answer, when it reads as one (parseBare)
	box     bool             // a readable "final answer is" statement after the box wins
}

// New builds a scorer from p, filling in defaults. Bad parameters are
// reported as a scorers.ParamErrors naming each key.
func New(p Params) (*Scorer, error) {
	var bad scorers.ParamErrors
	p.MaxAnswerChars = scorers.Optional(&bad, "max_answer_chars", p.MaxAnswerChars, DefaultMaxAnswerChars, 1, math.MaxInt32)
	p.StepBudget = scorers.Optional(&bad, "step_budget", p.StepBudget, DefaultStepBudget, 1, maxStepBudget)
	if p.ReferenceField == "" {
		p.ReferenceField = "answer"
	}
	if len(p.Extract) == 0 {
		p.Extract = defaultExtract
	}
	s := &Scorer{p: p, field: p.ReferenceField, tol: p.Tolerance, prec: -1, budget: *p.StepBudget, maxAnswer: *p.MaxAnswerChars}
	if p.Precision != nil {
		if n := *p.Precision; n < 0 || n > 15 {
			bad.Addf("precision", "%d is not in [0, 15]", n)
		} else {
			s.prec = n
		}
	}
	re := extract.PatternParam(&bad, p.ExtractPattern, p.Extract, p.ReferenceExtract)
	var err error
	set := p.ExtractPattern != ""
	s.extract, err = extractors("extract", p.Extract, re, set)
	bad.Add("extract", err)
	s.refExtract, err = extractors("reference_extract", p.ReferenceExtract, re, set)
	bad.Add("reference_extract", err)
	if t := p.Tolerance; math.IsNaN(t) || t < 0 || t >= 1 {
		bad.Addf("tolerance", "%v is not in [0, 1)", t)
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
		case "bare":
			f = extractor{find: extract.NonBlank, bare: true}
		case "boxed":
			f = extractor{find: boxes, box: true}
		case "answer_tag":
			f.find = func(s string) (string, bool) {
				a, ok := extract.AnswerTag(s)
				return refine(a), ok
			}
		case "answer_is":
			f.find = answerIs
		case "latex":
			f = extractor{find: lastLatex, lenient: true, after: lastLatexEnd}
		case "gsm8k":
			f.find = extract.GSM8K
		case "last_number":
			f.find = lastNumber
		case "none":
			f.find = extract.NonBlank
		case "regex":
			if !patternSet {
				bad.Add(key, errors.New("regex needs extract_pattern"))
			}
			if re != nil {
				f.find = re.Extract
			}
		default:
			bad.Addf(key, "unknown extractor %q (one of bare, boxed, answer_tag, answer_is, latex, gsm8k, last_number, regex, none)", name)
		}
		fs = append(fs, f)
	}
	return fs, bad.Err()
}

// Score returns 1 when the completion's answer is equivalent to one of the
// row's gold answers and 0 when it is not (also 0, with a reason, when no
// answer is found, or when the answer cannot be read and its normalised
// text is not a gold's). It returns NotApplicable when the row has no
// reference, and Error only when a limit is hit: when a reference is beyond
// a limit of the parser (and no other one matched), when the check exhausts
// its step budget, or when ctx is done during a long check; and when the
// reference field holds something other than strings or numbers.
//
// A typical check costs a few microseconds; none costs more than its step
// budget (about 2 ms by default) plus the linear scans of the extractors.
func (s *Scorer) Score(ctx context.Context, r *scorers.Rollout) scorers.Result {
	res, _ := s.check(ctx, r, s.budget)
	return res
}

// check is Score with a given budget; it also returns the steps spent.
func (s *Scorer) check(ctx context.Context, r *scorers.Rollout, limit int) (scorers.Result, int) {
	refs, found, err := scorers.Strings(r, s.field)
	if err != nil {
		return scorers.Errorf("%v", err), 0
	}
	if !found {
		return scorers.Skip(s.noReference), 0
	}
	b := newBudget(ctx, limit)
	var golds []gold
	var goldLimit error // the first reference beyond a limit of the parser
	for _, ref := range refs {
		text, ok, err := s.reference(ref, b)
		if err != nil {
			return s.abort(err, b), b.used()
		}
		if !ok {
			continue
		}
		g, err := s.readGold(text, b)
		if err != nil {
			return s.abort(err, b), b.used()
		}
		if g.tooBig != nil && goldLimit == nil {
			goldLimit = fmt.Errorf("reference %q is beyond a limit of the parser: %w", clip(text), g.tooBig)
		}
		golds = append(golds, g)
	}
	if len(golds) == 0 {
		if len(s.refExtract) > 0 && hasText(refs) {
			return scorers.Skip(s.noRefAnswer), b.used()
		}
		return scorers.Skip(s.noReference), b.used()
	}

	pred, err := s.answer(r.Completion, b)
	if err != nil {
		return s.abort(err, b), b.used()
	}
	if pred.text == "" {
		return scorers.ScoreWhy(0, pred.why), b.used()
	}
	c := newComparer(b, s.tol, s.prec, s.p.InequalityForInterval)
	unsimplified := s.p.RequireSimplified && pred.n != nil && !simplified(pred.n)
	if unsimplified {
		pred.why = fmt.Sprintf("answer %q is not in simplest form (require_simplified)", clip(pred.text))
	}
	for _, g := range golds {
		if g.norm == pred.norm {
			return scorers.Score(1), b.used()
		}
		if g.n == nil || pred.n == nil || unsimplified {
			continue
		}
		ok, err := c.match(g.n, pred.n)
		if err != nil {
			return s.abort(err, b), b.used()
		}
		if ok {
			return scorers.Score(1), b.used()
		}
		if ok, err := decimalCommaMatch(g, pred, c, b); err != nil {
			return s.abort(err, b), b.used()
		} else if ok {
			return scorers.Score(1), b.used()
		}
	}
	if goldLimit != nil {
		// That reference might have matched: not decided.
		return scorers.Errorf("%v", goldLimit), b.used()
	}
	return scorers.ScoreWhy(0, pred.why), b.used()
}

// gold is a reference answer read for comparison.
type gold struct {
	n      *node  // its tree; nil when it cannot be read (or is undefined: 1/0)
	text   string // as written
	norm   string // its normalised text
	tooBig error  // why it is beyond a limit of the parser, when it is
}

// readGold reads a reference answer. A reference that cannot be read is
// kept, compared as normalised text; the error is only to abort the check.
func (s *Scorer) readGold(text string, b *budget) (gold, error) {
	norm, err := normalizeText(text, b)
	if err != nil {
		return gold{}, err
	}
	g := gold{text: text, norm: norm}
	n, err := parse(text, b)
	if err == nil {
		err = validate(n, newComparer(b, s.tol, s.prec, s.p.InequalityForInterval))
	}
	var lim *limitError
	switch {
	case err == nil:
		g.n = n
	case isAbort(err):
		return gold{}, err
	case errors.As(err, &lim):
		g.tooBig = lim
	}
	return g, nil
}

// reference applies the reference extractors to ref; it reports false when
// ref is blank or holds no answer, and an error only to abort the check.
func (s *Scorer) reference(ref string, b *budget) (string, bool, error) {
	if len(s.refExtract) == 0 {
		a, ok := extract.NonBlank(ref)
		return a, ok, nil
	}
	for _, f := range s.refExtract {
		if err := b.spend(scanCost(ref)); err != nil {
			return "", false, err
		}
		a, ok := f.find(ref)
		if ok && f.bare {
			_, err := parseBare(a, b)
			if isAbort(err) {
				return "", false, err
			}
			ok = err == nil
		}
		if ok {
			return a, true, nil
		}
	}
	return "", false, nil
}

// scanCost is the price in steps of one extractor's scan of text: one step
// a KiB. The scans are linear, 1-10 ns a byte, so this prices them below
// the rest: a completion within the server's max_completion_bytes (1 MiB by
// default) costs at most about 50 ms of scanning whatever the budget, and
// long completions do not run out of budget before their answer is read.
func scanCost(text string) int { return len(text)/1024 + 1 }

// prediction is the answer extracted from a completion. text is empty when
// there is none; n is nil when it cannot be read, and then why says so.
type prediction struct {
	text, norm, why string
	n               *node
}

// answer extracts and reads the completion's answer. An answer that a
// lenient extractor finds but that cannot be read lets the chain go on over
// the text after it only, and is the answer when no later extractor finds
// one there: "We have $\foo$ and so 12" answers 12, "So $-[0,1)$." answers
// nothing readable, never a digit from before the span. The error is only
// to abort the check.
func (s *Scorer) answer(completion string, b *budget) (prediction, error) {
	var unread prediction // the first lenient answer that could not be read
	for _, f := range s.extract {
		if err := b.spend(scanCost(completion)); err != nil {
			return prediction{}, err
		}
		text, ok := f.find(completion)
		if !ok {
			continue
		}
		if f.bare && len(text) <= s.maxAnswer {
			n, err := parseBare(text, b)
			switch {
			case err == nil:
				norm, err := normalizeText(text, b)
				if err != nil {
					return prediction{}, err
				}
				return prediction{text: text, norm: norm, n: n}, nil
			case isAbort(err):
				return prediction{}, err
			}
			continue // not a bare answer: the other extractors look
		}
		if f.bare {
			continue // too long to be one answer
		}
		if f.box {
			// The answer a text states last is its answer, as Math-Verify
			// reads it: a readable "final answer is" after the box wins.
			if tail, ok := finalStatement(completion); ok {
				if a, ok := answerIs(tail); ok && len(a) <= s.maxAnswer {
					n, err := parse(a, b)
					if isAbort(err) {
						return prediction{}, err
					}
					if err == nil {
						norm, err := normalizeText(a, b)
						if err != nil {
							return prediction{}, err
						}
						return prediction{text: a, norm: norm, n: n}, nil
					}
				}
			}
		}
		if len(text) > s.maxAnswer {
			return prediction{why: fmt.Sprintf("answer is %d bytes; the limit is %d (max_answer_chars)", len(text), s.maxAnswer)}, nil
		}
		norm, err := normalizeText(text, b)
		if err != nil {
			return prediction{}, err
		}
		n, err := parse(text, b)
		switch {
		case err == nil:
			return prediction{text: text, norm: norm, n: n}, nil
		case isAbort(err):
			return prediction{}, err
		}
		p := prediction{text: text, norm: norm, why: fmt.Sprintf("answer %q not understood: %v", clip(text), err)}
		if !f.lenient {
			return p, nil
		}
		if unread.text == "" {
			unread = p
		}
		completion = completion[f.after(completion):] // the later extractors look after it only
	}
	if unread.text != "" {
		return unread, nil
	}
	return prediction{why: "no answer found"}, nil
}

// decimalCommaMatch reports whether a gold and a prediction match once a
// number written with a decimal comma on one side (1000,99; 2,74; 0,111:
// see decimalComma) is read with a point, the other side being a number.
// Elsewhere a comma parts a list: 1,2 is two numbers.
func decimalCommaMatch(g gold, p prediction, c *comparer, b *budget) (bool, error) {
	if g.n == nil || p.n == nil {
		return false, nil
	}
	gn, pn := g.n, p.n
	if alt, ok := decimalComma(p.text); ok && isNumber(gn) {
		n, err := parse(alt, b)
		if err != nil {
			return false, abortOnly(err)
		}
		pn = n
	} else if alt, ok := decimalComma(g.text); ok && isNumber(pn) {
		n, err := parse(alt, b)
		if err != nil {
			return false, abortOnly(err)
		}
		gn = n
	} else {
		return false, nil
	}
	return c.match(gn, pn)
}

// decimalComma returns s with its comma made a point when s is one number
// written with a decimal comma: digits, a comma, digits, and not the
// thousands of 1,234 (one to three digits, not starting with 0, then
// three).
func decimalComma(s string) (string, bool) {
	t := strings.TrimSpace(s)
	body := strings.TrimPrefix(t, "-")
	intPart, frac, ok := strings.Cut(body, ",")
	if !ok || intPart == "" || frac == "" || !allDigits(intPart) || !allDigits(frac) {
		return "", false
	}
	if len(frac) == 3 && len(intPart) <= 3 && intPart[0] != '0' {
		return "", false // thousands
	}
	return strings.Replace(t, ",", ".", 1), true
}

// isNumber reports whether n is a number, possibly negated.
func isNumber(n *node) bool {
	if n.kind == nNeg {
		n = n.args[0]
	}
	return n.kind == nNum
}

// abortOnly returns err when it ends the check, and nil for an answer that
// does not read.
func abortOnly(err error) error {
	if isAbort(err) {
		return err
	}
	return nil
}

// validate checks that a gold answer is defined: its expressions without
// free variables evaluate to numbers (1/0 is not a gold answer).
func validate(g *node, c *comparer) error {
	if g.isScalar() {
		if g.hasVars() {
			return nil
		}
		v, err := c.ev.exact(g)
		if err != nil {
			return err
		}
		if math.IsNaN(v.f) {
			return fmt.Errorf("%v is undefined", clipNode(g))
		}
		return nil
	}
	for _, a := range g.args {
		if err := validate(a, c); err != nil {
			return err
		}
	}
	return nil
}

// isAbort reports whether err ends the check: the budget is spent or the
// context is done.
func isAbort(err error) bool {
	return errors.Is(err, errBudget) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func (s *Scorer) abort(err error, b *budget) scorers.Result {
	if errors.Is(err, errBudget) {
		return scorers.Errorf("math check exhausted its step budget of %d steps", b.limit)
	}
	return scorers.Errorf("math check interrupted: %v", err)
}

// clip shortens a text quoted in a reason.
func clip(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}

func clipNode(n *node) string { return clip(n.String()) }

func hasText(refs []string) bool {
	return slices.ContainsFunc(refs, func(r string) bool { return strings.TrimSpace(r) != "" })
}
