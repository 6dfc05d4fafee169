package format_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/format"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// openR1Format is open-r1's format_reward (src/open_r1/rewards.py):
// re.match(r"^<think>\n.*?\n</think>\n<answer>\n.*?\n</answer>$", text,
// re.DOTALL | re.MULTILINE). re.match anchors at the start of the text
// only, hence \A here, where Go's (?m)^ would match at any line.
var openR1Format = regexp.MustCompile(`(?sm)\A<think>\n.*?\n</think>\n<answer>\n.*?\n</answer>$`)

func openR1FormatReward(text string) float64 {
	if openR1Format.MatchString(text) {
		return 1
	}
	return 0
}

// openR1Strings are open-r1's own test strings (tests/test_rewards.py:
// test_format_reward_*, test_tag_count_rewards_*) with the values its
// tests assert, NaN where a test asserts only one of the two functions.
var openR1Strings = []struct {
	text             string
	format, tagCount float64
}{
	{"<think>\nSome reasoning\n</think>\n<answer>\nThe answer\n</answer>", 1, 1},
	{"<think>Only thinking</think>", 0, -1},
	{"<answer>Only answer</answer>", 0, -1},
	{"No tags at all", 0, -1},
	{"<think>Missing closing</think><answer>Missing closing", 0, -1},
	{"<think>Wrong order</answer><answer>Wrong order</think>", 0, -1},
	{"<think>\nI will count each distinct object in the image:\n1. Purple scooter\n2. Red bicycle\n3. Green motorcycle\n4. Gray sedan\n5. Yellow school bus\n6. Small green double-decker bus\n7. Small red car\n8. Small purple car\n9. Small gray dirt bike\n\nThere are 9 distinct objects in total.\n</think>\n<answer>\n9\n</answer>", 1, -1},
	{"Some reasoning\n</think>\n<answer>\nThe answer\n</answer>", -1, 0.75},
	{"<think>\nSome reasoning\n<answer>\nThe answer\n</answer>", -1, 0.75},
	{"<think>\nSome reasoning\n</think>\nThe answer\n</answer>", -1, 0.75},
	{"<think>\nSome reasoning\n</think>\n<answer>\nThe answer", -1, 0.75},
	{"Some reasoning\nThe answer", -1, 0},
}

// layouts are seven ways a model lays out a worked solution and its final
// answer, the first open-r1's own.
var layouts = []func(work, final string) string{
	func(w, f string) string { return "<think>\n" + w + "\n</think>\n<answer>\n" + f + "\n</answer>" },
	func(w, f string) string { return "<think>" + w + "</think><answer>" + f + "</answer>" },
	func(w, f string) string { return "<think> " + w + " </think> <answer> " + f + " </answer>" },
	func(w, f string) string {
		return "<think>\n" + w + "\n</think>\n<answer>\n" + f + "\n</answer>\nThe answer is " + f + "."
	},
	func(w, f string) string { return "<think>\n" + w + "\n</think>\n<answer>\n" + f },
	func(w, f string) string { return "\n<think>\n" + w + "\n</think>\n\n<answer>\n" + f + "\n</answer>\n" },
	func(w, f string) string {
		return "<think>\n" + w + "\n</think>\n<answer>\n" + f + "\n</answer>\n<think>\nCheck.\n</think>\n<answer>\n" + f + "\n</answer>"
	},
}

func openR1Scorers(t *testing.T) (strict, partial *format.Scorer) {
	t.Helper()
	strict, err := format.New(format.Params{Compat: format.OpenR1})
	if err != nil {
		t.Fatal(err)
	}
	partial, err = format.New(format.Params{Mode: format.Partial, Compat: format.OpenR1})
	if err != nil {
		t.Fatal(err)
	}
	return strict, partial
}

// TestOpenR1Strings: compat openr1 gives the values open-r1's own tests
// assert, and so do the reference functions here.
func TestOpenR1Strings(t *testing.T) {
	strict, partial := openR1Scorers(t)
	ctx := context.Background()
	for _, c := range openR1Strings {
		r := &scorers.Rollout{Completion: c.text}
		if c.format >= 0 {
			if got, ref := strict.Score(ctx, r).Value, openR1FormatReward(c.text); got != c.format || ref != c.format {
				t.Errorf("format %q: %v, reference %v, open-r1's test %v", c.text, got, ref, c.format)
			}
		}
		if c.tagCount >= 0 {
			if got, ref := partial.Score(ctx, r).Value, openR1TagCount(c.text); got != c.tagCount || ref != c.tagCount {
				t.Errorf("tag_count %q: %v, reference %v, open-r1's test %v", c.text, got, ref, c.tagCount)
			}
		}
	}
}

// TestOpenR1Agreement compares compat openr1 with open-r1's functions on
// 700 completions: 100 GSM8K solutions in each of seven layouts.
func TestOpenR1Agreement(t *testing.T) {
	strict, partial := openR1Scorers(t)
	plain, _ := format.New(format.Params{Mode: format.Partial})
	ctx := context.Background()
	rows := scorertest.ReadGSM8K(t, "testdata/gsm8k_100.jsonl")
	n, formatAgree, tagAgree, plainAgree := 0, 0, 0, 0
	var ones [2]int
	for _, layout := range layouts {
		for _, row := range rows {
			text := layout(strings.TrimSpace(row.Body), row.Final)
			r := &scorers.Rollout{Completion: text}
			n++
			f, ref := strict.Score(ctx, r), openR1FormatReward(text)
			if f.Value == ref {
				formatAgree++
			} else {
				t.Errorf("format on %q: %v (%s), open-r1 %v", text, f.Value, f.Reason, ref)
			}
			tc, tref := partial.Score(ctx, r).Value, openR1TagCount(text)
			if tc == tref {
				tagAgree++
			} else {
				t.Errorf("tag_count on %q: %v, open-r1 %v", text, tc, tref)
			}
			if plain.Score(ctx, r).Value == tref {
				plainAgree++
			}
			if ref == 1 {
				ones[0]++
			}
			if tref == 1 {
				ones[1]++
			}
		}
	}
	t.Logf("compat openr1 agrees with open-r1 on %d/%d (format) and %d/%d (tag_count); "+
		"open-r1 gives format 1 to %d, tag_count 1 to %d; rewardd's own partial agrees on %d/%d",
		formatAgree, n, tagAgree, n, ones[0], ones[1], plainAgree, n)
	if n != 700 {
		t.Errorf("%d completions, want 700", n)
	}
	// The layouts must tell the rules apart, or agreement shows nothing.
	if ones[0] == 0 || ones[0] == n || plainAgree == n {
		t.Errorf("layouts do not separate the rules: format 1 on %d of %d, plain partial agrees on %d", ones[0], n, plainAgree)
	}
}

// TestOpenR1Tags: other tag lists follow open-r1's layout.
func TestOpenR1Tags(t *testing.T) {
	runCases(t, format.Params{Compat: format.OpenR1, Tags: []string{"reasoning", "answer"}}, []scoreCase{
		{"<reasoning>\nr\n</reasoning>\n<answer>\na\n</answer>", 1, ""},
		{"<reasoning>r</reasoning><answer>a</answer>", 0, `does not match open-r1's ^<reasoning>\n.*?\n</reasoning>\n<answer>\n.*?\n</answer>$`},
	})
	runCases(t, format.Params{Compat: format.OpenR1, Tags: []string{"a"}}, []scoreCase{
		{"<a>\n\n</a>", 1, ""},
		{"<a>\n</a>", 0, ""},
		{"<a>\nx\n</a>y\n</a>\nz", 1, ""},
		{"<a>\nx\n</a>y", 0, ""},
	})
	runCases(t, format.Params{Mode: format.Partial, Compat: format.OpenR1, Tags: []string{"a", "b", "c"}}, []scoreCase{
		{"<a>\n\n</a>\n\n<b>\n\n</b>\n\n<c>\n\n</c>", 1, ""},
		{"<a>\n\n</a>\n", 2.0 / 6, `\n<b>\n not present exactly once`},
	})
}
