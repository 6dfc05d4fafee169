package format

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers"
)

var fuzzSeeds = []string{
	"",
	"<think>a</think><answer>b</answer>",
	" <think>\na\n</think>\n<answer>\nb\n</answer>\n",
	"<think><answer></answer></think>",
	"<<think>>think</think</think>>",
	"</answer><think>",
	"x ```json\n{\"a\": 1}\n``` y",
	"```json",
	"```json\n",
	"````json\n[]\n````",
	"```\n```json\n{}\n```\n```",
	"\u00a0<think>\u2003</think>\u00a0<answer></answer>\u3000",
}

// FuzzScan checks the tag scanner against strings.Count and strings.Index.
func FuzzScan(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	s, err := New(Params{Tags: []string{"think", "answer", "a", "ans"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		marks := make([]mark, 2*len(s.tags))
		s.scan(text, marks)
		for i, m := range marks {
			tag := s.tags[i/2].open
			if i%2 == 1 {
				tag = s.tags[i/2].close
			}
			if n := strings.Count(text, tag); m.count != n {
				t.Fatalf("%q in %q: scan counted %d, strings.Count %d", tag, text, m.count, n)
			}
			if pos := strings.Index(text, tag); m.count > 0 && m.pos != pos {
				t.Fatalf("%q in %q: scan found it first at %d, strings.Index at %d", tag, text, m.pos, pos)
			}
		}
	})
}

// strictRef is strict mode for <think> and <answer> written with strings
// functions.
func strictRef(text string) bool {
	t := strings.TrimSpace(text)
	for _, tag := range []string{"<think>", "</think>", "<answer>", "</answer>"} {
		if strings.Count(t, tag) != 1 {
			return false
		}
	}
	a, b := strings.Index(t, "<think>"), strings.Index(t, "</think>")
	c, d := strings.Index(t, "<answer>"), strings.Index(t, "</answer>")
	return a == 0 && a < b && b < c && c < d &&
		strings.TrimSpace(t[b+len("</think>"):c]) == "" &&
		d+len("</answer>") == len(t)
}

// FuzzStrict compares strict mode with strictRef, and checks that a strict
// pass is a full partial score.
func FuzzStrict(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	strict, err := New(Params{})
	if err != nil {
		f.Fatal(err)
	}
	partial, err := New(Params{Mode: Partial})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, text string) {
		r := &scorers.Rollout{Completion: text}
		got := strict.Score(ctx, r)
		if want := strictRef(text); (got.Value == 1) != want {
			t.Fatalf("strict(%q) = %+v, reference says %v", text, got, want)
		}
		if got.Value == 0 && got.Reason == "" {
			t.Fatalf("strict(%q) = 0 without a reason", text)
		}
		if p := partial.Score(ctx, r); got.Value == 1 && p.Value != 1 {
			t.Fatalf("strict(%q) = 1 but partial = %v", text, p.Value)
		}
	})
}

// jsonBlockRef is lastJSONBlock scanning forward.
func jsonBlockRef(text string) (body string, found, closed bool) {
	for i := 0; ; i++ {
		j := strings.Index(text[i:], "```")
		if j < 0 {
			return body, found, closed
		}
		i += j
		line, rest, _ := strings.Cut(text[i+3:], "\n")
		if strings.EqualFold(strings.TrimSpace(line), "json") {
			found = true
			body, _, closed = strings.Cut(rest, "```")
			if !closed {
				body = ""
			}
		}
	}
}

// FuzzJSONBlock checks the fence finder against a forward scan, and that json
// mode never panics.
func FuzzJSONBlock(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	s, err := New(Params{Mode: JSON, RequiredKeys: []string{"a"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		body, found, closed := lastJSONBlock(text)
		rb, rf, rc := jsonBlockRef(text)
		if body != rb || found != rf || closed != rc {
			t.Fatalf("lastJSONBlock(%q) = %q %v %v, forward scan %q %v %v", text, body, found, closed, rb, rf, rc)
		}
		if closed && strings.Contains(body, "```") {
			t.Fatalf("body %q holds a fence", body)
		}
		s.Score(context.Background(), &scorers.Rollout{Completion: text})
	})
}

// FuzzMissingKey checks the top-level key walk against encoding/json decoding
// into a map, on valid JSON.
func FuzzMissingKey(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `null`, `"a"`, `{"a": 1}`, ` { "b" : [1, {"a": 2}], "a" : "x,}" } `,
		`{"a\"b": {"": [true, false, null]}, "\u00e9": -1.5e3}`, `{"\ufffd": 0, "x": "\\"}`,
		"{\"\xff\": 1}", `{"a": {"a": {"a": []}}, "b": 2}`,
	} {
		f.Add(s)
	}
	keys := []string{"a", "é", "", `a"b`, "\uFFFD", "b"}
	f.Fuzz(func(t *testing.T, doc string) {
		if !json.Valid([]byte(doc)) {
			return
		}
		var m map[string]json.RawMessage
		err := json.Unmarshal([]byte(doc), &m)
		wantObject := err == nil && m != nil
		wantMissing := -1
		for k, key := range keys {
			if _, ok := m[key]; !ok && wantObject {
				wantMissing = k
				break
			}
		}
		missing, isObject := missingKey(doc, keys)
		if isObject != wantObject || missing != wantMissing {
			t.Fatalf("missingKey(%q) = %d %v, encoding/json says %d %v", doc, missing, isObject, wantMissing, wantObject)
		}
	})
}

// FuzzOpenR1 checks compat openr1's strict mode against open-r1's pattern
// run by Go's regexp (\A for re.match's anchor).
func FuzzOpenR1(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("<think>\n\n</think>\n<answer>\n\n</answer>\nx")
	f.Add("<think>\n\n</think>\n<answer>\n\n</answer>x\n</answer>")
	re := regexp.MustCompile(`(?sm)\A<think>\n.*?\n</think>\n<answer>\n.*?\n</answer>$`)
	s, err := New(Params{Compat: OpenR1})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := s.Score(context.Background(), &scorers.Rollout{Completion: text}).Value
		if want := re.MatchString(text); (got == 1) != want {
			t.Fatalf("%q: %v, open-r1's pattern matches: %v", text, got, want)
		}
	})
}
