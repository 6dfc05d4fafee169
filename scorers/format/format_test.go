package format_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/format"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

type scoreCase struct {
	text   string
	want   float64
	reason string // "" = any
}

func runCases(t *testing.T, p format.Params, cases []scoreCase) {
	t.Helper()
	s, err := format.New(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		got := s.Score(context.Background(), &scorers.Rollout{Completion: c.text})
		if got.Outcome != scorers.OK || got.Value != c.want || c.reason != "" && got.Reason != c.reason {
			t.Errorf("%+v on %q: got %v %q, want %v %q", p, c.text, got.Value, got.Reason, c.want, c.reason)
		}
	}
}

func TestStrict(t *testing.T) {
	runCases(t, format.Params{}, []scoreCase{
		{"<think>a</think><answer>b</answer>", 1, ""},
		{"  \n<think>\na\n</think>\n\n<answer>\nb\n</answer>\n", 1, ""},
		{"<think></think> <answer></answer>", 1, ""},
		{"<think>x < y, y > z</think><answer>1</answer>", 1, ""},
		{"", 0, "does not start with <think>"},
		{"<think>a</think>", 0, "tag <answer> missing"},
		{"<answer>b</answer>", 0, "does not start with <think>"},
		{"<think>a</think><answer>b", 0, "tag </answer> missing"},
		{"<THINK>a</THINK><answer>b</answer>", 0, "does not start with <think>"},
		{"<think>a</think><think>a</think><answer>b</answer>", 0, "tag <think> repeated"},
		{"<think>a <answer> b</think><answer>c</answer>", 0, "tag <answer> repeated"},
		{"hi <think>a</think><answer>b</answer>", 0, "does not start with <think>"},
		{"<think>a</think> so <answer>b</answer>", 0, "text between </think> and <answer>"},
		{"<think>a</think><answer>b</answer> bye", 0, "text after </answer>"},
		{"<answer>b</answer><think>a</think>", 0, "does not start with <think>"},
		{"<think><answer>b</answer></think>", 0, "tags out of order (want <think>…</think><answer>…</answer>)"},
		{"<think>a</think></think><answer>b</answer>", 0, "tag </think> repeated"},
		{"</think>a<think><answer>b</answer>", 0, "does not start with <think>"},
	})
	runCases(t, format.Params{Mode: format.Strict, Tags: []string{"reasoning", "code", "answer"}}, []scoreCase{
		{"<reasoning>r</reasoning>\n<code>c</code>\n<answer>a</answer>", 1, ""},
		{"<reasoning>r</reasoning>\n<answer>a</answer>\n<code>c</code>", 0, "tags out of order (want <reasoning>…</reasoning><code>…</code><answer>…</answer>)"},
		{"<reasoning>r</reasoning>\n<code>c</code>.<answer>a</answer>", 0, "text between </code> and <answer>"},
	})
	runCases(t, format.Params{Tags: []string{"answer"}}, []scoreCase{
		{" <answer>a</answer> ", 1, ""},
		{"<answer>a</answer><answer>b</answer>", 0, "tag <answer> repeated"},
	})
}

func TestPartial(t *testing.T) {
	runCases(t, format.Params{Mode: format.Partial}, []scoreCase{
		{"<think>\na\n</think>\n<answer>\nb\n</answer>", 1, ""},
		{"<think>a</think><answer>b</answer>", 1, ""},
		{"<think>a</think>", 0.5, "tag <answer> missing"},
		{"", 0, "tag <think> missing"},
		{"<think><think></think><answer></answer>", 0.75, "tag <think> repeated"},
		{"<answer>b</answer> <think>a</think>", 1, ""}, // order is strict mode's business
		{"</answer>", 0.25, ""},
	})
	runCases(t, format.Params{Mode: format.Partial, Tags: []string{"a", "b", "c"}}, []scoreCase{
		{"<a></a><b></b><c></c>", 1, ""},
		{"<a></a>", 2.0 / 6, ""},
	})
}

// openR1TagCount is open-r1's tag_count_reward (src/open_r1/rewards.py).
func openR1TagCount(text string) float64 {
	count := 0.0
	for _, t := range []string{"<think>\n", "\n</think>\n", "\n<answer>\n", "\n</answer>"} {
		if strings.Count(text, t) == 1 {
			count += 0.25
		}
	}
	return count
}

// TestPartialOpenR1 shows where partial mode agrees with open-r1's
// tag_count_reward (tags on their own lines, the format it rewards) and the
// documented difference (tags without the newlines around them).
func TestPartialOpenR1(t *testing.T) {
	s, err := format.New(format.Params{Mode: format.Partial})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text  string
		agree bool
	}{
		{"<think>\nreason\n</think>\n<answer>\n42\n</answer>", true},
		{"<think>\nreason\n</think>\n<answer>\n42\n</answer>\n<answer>\n43\n</answer>", true},
		{"<think>\nreason\n</think>\n", true},
		{"no tags at all", true},
		{"<think>\n<think>\nreason\n</think>\n<answer>\n42\n</answer>", true},
		{"<think>reason</think><answer>42</answer>", false}, // open-r1: 0, here: 1
		{"<think>\nreason\n</think><answer>42</answer>", false},
	} {
		got := s.Score(context.Background(), &scorers.Rollout{Completion: c.text}).Value
		if want := openR1TagCount(c.text); (got == want) != c.agree {
			t.Errorf("%q: partial %v, open-r1 %v, want agreement %v", c.text, got, want, c.agree)
		}
	}
}

func TestJSON(t *testing.T) {
	runCases(t, format.Params{Mode: format.JSON}, []scoreCase{
		{`{"a": 1}`, 1, ""},
		{" [1, 2]\n", 1, ""},
		{`"just a string"`, 1, ""},
		{`{"a": 1} trailing`, 0, "not valid JSON"},
		{"", 0, "not valid JSON"},
		{"Here:\n```json\n{\"a\": [1, 2]}\n```\nDone.", 1, ""},
		{"```JSON \n{}\n```", 1, ""},
		{"```json\n{\"a\": 1}\n```\nthen\n```json\n{oops}\n```", 0, "not valid JSON"},
		{"```json\n{oops}\n```\nthen\n```json\n{}\n```", 1, ""},
		{"```json\n{\"a\": 1}", 0, "```json block not closed"},
		{"```jsonc\n{}\n```", 0, "not valid JSON"},
		{"```python\nprint(1)\n```\n```json\n[]\n```\n```\nnotes\n```", 1, ""},
	})
	runCases(t, format.Params{Mode: format.JSON, RequiredKeys: []string{"answer", "reason"}}, []scoreCase{
		{`{"answer": 3, "reason": "sum", "extra": null}`, 1, ""},
		{`{"answer": 3}`, 0, `key "reason" missing`},
		{`{"x": {"answer": 3, "reason": ""}}`, 0, `key "answer" missing`},
		{`[{"answer": 3, "reason": ""}]`, 0, "JSON is not an object"},
		{`null`, 0, "JSON is not an object"},
		{"```json\n{\"answer\": 3, \"reason\": \"r\"}\n```", 1, ""},
	})
	// A reason for invalid JSON with keys says where.
	s, err := format.New(format.Params{Mode: format.JSON, RequiredKeys: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Score(context.Background(), &scorers.Rollout{Completion: "{oops}"}); got.Value != 0 || !strings.HasPrefix(got.Reason, "not valid JSON: ") {
		t.Errorf("got %+v", got)
	}
}

func TestNewErrors(t *testing.T) {
	scorertest.RunRefusals(t, format.New, []scorertest.Refusal[format.Params]{
		{Name: "unknown mode", Params: format.Params{Mode: "loose"}, Key: "mode"},
		{Name: "empty tag", Params: format.Params{Tags: []string{"think", ""}}, Key: "tags"},
		{Name: "tag with brackets", Params: format.Params{Tags: []string{"<think>"}}, Key: "tags"},
		{Name: "tag with >", Params: format.Params{Tags: []string{"a>b"}}, Key: "tags"},
		{Name: "closing tag", Params: format.Params{Tags: []string{"/think"}}, Key: "tags"},
		{Name: "duplicate tag", Params: format.Params{Tags: []string{"a", "b", "a"}}, Key: "tags"},
		{Name: "no tags", Params: format.Params{Tags: []string{}}, Key: "tags"},
		{Name: "keys in strict mode", Params: format.Params{RequiredKeys: []string{"a"}}, Key: "required_keys"},
		{Name: "keys in partial mode", Params: format.Params{Mode: format.Partial, RequiredKeys: []string{"a"}}, Key: "required_keys"},
		{Name: "tags in json mode", Params: format.Params{Mode: format.JSON, Tags: []string{"a"}}, Key: "tags"},
		{Name: "unknown compat", Params: format.Params{Compat: "open-r1"}, Key: "compat"},
		{Name: "compat in json mode", Params: format.Params{Mode: format.JSON, Compat: format.OpenR1}, Key: "compat"},
	})
}

func TestKind(t *testing.T) {
	factory := scorers.Kind(format.New)
	s, _, err := scorertest.Compile(factory, "mode: partial\ntags: [think, answer]\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Score(context.Background(), &scorers.Rollout{Completion: "<think>a</think>"}); got.Value != 0.5 {
		t.Errorf("Score = %+v, want 0.5", got)
	}
}

func TestConformance(t *testing.T) {
	cases := []*scorers.Rollout{
		{Completion: "<think>a</think><answer>b</answer>"},
		{Completion: "<think>a</think>"},
		{Completion: "```json\n{\"answer\": 1}\n```"},
		{Completion: "{\"answer\": 1}"},
		{Completion: strings.Repeat("<think></think><answer>", 1000)},
	}
	for _, p := range []format.Params{
		{},
		{Mode: format.Partial},
		{Mode: format.Partial, Tags: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}},
		{Mode: format.JSON},
		{Mode: format.JSON, RequiredKeys: []string{"answer"}},
		{Compat: format.OpenR1},
		{Mode: format.Partial, Compat: format.OpenR1},
	} {
		t.Run(p.Mode+p.Compat, func(t *testing.T) {
			s, err := format.New(p)
			if err != nil {
				t.Fatal(err)
			}
			scorertest.Run(t, s, scorertest.Unit, cases)
		})
	}
}
