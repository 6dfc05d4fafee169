package scorertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// GSM8KRow is one GSM8K problem: its gold solution, the solution's text
// before the final "#### " line, and the final answer after it.
type GSM8KRow struct {
	Solution, Body, Final string
}

// GSM8K reads the gold solutions of the GSM8K test set (1,319 rows),
// ../shared/data/gsm8k_test.jsonl from the repository root, and skips the
// test when the file cannot be opened. See ReadGSM8K.
func GSM8K(tb testing.TB) []GSM8KRow {
	tb.Helper()
	return ReadGSM8K(tb, dataPath(tb, "gsm8k_test.jsonl"))
}

// ReadGSM8K reads the GSM8K solutions in path, a JSON Lines file whose rows
// have an "answer" column ending in "#### <answer>". The final answer is cut
// out here with the standard library, independently of package extract. It
// skips the test when the file cannot be opened, and fails it when a row
// has no final answer.
func ReadGSM8K(tb testing.TB, path string) []GSM8KRow {
	tb.Helper()
	texts := readAnswers(tb, path)
	rows := make([]GSM8KRow, len(texts))
	for n, text := range texts {
		i := strings.LastIndex(text, "#### ")
		if i < 0 {
			tb.Fatalf("%s line %d: no final answer", path, n+1)
		}
		rows[n] = GSM8KRow{
			Solution: text,
			Body:     text[:i],
			Final:    strings.TrimSpace(text[i+len("#### "):]),
		}
	}
	return rows
}

// GSM8KTexts returns the gold solutions of the GSM8K test set as they are
// (about 300 bytes, 60 words each): realistic text for benchmarks. Like
// GSM8K, it skips the test when the file cannot be opened.
func GSM8KTexts(tb testing.TB) []string {
	tb.Helper()
	return readAnswers(tb, dataPath(tb, "gsm8k_test.jsonl"))
}

// readAnswers returns the "answer" column of each row of the JSON Lines file
// at path, skipping the test when the file cannot be opened.
func readAnswers(tb testing.TB, path string) []string {
	tb.Helper()
	rows := ReadJSONL[struct{ Answer string }](tb, path)
	texts := make([]string, len(rows))
	for i, row := range rows {
		texts[i] = row.Answer
	}
	return texts
}

// dataPath is shared/data/name, which lies beside the repository: the
// repository root is the first directory above the test's working
// directory (its package's) that holds a go.mod.
func dataPath(tb testing.TB, name string) string {
	tb.Helper()
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "data", name)
		}
		if filepath.Dir(dir) == dir {
			tb.Fatalf("no go.mod in %s or above it", wd)
		}
	}
}

// WithCommas writes an integer (its decimal digits, with an optional minus
// sign) with thousands separators, as GSM8K writes large answers: "-1234567"
// gives "-1,234,567".
func WithCommas(s string) string {
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return sign + b.String()
}
