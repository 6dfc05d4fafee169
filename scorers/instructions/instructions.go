// Package instructions implements the instruction_following scorer kind:
// verifiable instructions as Google's IFEval defines them (Zhou et al.
// 2023, "Instruction-Following Evaluation for Large Language Models", and
// its reference evaluator, google-research's instruction_following_eval),
// the constraints Tülu 3's RLVR and open-instruct train on.
//
// A row names its instructions in a field (InstructionsField, default
// instruction_id_list, as IFEval's data does: "punctuation:no_comma",
// "length_constraints:number_words", …: the 25 ids of IFEval, the 29 that
// open-instruct's IFEvalG adds and the 54 of IFBench's 58 that need no
// model or data rewardd lacks; IDs lists them, docs/instructions.md says
// which is which and why 4 are refused) with one
// dict of parameters per instruction in another (KwargsField, default
// kwargs; a null entry is an empty dict, a null value an absent key, as in
// the Hugging Face copy of IFEval). Each instruction is checked as the
// reference checks it: strictly, on the completion as it is, or loosely
// (Loose), where it counts as followed when the completion, or the
// completion without its first line, its last line or both, each also
// with every "*" removed, follows it. An empty (white space) completion
// follows nothing.
//
// Scoring all (the default; IFEval's prompt-level accuracy) gives 1 when
// every instruction is followed, else 0 with a reason naming those that
// are not; fraction (instruction-level) gives the fraction followed.
//
// The reference draws a parameter at random when it is missing; rewardd
// never does. An unknown instruction id, a missing, mistyped or unknown
// parameter, a pattern it cannot read, or a language it cannot detect is
// an Error naming the instruction and the parameter, never a silent 0. A
// row without the instructions field is NotApplicable.
//
// Where rewardd differs from the reference: the language (response_language
// and the English of english_capital and english_lowercase) is what
// langdetect says seeded with 0 (package langdetect), where the reference,
// unseeded, may say something else from run to run; sentences are counted by
// a Go port of NLTK's Punkt with the parameters of NLTK's English model
// (punkt.go), and split into word tokens as nltk.word_tokenize does
// (wordtok.go); capital_word_frequency counts words with the splits of
// NLTK's word tokenizer that can change the count (see capitalWords); and
// json_format does not take Python's NaN and Infinity. The package's tests
// compare every verdict with the reference's on published responses.
package instructions

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/instructions/langdetect"
)

// Params configures an instruction_following function.
type Params struct {
	// InstructionsField is the row field listing the instruction ids.
	// Default instruction_id_list.
	InstructionsField string `yaml:"instructions_field,omitempty"`
	// KwargsField is the row field holding one dict of parameters per
	// instruction. Default kwargs.
	KwargsField string `yaml:"kwargs_field,omitempty"`
	// Scoring is all (1 when every instruction is followed; the default)
	// or fraction (the fraction followed).
	Scoring string `yaml:"scoring,omitempty"`
	// Loose checks each instruction as IFEval's loose evaluation does.
	// Default false (strict).
	Loose *bool `yaml:"loose,omitempty"`
}

// Scorings.
const (
	All      = "all"
	Fraction = "fraction"
)

// Scorer scores rollouts for one instruction_following function. It is
// safe for concurrent use.
type Scorer struct {
	p     Params
	specs map[string]spec
	env   *env
	loose bool
	all   bool

	noInstructions string
}

// Kind returns the factory of instruction_following functions. Its
// functions share one sentence tokenizer and one language detector (about
// 60 ms to build and 30 MB), built when the first function is.
func Kind() scorers.Factory {
	e := sync.OnceValues(newEnv)
	return scorers.Kind(func(p Params) (*Scorer, error) { return build(p, e) })
}

// New builds a scorer from p, filling in defaults. Bad parameters are
// reported as a scorers.ParamErrors naming each key. Each call loads the
// sentence tokenizer and the language profiles anew; a process that makes
// many functions uses Kind.
func New(p Params) (*Scorer, error) { return build(p, newEnv) }

func newEnv() (*env, error) {
	p, err := newPunkt()
	if err != nil {
		return nil, fmt.Errorf("load the sentence tokenizer: %w", err)
	}
	lang, err := langdetect.New()
	if err != nil {
		return nil, fmt.Errorf("load the language profiles: %w", err)
	}
	return &env{sentences: memoize(p.count), punkt: p, words: newWordTokenizer(p), lang: lang, langMemo: newMemo[langAnswer]()}, nil
}

func build(p Params, newEnv func() (*env, error)) (*Scorer, error) {
	var bad scorers.ParamErrors
	if p.InstructionsField == "" {
		p.InstructionsField = "instruction_id_list"
	}
	if p.KwargsField == "" {
		p.KwargsField = "kwargs"
	}
	if p.InstructionsField == p.KwargsField {
		bad.Addf("kwargs_field", "is the instructions_field %q too", p.InstructionsField)
	}
	p.Scoring, _ = scorers.Choice(&bad, "scoring", p.Scoring, All, All, Fraction)
	if p.Loose == nil {
		p.Loose = new(false)
	}
	if err := bad.Err(); err != nil {
		return nil, err
	}
	e, err := newEnv()
	if err != nil {
		return nil, err
	}
	return &Scorer{
		p: p, specs: specs(), env: e,
		loose: *p.Loose, all: p.Scoring == All,
		noInstructions: fmt.Sprintf("no instructions in field %q", p.InstructionsField),
	}, nil
}

// IDs returns the instruction ids the kind checks, sorted: IFEval's 25,
// those open-instruct's IFEvalG adds and IFBench's, but for those in
// Unsupported.
func IDs() []string {
	var ids []string
	for id := range specs() {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Unsupported returns the instruction ids the kind knows and answers
// ERROR for, each with why (IFBench's that need a model or data rewardd
// does not ship).
func Unsupported() map[string]string { return maps.Clone(unsupported) }

// Params returns the parameters s runs with, defaults filled in.
func (s *Scorer) Params() Params { return s.p }

// Score checks every instruction of the row on the completion. It costs
// one pass or a few over the completion per instruction (eight variants of
// it with Loose), and does not look at ctx.
func (s *Scorer) Score(_ context.Context, r *scorers.Rollout) scorers.Result {
	ids, kw, bad := s.row(r)
	if bad.Outcome != 0 {
		return bad
	}
	checks := make([]check, len(ids))
	for i, id := range ids {
		sp, ok := s.specs[id]
		if why, no := unsupported[id]; no {
			return scorers.Errorf("instruction %q: not supported: %s", id, why)
		}
		if !ok {
			return scorers.Errorf("instruction %d: unknown instruction id %q (rewardd knows IFEval's, open-instruct IFEvalG's and IFBench's)", i, id)
		}
		a := &kwargs{m: kw[i]}
		a.checkKeys(sp.keys)
		c, err := sp.build(a, s.env)
		if err == nil {
			err = a.err
		}
		if err != nil {
			return scorers.Errorf("instruction %q: %v", id, err)
		}
		checks[i] = c
	}
	variants := []string{r.Completion}
	if s.loose {
		variants = looseVariants(r.Completion)
	}
	var missed []string
	for i, c := range checks {
		if !follows(c, variants) {
			missed = append(missed, ids[i])
		}
	}
	if len(missed) == 0 {
		return scorers.Score(1)
	}
	why := "not followed: " + strings.Join(missed, ", ")
	if s.all {
		return scorers.ScoreWhy(0, why)
	}
	return scorers.ScoreWhy(float64(len(ids)-len(missed))/float64(len(ids)), why)
}

// follows says whether one of the variants, not empty, follows c.
func follows(c check, variants []string) bool {
	for _, v := range variants {
		if strip(v) != "" && c(v) {
			return true
		}
	}
	return false
}

// looseVariants are the texts IFEval's loose evaluation tries, in its
// order: the response, without "*", and without its first line, its last
// line or both (stripped), each also without "*".
func looseVariants(response string) []string {
	lines := strings.Split(response, "\n")
	first := strip(strings.Join(lines[1:], "\n"))
	last := strip(strings.Join(lines[:len(lines)-1], "\n"))
	both := ""
	if len(lines) > 2 {
		both = strip(strings.Join(lines[1:len(lines)-1], "\n"))
	}
	noStar := func(s string) string { return strings.ReplaceAll(s, "*", "") }
	all := []string{response, noStar(response), first, last, both, noStar(first), noStar(last), noStar(both)}
	// A check gives the same verdict on the same text: try each text once.
	out := make([]string, 0, len(all))
	for _, v := range all {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// row reads the instruction ids and their kwargs, or returns a non-zero
// Result saying why it cannot.
func (s *Scorer) row(r *scorers.Rollout) ([]string, []map[string]*structpb.Value, scorers.Result) {
	v, ok := r.Field(s.p.InstructionsField)
	if !ok {
		return nil, nil, scorers.Skip(s.noInstructions)
	}
	list, ok := v.GetKind().(*structpb.Value_ListValue)
	if !ok {
		return nil, nil, scorers.Errorf("field %q holds %s, want a list of instruction ids", s.p.InstructionsField, scorers.KindName(v))
	}
	ids := make([]string, len(list.ListValue.GetValues()))
	for i, e := range list.ListValue.GetValues() {
		str, ok := e.GetKind().(*structpb.Value_StringValue)
		if !ok {
			return nil, nil, scorers.Errorf("field %q: entry %d is %s, want an instruction id", s.p.InstructionsField, i, scorers.KindName(e))
		}
		ids[i] = str.StringValue
	}
	if len(ids) == 0 {
		return nil, nil, scorers.Skip(s.noInstructions)
	}
	kw := make([]map[string]*structpb.Value, len(ids))
	kv, ok := r.Field(s.p.KwargsField)
	if !ok {
		return ids, kw, scorers.Result{}
	}
	kl, ok := kv.GetKind().(*structpb.Value_ListValue)
	if !ok || len(kl.ListValue.GetValues()) != len(ids) {
		return nil, nil, scorers.Errorf("field %q holds %s, want a list of %d kwargs dicts, one per instruction", s.p.KwargsField, describeList(kv), len(ids))
	}
	for i, e := range kl.ListValue.GetValues() {
		switch k := e.GetKind().(type) {
		case *structpb.Value_StructValue:
			kw[i] = k.StructValue.GetFields()
		case *structpb.Value_NullValue, nil:
		default:
			return nil, nil, scorers.Errorf("field %q: entry %d (for %q) is %s, want a dict or null", s.p.KwargsField, i, ids[i], scorers.KindName(e))
		}
	}
	return ids, kw, scorers.Result{}
}

func describeList(v *structpb.Value) string {
	if l, ok := v.GetKind().(*structpb.Value_ListValue); ok {
		return fmt.Sprintf("a list of %d", len(l.ListValue.GetValues()))
	}
	return scorers.KindName(v)
}
