package builtin_test

import (
	"bytes"
	"strconv"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// kindCase is what the conformance suite needs to know of a kind: a spec
// that compiles, the range of its OK values, the row fields it reads, and
// specs it must refuse with every problem named.
type kindCase struct {
	params string
	rng    scorertest.Range
	fields []string
	bad    []scorertest.BadParams
}

// kinds has an entry for every kind of builtin.Registry:
// TestEveryKindConforms fails on a kind without one, so that no kind skips
// the suite.
var kinds = map[string]kindCase{
	"exact_match": {
		params: "extract: [boxed, answer_tag, gsm8k]\nnormalize: [strip, numeric]\n",
		rng:    scorertest.Unit, fields: []string{"answer"},
		bad: []scorertest.BadParams{
			{Name: "unknown key", Src: "extract: [boxed]\nnormalise: [strip]\n", Want: []string{"normalise:2"}},
			{Name: "bad extractor", Src: "normalize: [strip]\nextract:\n  - boxed\n  - latex\n", Want: []string{"extract:3"}},
			{Name: "bad pattern", Src: "extract: [regex]\nextract_pattern: '(('\n", Want: []string{"extract_pattern:2"}},
			{Name: "bad tolerance", Src: "normalize: [numeric]\ntolerance: -1\n", Want: []string{"tolerance:2"}},
			{Name: "wrong type", Src: "normalize: [numeric]\ntolerance: high\n", Want: []string{"tolerance:2"}},
			{Name: "scalar for a list", Src: "extract: boxed\n", Want: []string{"extract:1"}},
			{Name: "tolerance beside an unknown normalizer", Src: "normalize: [numeric, stem]\ntolerance: 1.5\n", Want: []string{"normalize:1", "tolerance:2"}},
			{Name: "bad pattern beside a misspelt key", Src: "extract: [regex]\nextract_pattern: '(('\nnormalise: [lower]\n", Want: []string{"extract_pattern:2", "normalise:3"}},
		},
	},
	"regex": {
		params: "pattern: '\\d+'\nmode: count\ncount_target: 2\n",
		rng:    scorertest.Unit,
		bad: []scorertest.BadParams{
			{Name: "unknown key", Src: "pattern: a\npatern: b\n", Want: []string{"patern:2"}},
			{Name: "bad regex", Src: "mode: search\npattern: 'a(b'\n", Want: []string{"pattern:2"}, Mention: strconv.Quote("a(b")},
			{Name: "wrong type", Src: "pattern: a\nmode: count\ncount_target: many\n", Want: []string{"count_target:3"}},
			{Name: "bad flag", Src: "pattern: a\nflags: q\n", Want: []string{"flags:2"}},
			{Name: "explicit zero", Src: "pattern: a\nmode: count\ncount_target: 0\n", Want: []string{"count_target:3"}, Mention: "[1, 1048576]"},
			{Name: "count target outside count mode", Src: "pattern: a\ncount_target: 2\n", Want: []string{"count_target:2"}},
			{Name: "bad pattern beside a misspelt key", Src: "pattern: '['\nmodee: count\n", Want: []string{"pattern:1", "modee:2"}},
			{Name: "bad mode and flag", Src: "pattern: a\nmode: find\nflags: q\n", Want: []string{"mode:2", "flags:3"}},
		},
	},
	"format": {
		params: "mode: partial\ntags: [think, answer]\n",
		rng:    scorertest.Unit,
		bad: []scorertest.BadParams{
			{Name: "unknown key", Src: "mode: strict\ntag: [a]\n", Want: []string{"tag:2"}},
			{Name: "unknown mode", Src: "tags: [a]\nmode: lenient\n", Want: []string{"mode:2"}},
			{Name: "bad tag", Src: "mode: strict\ntags:\n  - think\n  - '<answer>'\n", Want: []string{"tags:3"}},
			{Name: "keys outside json", Src: "required_keys: [a]\n", Want: []string{"required_keys:1"}},
			{Name: "no tags", Src: "mode: partial\ntags: []\n", Want: []string{"tags:2"}},
			{Name: "wrong type", Src: "mode: json\nrequired_keys: 3\n", Want: []string{"required_keys:2"}},
			{Name: "two bad tags", Src: "mode: partial\ntags: ['<a>', '']\n", Want: []string{"tags:2", "tags:2"}},
		},
	},
	"math": {
		params: "extract: [boxed, answer_tag, last_number]\ntolerance: 0.01\n",
		rng:    scorertest.Unit, fields: []string{"answer"},
		bad: []scorertest.BadParams{
			{Name: "unknown key", Src: "extract: [boxed]\nnormalize: [strip]\n", Want: []string{"normalize:2"}},
			{Name: "bad extractor", Src: "tolerance: 0.1\nextract:\n  - boxed\n  - latexx\n", Want: []string{"extract:3"}},
			{Name: "bad tolerance", Src: "extract: [boxed]\ntolerance: -1\n", Want: []string{"tolerance:2"}},
			{Name: "wrong type", Src: "step_budget: lots\n", Want: []string{"step_budget:1"}},
			{Name: "bad budget", Src: "\nstep_budget: -5\n", Want: []string{"step_budget:2"}},
			{Name: "explicit zeros", Src: "step_budget: 0\nmax_answer_chars: 0\n", Want: []string{"step_budget:1", "max_answer_chars:2"}},
			{Name: "tolerance beside an unknown extractor", Src: "extract: [latexx]\ntolerance: 1.5\n", Want: []string{"extract:1", "tolerance:2"}},
		},
	},
	"length": {
		params: "mode: overlong\nmax_length: 8\nbuffer_length: 4\n",
		rng:    scorertest.Range{Min: -1, Max: 0}, fields: []string{"correct", "completion_tokens"},
		bad: []scorertest.BadParams{
			{Name: "unknown key", Src: "mode: overlong\nmax_length: 10\nbuffer: 4\n", Want: []string{"buffer:3"}},
			{Name: "bad mode", Src: "max_length: 10\nmode: dapo\n", Want: []string{"mode:2"}},
			{Name: "bad buffer", Src: "mode: overlong\nmax_length: 10\nbuffer_length: 11\n", Want: []string{"buffer_length:3"}},
			{Name: "wrong type", Src: "mode: overlong\nmax_length: long\n", Want: []string{"max_length:2"}},
			{Name: "key of another mode", Src: "mode: kimi\nunit: chars\npenalty_factor: 2\n", Want: []string{"penalty_factor:3"}},
			{Name: "min over max", Src: "mode: cosine\nmax_length: 10\nmin_value_wrong: 0\nmax_value_wrong: -1\n", Want: []string{"min_value_wrong:3"}},
			{Name: "explicit zero", Src: "mode: overlong\nmax_length: 0\n", Want: []string{"max_length:2"}},
			{Name: "explicit zero of another mode", Src: "mode: cosine\nmax_length: 10\nbuffer_length: 0\n", Want: []string{"buffer_length:3"}},
			{Name: "every problem", Src: "mode: overlong\nunit: bytes\nmax_length: 10\nbuffer_length: 11\npenalty_factor: 0\n", Want: []string{"unit:2", "buffer_length:4", "penalty_factor:5"}},
		},
	},
	"repetition": {
		params: "ngram_size: 2\nmax_penalty: -0.5\n",
		rng:    scorertest.Range{Min: -0.5, Max: 0},
		bad: []scorertest.BadParams{
			{Name: "unknown key", Src: "ngram_size: 3\nlanguage: zh\n", Want: []string{"language:2"}},
			{Name: "positive penalty", Src: "ngram_size: 3\nmax_penalty: 1\n", Want: []string{"max_penalty:2"}},
			{Name: "wrong type", Src: "ngram_size: three\n", Want: []string{"ngram_size:1"}},
			{Name: "bad unit", Src: "unit: tokens\n", Want: []string{"unit:1"}},
			{Name: "explicit zero", Src: "ngram_size: 0\n", Want: []string{"ngram_size:1"}, Mention: "[1, 32]"},
			{Name: "every problem", Src: "ngram_size: 0\nmax_penalty: 1\nunit: tokens\n", Want: []string{"ngram_size:1", "max_penalty:2", "unit:3"}},
		},
	},
	"similarity": {
		params: "metric: rouge_l\nnormalize: [lower]\n",
		rng:    scorertest.Unit, fields: []string{"answer"},
		bad: []scorertest.BadParams{
			{Name: "unknown key", Src: "metric: bleu\nsmoothing: exp\n", Want: []string{"smoothing:2"}},
			{Name: "bad metric", Src: "reference_field: answer\nmetric: rouge2\n", Want: []string{"metric:2"}},
			{Name: "bad normalizer", Src: "metric: fuzzy\nnormalize: [lower, stem]\n", Want: []string{"normalize:2"}},
			{Name: "wrong type", Src: "metric: fuzzy\nmax_chars: many\n", Want: []string{"max_chars:2"}},
			{Name: "explicit zero", Src: "metric: fuzzy\nmax_chars: 0\n", Want: []string{"max_chars:2"}, Mention: "[1, 200000]"},
			{Name: "every problem", Src: "metric: rouge2\nnormalize: [stem]\nmax_chars: 0\n", Want: []string{"metric:1", "normalize:2", "max_chars:3"}},
		},
	},
	"instruction_following": {
		params: "scoring: fraction\nloose: true\n",
		rng:    scorertest.Unit, fields: []string{"instruction_id_list", "kwargs"},
		bad: []scorertest.BadParams{
			{Name: "unknown key", Src: "scoring: all\ninstruction_field: ids\n", Want: []string{"instruction_field:2"}},
			{Name: "bad scoring", Src: "loose: true\nscoring: most\n", Want: []string{"scoring:2"}},
			{Name: "wrong type", Src: "loose: maybe\n", Want: []string{"loose:1"}},
			{Name: "same fields", Src: "instructions_field: x\nkwargs_field: x\n", Want: []string{"kwargs_field:2"}},
			{Name: "every problem", Src: "scoring: most\nkwargs_field: instruction_id_list\n", Want: []string{"scoring:1", "kwargs_field:2"}},
		},
	},
	"multiple_choice": {
		params: "letters: ABCDE\n",
		rng:    scorertest.Unit, fields: []string{"answer"},
		bad: []scorertest.BadParams{
			{Name: "unknown key", Src: "letters: ABCD\nchoices: 4\n", Want: []string{"choices:2"}},
			{Name: "lowercase letters", Src: "letters: abcd\n", Want: []string{"letters:1", "letters:1", "letters:1", "letters:1"}},
			{Name: "one letter", Src: "reference_field: answer\nletters: A\n", Want: []string{"letters:2"}},
			{Name: "wrong type", Src: "letters: [A, B]\n", Want: []string{"letters:1"}},
		},
	},
	"json_schema": {
		params: "partial: true\nschema:\n  type: object\n  required: [answer]\n  properties: {answer: {type: integer}}\n",
		rng:    scorertest.Unit,
		bad: []scorertest.BadParams{
			{Name: "unknown key", Src: "schema: {}\nstrict: true\n", Want: []string{"strict:2"}},
			{Name: "no schema", Src: "partial: true\n", Want: []string{"schema:1"}},
			{Name: "bad schema", Src: "draft: '7'\nschema: {type: 3}\n", Want: []string{"schema:2"}},
			{Name: "bad draft", Src: "schema: {}\ndraft: '8'\n", Want: []string{"draft:2"}},
			{Name: "both", Src: "schema: {}\nschema_field: s\n", Want: []string{"schema_field:2"}},
			{Name: "wrong type", Src: "schema: {}\npartial: some\n", Want: []string{"partial:2"}},
		},
	},
	"tool_call": {
		params: "string_match: exact\nscoring: fraction\n",
		rng:    scorertest.Unit, fields: []string{"tool_calls"},
		bad: []scorertest.BadParams{
			{Name: "unknown key", Src: "scoring: all\norder: any\n", Want: []string{"order:2"}},
			{Name: "bad string match", Src: "scoring: all\nstring_match: fuzzy\n", Want: []string{"string_match:2"}},
			{Name: "bad scoring", Src: "scoring: most\n", Want: []string{"scoring:1"}},
			{Name: "wrong type", Src: "lists_as_sets: sometimes\n", Want: []string{"lists_as_sets:1"}},
		},
	},
	"code_exec": {
		// Registry has no sandbox: every rollout is an Error saying so,
		// which the suite checks like any other result.
		params: "test_style: io\n",
		rng:    scorertest.Unit, fields: []string{"tests"},
		bad: []scorertest.BadParams{
			{Name: "unknown language", Src: "test_style: assert\nlanguage: brainfuck\n", Want: []string{"language:2"}},
			{Name: "no test style", Src: "language: python\n", Want: []string{"test_style:1"}},
			{Name: "bad test style", Src: "test_style: unit\n", Want: []string{"test_style:1"}},
			{Name: "bad scoring", Src: "test_style: io\nscoring: most\n", Want: []string{"scoring:2"}},
			{Name: "cpu over the most", Src: "test_style: io\nlimits: {cpu_seconds: 1000}\n", Want: []string{"limits:2"}},
			{Name: "memory under the least", Src: "test_style: io\nlimits: {memory_mb: 1}\n", Want: []string{"limits:2"}},
			{Name: "unknown key", Src: "test_style: io\nlimit: {memory_mb: 64}\n", Want: []string{"limit:2"}},
			{Name: "total output over the most", Src: "test_style: io\nlimits: {total_output_kb: 65537}\n", Want: []string{"limits:2"}},
			{Name: "negative total output", Src: "test_style: io\nlimits: {total_output_kb: -1}\n", Want: []string{"limits:2"}},
			{Name: "every problem", Src: "test_style: io\nscoring: most\nchecker: fuzzy\n", Want: []string{"scoring:2", "checker:3"}},
			{Name: "explicit zeros", Src: "test_style: io\nscoring: first_n\nfirst_n: 0\ntime_limit_factor: 0\n", Want: []string{"first_n:3", "time_limit_factor:4"}},
			{Name: "explicit zero limits", Src: "test_style: io\nlimits:\n  cpu_seconds: 0\n  memory_mb: 0\ncompile_limits: {wall_seconds: 0}\n", Want: []string{"limits.cpu_seconds:3", "limits.memory_mb:4", "compile_limits.wall_seconds:5"}, Mention: "0 is not in (0, 60]"},
		},
	},
}

// TestEveryKindConforms runs the conformance suite (scorertest.Run), the
// refusals of bad parameters and the round trip of the effective parameters
// on every kind of builtin.Registry.
func TestEveryKindConforms(t *testing.T) {
	reg := builtin.Registry()
	for kind := range kinds {
		if _, ok := reg[kind]; !ok {
			t.Errorf("this test's table has kind %s, which Registry does not serve", kind)
		}
	}
	for _, kind := range reg.Kinds() {
		t.Run(kind, func(t *testing.T) {
			c, ok := kinds[kind]
			if !ok {
				t.Fatalf("kind %s has no entry in this test's table: give it a spec, its range, the fields it reads and specs it must refuse", kind)
			}
			s, canonical, err := scorertest.Compile(reg[kind], c.params)
			if err != nil {
				t.Fatalf("%q: %v", c.params, err)
			}
			t.Run("canonical", func(t *testing.T) { checkCanonical(t, reg[kind], canonical) })
			t.Run("conformance", func(t *testing.T) { scorertest.Run(t, s, c.rng, rollouts(), c.fields...) })
			t.Run("bad params", func(t *testing.T) { scorertest.RunBadParams(t, reg[kind], c.bad) })
		})
	}
}

// checkCanonical checks that the effective parameters, written as a spec,
// compile to the same effective parameters: a spec that writes every
// default out means what the spec that left them out means.
func checkCanonical(t *testing.T, factory scorers.Factory, canonical []byte) {
	t.Helper()
	_, again, err := scorertest.Compile(factory, string(canonical))
	if err != nil {
		t.Fatalf("the canonical parameters do not compile: %v\n%s", err, canonical)
	}
	if !bytes.Equal(again, canonical) {
		t.Errorf("compiling the canonical parameters\n%s\ngives\n%s", canonical, again)
	}
}

// rollouts are the interesting cases every kind is run on, beside the junk
// scorertest adds: answers in each format the kinds extract, repeated text,
// and the fields the kinds read.
func rollouts() []*scorers.Rollout {
	completions := []string{
		"<think>2 + 2 = 4</think><answer>4</answer>",
		`So the answer is \boxed{4}.`,
		"2 + 2 = 4\n#### 4",
		"```python\nprint(4)\n```",
		"the cat sat on the mat the cat sat on the mat",
		"I do not know.",
		`{"answer": 4}`,
	}
	tests, _ := structpb.NewValue([]any{map[string]any{"stdin": "", "stdout": "4\n"}})
	ifeval, _ := structpb.NewValue([]any{"punctuation:no_comma", "keywords:existence"})
	ifevalKwargs, _ := structpb.NewValue([]any{nil, map[string]any{"keywords": []any{"answer"}}})
	calls := structpb.NewStringValue(`[{"answer": {"value": [4]}}]`)
	rows := []map[string]*structpb.Value{
		{"tool_calls": calls, "instruction_id_list": ifeval, "kwargs": ifevalKwargs, "answer": structpb.NewStringValue("4"), "correct": structpb.NewBoolValue(true), "completion_tokens": structpb.NewNumberValue(12), "tests": tests},
		{"answer": structpb.NewStringValue("5"), "correct": structpb.NewBoolValue(false), "completion_tokens": structpb.NewNumberValue(3)},
		nil,
	}
	var out []*scorers.Rollout
	for i, text := range completions {
		for j, fields := range rows {
			out = append(out, &scorers.Rollout{ID: strconv.Itoa(i) + "/" + strconv.Itoa(j), Group: strconv.Itoa(j), Completion: text, Fields: fields})
		}
	}
	return out
}
