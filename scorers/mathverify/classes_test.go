package mathverify_test

import (
	"bufio"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/mathverify"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// classCase is a line of testdata/classes.tsv: an example of a class of
// answers, rewardd's verdict and Math-Verify's side by side.
type classCase struct {
	line                   int
	class, gold, pred, why string
	want, mathVerify       string
}

func loadClasses(t *testing.T) []classCase {
	t.Helper()
	f, err := os.Open("testdata/classes.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []classCase
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if text := sc.Text(); text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 6 {
			t.Fatalf("classes.tsv line %d: %d columns, want 6", line, len(cols))
		}
		c := classCase{line: line, class: cols[0], gold: cols[1], pred: cols[2], want: cols[3], mathVerify: cols[4], why: cols[5]}
		for _, v := range []string{c.want, c.mathVerify} {
			if v != "0" && v != "1" {
				t.Fatalf("classes.tsv line %d: verdict %q, want 0 or 1", line, v)
			}
		}
		if (c.want != c.mathVerify) != (c.why != "") {
			t.Fatalf("classes.tsv line %d: a reason is given exactly when rewardd and Math-Verify differ", line)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestClasses scores the examples of testdata/classes.tsv with the default
// parameters: the classes of answers learnt to agree with Math-Verify, each
// with Math-Verify's own verdict beside rewardd's, and the deliberate
// differences with their reasons (listed in the README).
func TestClasses(t *testing.T) {
	s := scorertest.MustNew(t, mathverify.New, mathverify.Params{})
	differ := 0
	for _, c := range loadClasses(t) {
		got := s.Score(context.Background(), scorertest.Rollout(c.pred, str(c.gold)))
		if got.Outcome != scorers.OK {
			t.Errorf("line %d (%s): gold %q, prediction %q: %v (%s), want OK %s", c.line, c.class, c.gold, c.pred, got.Outcome, got.Reason, c.want)
			continue
		}
		if v := map[float64]string{0: "0", 1: "1"}[got.Value]; v != c.want {
			t.Errorf("line %d (%s): gold %q, prediction %q: %v (%s), want %s (Math-Verify %s)", c.line, c.class, c.gold, c.pred, got.Value, got.Reason, c.want, c.mathVerify)
		}
		if c.want != c.mathVerify {
			differ++
		}
	}
	t.Logf("%d cases differ from Math-Verify on purpose", differ)
}
