package instructions

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
)

// FuzzCountPlaceholders checks the scan against the reference's pattern,
// \[.*?\], run by Go's regexp (the same leftmost-first matches).
func FuzzCountPlaceholders(f *testing.F) {
	for _, s := range []string{"", "[a]", "[[a]]", "[a\n]b]", "[]]", "x[y[z]w]", "[\n[a]"} {
		f.Add(s)
	}
	re := regexp.MustCompile(`\[.*?\]`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := countPlaceholders(s), len(re.FindAllStringIndex(s, -1)); got != want {
			t.Fatalf("countPlaceholders(%q) = %d, the pattern finds %d", s, got, want)
		}
	})
}

// FuzzCountWords checks the count of \w runs against Go's regexp with
// Python's \w written as Unicode classes.
func FuzzCountWords(f *testing.F) {
	for _, s := range []string{"", "a b", "don't", "naïve café", "नमस्ते दुनिया", "a_b-c", "１２３"} {
		f.Add(s)
	}
	re := regexp.MustCompile(`[\p{L}\p{N}_]+`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := countWords(s), len(re.FindAllStringIndex(s, -1)); got != want {
			t.Fatalf("countWords(%q) = %d, the pattern finds %d", s, got, want)
		}
	})
}

// FuzzCapitalWords checks what the capital-word count promises: never
// negative nor more than the bytes of the text, and not 0 when a word
// between spaces is in capitals.
func FuzzCapitalWords(f *testing.F) {
	for _, s := range []string{"I DON'T KNOW", "NASA--ESA", "A.B.C. HELLO...WORLD", "CANNOT", "“QUOTED” (A)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := capitalWords(s)
		whole := 0
		for _, w := range strings.FieldsFunc(s, pySpace) {
			if isUpper(w) {
				whole++
			}
		}
		if n < 0 || n > len(s) || whole > 0 && n == 0 {
			t.Fatalf("capitalWords(%q) = %d, with %d upper-case words", s, n, whole)
		}
	})
}

// FuzzScore scores arbitrary completions under every instruction of
// IFEval with typical kwargs, strictly and loosely: never a panic, always
// OK and 0 or 1.
func FuzzScore(f *testing.F) {
	for _, s := range []string{"", "Hello, world.", "* a\n- b\n***\n<<t>>\nP.S. x", "```json\n{}\n```", "\"q\"", "ÀÉÎ ÕÜ", "\xff\xfe"} {
		f.Add(s)
	}
	e, err := newEnv()
	if err != nil {
		f.Fatal(err)
	}
	strict := &Scorer{p: Params{InstructionsField: "i", KwargsField: "k"}, specs: specs(), env: e, all: true}
	loose := &Scorer{p: strict.p, specs: strict.specs, env: e, all: true, loose: true}
	args := map[string]any{
		"keywords": []any{"a"}, "keyword": "a", "frequency": 1, "relation": "at least", "forbidden_words": []any{"b"},
		"letter": "a", "let_frequency": 1, "let_relation": "less than", "language": "en", "num_sentences": 2,
		"num_paragraphs": 2, "num_words": 3, "nth_paragraph": 1, "first_word": "a", "num_placeholders": 1,
		"postscript_marker": "P.S.", "num_bullets": 1, "num_highlights": 1, "section_spliter": "Section",
		"num_sections": 1, "prompt_to_repeat": "a", "end_phrase": "a", "capital_frequency": 1, "capital_relation": "at least",
		"phrase": "a b c", "small_n": 2, "n_start": 0, "n_end": 1, "N": 2, "keyword1": "a", "keyword2": "b",
		"last_word": "a", "instruction": "a b", "n_sent": 1, "n_words": 2, "n": 1, "m": 1,
		"min_words": 1, "max_words": 5, "percentage": 50, "reference_text": "a b c", "options": "yes/no", "word": "a", "sep": "-",
		"keyword3": "c", "keyword4": "d", "keyword5": "e",
	}
	var rows []map[string]*structpb.Value
	for id, sp := range specs() {
		kw := map[string]any{}
		for _, k := range sp.keys {
			kw[k] = args[k]
		}
		row, err := structpb.NewStruct(map[string]any{"i": []any{id}, "k": []any{kw}})
		if err != nil {
			f.Fatal(err)
		}
		rows = append(rows, row.GetFields())
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, row := range rows {
			for _, sc := range []*Scorer{strict, loose} {
				res := sc.Score(context.Background(), &scorers.Rollout{Completion: s, Fields: row})
				if res.Outcome != scorers.OK || res.Value != 0 && res.Value != 1 {
					t.Fatalf("%v on %q: %+v", row["i"], s, res)
				}
			}
		}
	})
}

// FuzzPunkt checks the sentence count on any text: never more than the
// sentence-end characters plus one; one for a text with none that is not
// blank, none for a blank one.
func FuzzPunkt(f *testing.F) {
	for _, s := range []string{"", "One. Two.", "Mr. Smith went. He came.", "\"Yes.\" She left.", "a . . . b", "(1. do this; 2. that)", "U.S.A. is big. Yes!?", "--. ..-"} {
		f.Add(s)
	}
	p, err := newPunkt()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := p.count(s)
		ends := strings.Count(s, ".") + strings.Count(s, "?") + strings.Count(s, "!")
		blank := strings.TrimFunc(s, unicode.IsSpace) == ""
		switch {
		case n < 0 || n > ends+1:
			t.Fatalf("count(%q) = %d with %d ends", s, n, ends)
		case ends == 0 && !blank && n != 1, blank && n != 0:
			t.Fatalf("count(%q) = %d", s, n)
		}
	})
}

// FuzzWordTokenize checks the word tokenizer on any text: never a panic,
// no token empty or holding white space, and no letter or digit lost or
// made up (the tokenizer only splits, and turns quotes into “ and ”).
func FuzzWordTokenize(f *testing.F) {
	for _, s := range []string{"", "I cannot go.", `"Hi," she said -- 'tis... (ok)?`, "a\u00a0b\u2028c", "\xff'"} {
		f.Add(s)
	}
	p, err := newPunkt()
	if err != nil {
		f.Fatal(err)
	}
	w := newWordTokenizer(p)
	alnum := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return r
			}
			return -1
		}, s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		toks := w.tokens(s)
		for _, tok := range toks {
			if tok == "" || strings.IndexFunc(tok, pySpace) >= 0 {
				t.Fatalf("tokens(%q) = %q", s, toks)
			}
		}
		if got, want := alnum(strings.Join(toks, "")), alnum(s); got != want {
			t.Fatalf("tokens(%q) = %q: letters and digits %q, want %q", s, toks, got, want)
		}
	})
}

// FuzzPyCSV checks the CSV reader on any text: never a panic, and a
// field's text always comes from the input (no quote made up beyond the
// input's).
func FuzzPyCSV(f *testing.F) {
	for _, s := range []string{"", "a,b\n\"c,d\"\n", "\"x\"\"y\"z,\r\n", "a\rb", "\"open\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, d := range []rune{',', '\t'} {
			rows, err := pyCSV(s, d)
			if err != nil {
				continue
			}
			quotes := 0
			for _, r := range rows {
				for _, fld := range r {
					quotes += strings.Count(fld, `"`)
				}
			}
			if quotes > strings.Count(s, `"`) {
				t.Fatalf("pyCSV(%q) = %q: more quotes than the input", s, rows)
			}
		}
	})
}
