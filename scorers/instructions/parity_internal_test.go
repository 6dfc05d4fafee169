package instructions

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neurosnap/sentences/data"
)

// parityRow is what the reference's Python libraries say about one text
// (testdata/parity.py).
type parityRow struct {
	Text         string `json:"text"`
	Lang         string `json:"lang"`
	Sentences    int    `json:"sentences"`
	CapitalWords int    `json:"capital_words"`
	// RuleSentences is IFEval's instructions_util.split_into_sentences.
	RuleSentences []string `json:"rule_sentences"`
}

func parityRows(t *testing.T) []parityRow {
	t.Helper()
	f, err := os.Open("testdata/parity.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []parityRow
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r parityRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	return rows
}

// TestParity checks that rewardd reads texts as the reference's Python
// libraries do, on IFEval's prompts and the PaLM 2 responses with their
// loose variants: langdetect's language (seed 0), NLTK Punkt's sentence
// count, the count of NLTK word tokens in capitals and IFEval's rule-based
// sentences, each equal on every text.
func TestParity(t *testing.T) {
	rows := parityRows(t)
	e, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	var lang, sent, caps, rule int
	for _, r := range rows {
		got, ok := e.lang.Detect(r.Text)
		if !ok {
			got = ""
		}
		if got != r.Lang {
			lang++
			t.Errorf("language: langdetect %q, rewardd %q: %.80q", r.Lang, got, r.Text)
		}
		if n := e.sentences(r.Text); n != r.Sentences {
			sent++
			if testing.Verbose() {
				t.Logf("sentences: NLTK %d, rewardd %d: %.80q", r.Sentences, n, r.Text)
			}
		}
		if got := splitIntoSentences(r.Text); !slices.Equal(got, r.RuleSentences) {
			rule++
			t.Errorf("split_into_sentences: Python %q, rewardd %q", r.RuleSentences, got)
		}
		if n := capitalWords(r.Text); n != r.CapitalWords {
			caps++
			if testing.Verbose() {
				t.Logf("capital words: NLTK %d, rewardd %d: %.80q", r.CapitalWords, n, r.Text)
			}
		}
	}
	t.Logf("%d texts: language differs on %d, sentence count on %d, capital-word count on %d, rule-based sentences on %d",
		len(rows), lang, sent, caps, rule)
	for _, c := range []struct {
		what     string
		got, max int
	}{{"sentence count", sent, 0}, {"capital words", caps, 0}} {
		if c.got > c.max {
			t.Errorf("%s differs on %d texts, at most %d did", c.what, c.got, c.max)
		}
	}
}

// TestMemo checks the memory of answers: the same answer as the function,
// the function run once per remembered text, the oldest forgotten first,
// and long texts never kept.
func TestMemo(t *testing.T) {
	calls := 0
	f := func(s string) int { calls++; return len(s) }
	m := newMemo[int]()
	for i := range memoSize + 1 {
		if got := m.get(string(rune('a'+i%26))+string(rune(i)), f); got <= 0 {
			t.Fatalf("got %d", got)
		}
	}
	if calls != memoSize+1 || len(m.m) != memoSize || len(m.order) != memoSize {
		t.Fatalf("%d calls, %d kept, %d in order", calls, len(m.m), len(m.order))
	}
	last := string(rune('a'+memoSize%26)) + string(rune(memoSize))
	m.get(last, f)
	if calls != memoSize+1 {
		t.Errorf("a remembered text was computed again")
	}
	long := string(make([]byte, memoMaxText+1))
	m.get(long, f)
	m.get(long, f)
	if calls != memoSize+3 || len(m.m) != memoSize {
		t.Errorf("a long text was kept: %d calls, %d kept", calls, len(m.m))
	}
}

// TestReadPunktParams: the hand reader of the Punkt parameters gives what
// encoding/json gives, on the file and on one with an escape (which it
// hands to encoding/json), and fails on a broken one.
func TestReadPunktParams(t *testing.T) {
	asset, err := data.Asset("data/english.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{asset, []byte(`{"A": {"x\u00e9": 1, "y": -2}, "B": {}}`), []byte(` { "A" : { } } `)} {
		var want map[string]map[string]int
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		got, err := readPunktParams(b)
		if err != nil {
			t.Fatalf("%.40q: %v", b, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%.40q: got %d sections, want %d (or their contents differ)", b, len(got), len(want))
		}
	}
	if len(asset) < 1000 {
		t.Fatalf("data/english.json is %d bytes", len(asset))
	}
	for _, bad := range []string{`{"A": {"x": 1}`, `{"A": {"x": y}}`, `{"A" {}}`, `{"A": {}} x`, `{"A": {"x": 1,}}`} {
		if _, err := readPunktParams([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestPyCSV compares pyCSV with Python's csv.reader on the texts of
// testdata/pycsv.jsonl (written by testdata/pycsv.py).
func TestPyCSV(t *testing.T) {
	data, err := os.ReadFile("testdata/pycsv.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(data)) {
		var c struct {
			Text      string          `json:"text"`
			Delimiter string          `json:"delimiter"`
			Rows      json.RawMessage `json:"rows"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		n++
		got, err := pyCSV(c.Text, []rune(c.Delimiter)[0])
		if string(c.Rows) == `"error"` {
			if err == nil {
				t.Errorf("%q (%q): got %q, Python raises", c.Text, c.Delimiter, got)
			}
			continue
		}
		var want [][]string
		if err := json.Unmarshal(c.Rows, &want); err != nil {
			t.Fatal(err)
		}
		if err != nil || len(got) != len(want) {
			t.Errorf("%q (%q): got %q, %v; Python %q", c.Text, c.Delimiter, got, err, want)
			continue
		}
		for i := range want {
			if !slices.Equal(got[i], want[i]) && !(len(got[i]) == 0 && len(want[i]) == 0) {
				t.Errorf("%q (%q): row %d got %q; Python %q", c.Text, c.Delimiter, i, got[i], want[i])
			}
		}
	}
	if n < 100 {
		t.Fatalf("read %d cases", n)
	}
}
