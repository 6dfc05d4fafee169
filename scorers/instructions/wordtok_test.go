package instructions

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"testing"
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
