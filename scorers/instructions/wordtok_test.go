package instructions

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/dlclark/regexp2/v2"
)

// TestWordTokenizeMatchesNLTK compares wordTokenizer with NLTK 3.8's
// word_tokenize on the texts of testdata/word_tokenize.jsonl (written by
// testdata/word_tokenize.py with the real nltk): every token, in order.
func TestWordTokenizeMatchesNLTK(t *testing.T) {
	p, err := newPunkt()
	if err != nil {
		t.Fatal(err)
	}
	w := newWordTokenizer(p)
	f, err := os.Open("testdata/word_tokenize.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n, bad := 0, 0
	for sc.Scan() {
		var c struct {
			Text   string   `json:"text"`
			Tokens []string `json:"tokens"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		n++
		got := w.tokens(c.Text)
		if slices.Equal(got, c.Tokens) {
			continue
		}
		bad++
		i := 0
		for i < len(got) && i < len(c.Tokens) && got[i] == c.Tokens[i] {
			i++
		}
		t.Errorf("text %d %.80q: token %d differs:\n got %q\nwant %q", n, c.Text, i, got[i:min(len(got), i+5)], c.Tokens[i:min(len(c.Tokens), i+5)])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 250 {
		t.Fatalf("read %d texts, want the 256 of testdata", n)
	}
	t.Logf("%d of %d texts tokenized as NLTK does", n-bad, n)
}

// TestAtomicEndPeriodRule: NLTK's final-period rule with its bracket
// group made atomic (wordtok.go) rewrites every text as NLTK's own
// pattern does, checked on every string of up to six characters over the
// characters that matter to it.
func TestAtomicEndPeriodRule(t *testing.T) {
	nltk := regexp2.MustCompile(`([^\.])(\.)([\]\)}>"'»”’ ]*)\s*$`)
	ours := regexp2.MustCompile(`([^\.])(\.)((?>[\]\)}>"'»”’ ]*))\s*$`)
	alphabet := []string{"a", ".", " ", "]", "\t", "\n", "'"}
	n := 0
	var walk func(s string, depth int)
	walk = func(s string, depth int) {
		want, err1 := nltk.Replace(s, "$1 $2 $3 ", -1, -1)
		got, err2 := ours.Replace(s, "$1 $2 $3 ", -1, -1)
		if err1 != nil || err2 != nil || got != want {
			t.Fatalf("%q: atomic gives %q (%v), NLTK's %q (%v)", s, got, err2, want, err1)
		}
		n++
		if depth == 6 {
			return
		}
		for _, c := range alphabet {
			walk(s+c, depth+1)
		}
	}
	walk("", 0)
	if n < 100000 {
		t.Fatalf("checked %d strings", n)
	}
}

// TestWordTokenizeLongRuns tokenizes long runs of the characters the
// rules repeat. With NLTK's own final-period pattern the first took
// about 10 s here (4 s in Python): quadratic backtracking, which the
// atomic group removes (BenchmarkWordTokenizeSpaceRun measures it against
// plain text of the same length).
func TestWordTokenizeLongRuns(t *testing.T) {
	p, err := newPunkt()
	if err != nil {
		t.Fatal(err)
	}
	w := newWordTokenizer(p)
	for _, c := range []struct {
		text string
		want []string
	}{
		{"a." + strings.Repeat(" ", 20000) + "b", []string{"a.", "b"}},
		{"a." + strings.Repeat("] ", 5000) + "\n", append([]string{"a", "."}, slices.Repeat([]string{"]"}, 5000)...)},
	} {
		if got := w.sentence(c.text); !slices.Equal(got, c.want) {
			t.Errorf("%.20q…: got %d tokens %.60q, want %d", c.text, len(got), got, len(c.want))
		}
	}
}

// BenchmarkWordTokenizeSpaceRun: a sentence ending in a period and 20,000
// spaces, against 20,000 characters of plain words, side by side.
func BenchmarkWordTokenizeSpaceRun(b *testing.B) {
	p, err := newPunkt()
	if err != nil {
		b.Fatal(err)
	}
	w := newWordTokenizer(p)
	for name, s := range map[string]string{
		"spaces": "a." + strings.Repeat(" ", 20000) + "b",
		"plain":  strings.Repeat("word ", 4000),
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				w.sentence(s)
			}
		})
	}
}
