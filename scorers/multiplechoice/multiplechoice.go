// Package multiplechoice implements the multiple_choice scorer kind: the
// letter a completion chooses (GPQA, MMLU, MMLU-Pro, ARC style) against
// the row's correct letter.
//
// The chosen letter is read from the forms models write, the first form
// found deciding, and within a form its last occurrence (a model that
// changes its mind ends with the answer it keeps):
//
//  1. \boxed{C}, \boxed{(C)}, \boxed{\text{C}}, $\boxed{\textbf{C}}$;
//  2. <answer>C</answer>;
//  3. an answer statement: "The answer is (C)", "Answer: C", "**Final
//     Answer:** C", "the correct option is C", "I choose C", "Answer - C";
//  4. a letter said to be right: "C is correct", "Option C is the right
//     answer", "(C) is the best choice";
//  5. the last line, when it is a lone letter ("C", "(C)", "**C.**") or an
//     option as the choices list it ("C) 42", "(C) 42", "C. 42").
//
// A letter is a capital of Letters (default ABCD; ABCDEFGHIJ for MMLU-Pro),
// alone as a word: "A" in "A bit" is not one, nor "I" in "I think" unless
// I is a letter of the set and nothing else is. Lowercase letters count
// only where they cannot be prose: boxed, tagged, or in parentheses. A
// statement naming several letters ("A or B", "A and C", "(A), (C)") is 0
// with the reason "several letters"; so is a completion that answers
// nothing, with "no answer" or, when it says it cannot tell ("I don't
// know", "cannot be determined", "none of the above"), "abstained". A
// letter outside Letters in a statement ("The answer is E" with ABCD) is 0
// with a reason saying so.
//
// The correct letter comes from ReferenceField: a letter ("C", "(c)",
// "C."), a 0-based index into Letters (MMLU's answer column), or a list of
// acceptable letters. A row without it is NotApplicable; one whose
// reference is not a letter of the set is an Error.
package multiplechoice

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
)

// Params configures a multiple_choice function.
type Params struct {
	// ReferenceField is the row field with the correct letter. Default
	// answer.
	ReferenceField string `yaml:"reference_field,omitempty"`
	// Letters are the option letters, in order, capitals A–Z. Default ABCD.
	Letters string `yaml:"letters,omitempty"`
}

// Scorer scores multiple-choice answers. It is safe for concurrent use.
type Scorer struct {
	p       Params
	letters string
	noRef   string
	// set[c-'A'] says whether capital c is a letter.
	set [26]bool
}

// New builds a scorer from p, filling in defaults.
func New(p Params) (*Scorer, error) {
	var bad scorers.ParamErrors
	if p.ReferenceField == "" {
		p.ReferenceField = "answer"
	}
	if p.Letters == "" {
		p.Letters = "ABCD"
	}
	s := &Scorer{p: p, letters: p.Letters, noRef: fmt.Sprintf("no reference in field %q", p.ReferenceField)}
	for _, c := range p.Letters {
		switch {
		case c < 'A' || c > 'Z':
			bad.Addf("letters", "%q is not a capital A-Z", c)
		case s.set[c-'A']:
			bad.Addf("letters", "%q is there twice", c)
		default:
			s.set[c-'A'] = true
		}
	}
	if len(p.Letters) < 2 {
		bad.Addf("letters", "%q: a choice needs two letters at least", p.Letters)
	}
	if err := bad.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// Params returns the parameters s runs with, defaults filled in.
func (s *Scorer) Params() Params { return s.p }

// Score extracts the chosen letter and compares it with the reference.
// It costs a few passes over the completion and does not look at ctx.
func (s *Scorer) Score(_ context.Context, r *scorers.Rollout) scorers.Result {
	want, res := s.reference(r)
	if res.Outcome != 0 {
		return res
	}
	got, why := s.Extract(r.Completion)
	if got == 0 {
		return scorers.ScoreWhy(0, why)
	}
	if slices.Contains(want, got) {
		return scorers.Score(1)
	}
	return scorers.ScoreWhy(0, fmt.Sprintf("answered %c, the answer is %s", got, string(want)))
}

// The reasons of a 0 without a letter.
const (
	noAnswer  = "no answer"
	abstained = "abstained"
	several   = "several letters"
)

var (
	boxedRE = regexp.MustCompile(`\\(?:boxed|fbox)\s*\{\s*(?:\\text(?:bf|rm|tt)?\s*\{\s*)?\(?\s*([A-Za-z])\s*\)?\s*\.?\s*\}?\s*\}`)
	tagRE   = regexp.MustCompile(`(?i)<answer>\s*\(?\s*([A-Za-z])\s*\)?\.?\s*</answer>`)
	// statementRE finds where an answer statement gives its letter: group
	// 1 is what follows the statement on its line.
	statementRE = regexp.MustCompile(`(?i)(?:\b(?:final\s+|correct\s+|right\s+|best\s+|my\s+)?(?:answer|option|choice)s?(?:\s+(?:is|would\s+be|will\s+be|should\s+be|must\s+be|=))?(?:\s+therefore|\s+then)?\s*(?:[:=\-–—]|\bis\b)|\bI\s+(?:would\s+)?(?:choose|pick|select|go\s+with)\b|\btherefore,?\s+the\s+answer\s+is\b)[ \t]*([^\n]*)`)
	// correctRE finds a letter said to be right: group 1 is the letter.
	correctRE = regexp.MustCompile(`(?:\b(?:[Oo]ption|[Cc]hoice|[Aa]nswer)\s+)?\(?\b([A-Z])\b\)?\s+(?:is|would\s+be|seems)\s+(?:the\s+)?(?:correct|right|best|most\s+(?:likely|accurate|appropriate))\b`)
	// optionLineRE is a line as a list of options writes one.
	optionLineRE = regexp.MustCompile(`^\(?([A-Z])(?:\)|\.|:|\s*-)(?:\s|$)`)
	abstainRE    = regexp.MustCompile(`(?i)\b(?:i\s+(?:do\s*n[o']?t|cannot|can't)\s+(?:know|tell|determine|be\s+sure)|cannot\s+be\s+determined|can't\s+be\s+determined|not\s+enough\s+information|none\s+of\s+(?:the\s+)?(?:above|options|choices)|unable\s+to\s+(?:determine|answer))`)
)

// Extract returns the letter the completion chooses, or 0 and why there is
// none (or why it is not one of the letters).
func (s *Scorer) Extract(text string) (rune, string) {
	text = strings.ReplaceAll(text, "*", "") // markdown emphasis
	if ms := boxedRE.FindAllStringSubmatch(text, -1); ms != nil {
		return s.letter(upper(ms[len(ms)-1][1]), "\\boxed{}")
	}
	if ms := tagRE.FindAllStringSubmatch(text, -1); ms != nil {
		return s.letter(upper(ms[len(ms)-1][1]), "<answer>")
	}
	for _, m := range slices.Backward(statementRE.FindAllStringSubmatch(text, -1)) {
		letters, ok := s.statementLetters(m[1])
		switch {
		case !ok:
			continue // "the answer is simple": no letter here
		case len(letters) > 1:
			return 0, fmt.Sprintf("%s (%s)", several, strings.Join(letters, ", "))
		default:
			return s.letter(rune(letters[0][0]), "the answer statement")
		}
	}
	if ms := correctRE.FindAllStringSubmatch(text, -1); ms != nil {
		if c := rune(ms[len(ms)-1][1][0]); s.has(c) {
			return c, ""
		}
	}
	if c := s.lastLine(text); c != 0 {
		return c, ""
	}
	if abstainRE.MatchString(text) {
		return 0, abstained
	}
	return 0, noAnswer
}

// letter checks that c, found by the named form, is one of the letters.
func (s *Scorer) letter(c rune, form string) (rune, string) {
	if !s.has(c) {
		return 0, fmt.Sprintf("%s gives %q, not one of the letters %s", form, c, s.letters)
	}
	return c, ""
}

func (s *Scorer) has(c rune) bool { return c >= 'A' && c <= 'Z' && s.set[c-'A'] }

func upper(s string) rune { return rune(strings.ToUpper(s)[0]) }

// letterToken is a letter as a statement writes it: (C), [C], C, C., C),
// {C}, $C$, \text{C}, or a lowercase one in brackets.
var letterToken = regexp.MustCompile(`^(?:\\text(?:bf)?\{|\$)?(?:\(([A-Za-z])\)|\[([A-Za-z])\]|\{([A-Za-z])\}|([A-Z])(?:\)|\b))`)

// separator is what joins two letters of one statement.
var separator = regexp.MustCompile(`^(?:\}|\$)?\s*(?:,|/|&|\band\b|\bor\b|\bplus\b)\s*(?:both\s+)?`)

// statementLetters reads the letters an answer statement gives: ok false
// when it does not start with one.
func (s *Scorer) statementLetters(rest string) ([]string, bool) {
	rest = strings.TrimLeft(rest, " \t")
	lower := strings.ToLower(rest)
	for _, p := range []string{"both ", "either ", "option ", "choice ", "letter "} {
		if strings.HasPrefix(lower, p) {
			rest = strings.TrimLeft(rest[len(p):], " \t")
			break
		}
	}
	var out []string
	for {
		m := letterToken.FindStringSubmatch(rest)
		if m == nil {
			break
		}
		l := strings.ToUpper(m[1] + m[2] + m[3] + m[4])
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
		rest = rest[len(m[0]):]
		sep := separator.FindString(rest)
		if sep == "" {
			break
		}
		rest = rest[len(sep):]
	}
	if len(out) == 1 && out[0] == "I" && !s.has('I') {
		return nil, false // "the answer, I think, ..."
	}
	if len(out) == 0 {
		// "The answer is simple: it is (B).": a letter in parentheses
		// later on the line is as plain.
		for _, m := range parenLetter.FindAllStringSubmatch(rest, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	return out, len(out) > 0
}

var parenLetter = regexp.MustCompile(`\(([A-Z])\)`)

// lastLine reads the last non-empty line as a lone letter or an option
// line.
func (s *Scorer) lastLine(text string) rune {
	text = strings.TrimRight(text, " \t\r\n")
	line := text[strings.LastIndexByte(text, '\n')+1:]
	line = strings.Trim(line, " \t#>_`$")
	bare := strings.TrimRight(strings.Trim(line, "()[]{} \t"), ".)")
	if len(bare) == 1 && s.has(rune(bare[0])) {
		return rune(bare[0])
	}
	if m := optionLineRE.FindStringSubmatch(line); m != nil && s.has(rune(m[1][0])) {
		return rune(m[1][0])
	}
	return 0
}

// reference reads the acceptable letters of r, or returns a non-zero
// Result when there are none.
func (s *Scorer) reference(r *scorers.Rollout) ([]rune, scorers.Result) {
	v, ok := r.Field(s.p.ReferenceField)
	if !ok {
		return nil, scorers.Skip(s.noRef)
	}
	var vals []*structpb.Value
	if l, isList := v.GetKind().(*structpb.Value_ListValue); isList {
		vals = l.ListValue.GetValues()
		if len(vals) == 0 {
			return nil, scorers.Skip(s.noRef)
		}
	} else {
		vals = []*structpb.Value{v}
	}
	var out []rune
	for _, e := range vals {
		c, err := s.refLetter(e)
		if err != nil {
			return nil, scorers.Errorf("field %q: %v", s.p.ReferenceField, err)
		}
		out = append(out, c)
	}
	return out, scorers.Result{}
}

func (s *Scorer) refLetter(v *structpb.Value) (rune, error) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NumberValue:
		f := k.NumberValue
		if f != math.Trunc(f) || f < 0 || f >= float64(len(s.letters)) {
			return 0, fmt.Errorf("index %v is not in [0, %d)", f, len(s.letters))
		}
		return rune(s.letters[int(f)]), nil
	case *structpb.Value_StringValue:
		t := strings.Trim(strings.TrimSpace(k.StringValue), "().[]: ")
		if len(t) == 1 {
			if c := upper(t); s.has(c) {
				return c, nil
			}
		}
		return 0, fmt.Errorf("%q is not one of the letters %s", k.StringValue, s.letters)
	case *structpb.Value_BoolValue:
		return 0, fmt.Errorf("holds a bool, want a letter or an index")
	default:
		return 0, fmt.Errorf("holds an object or a nested list, want a letter or an index")
	}
}
