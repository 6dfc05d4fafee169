package exactmatch_test

import (
	"bufio"
	"context"
	"encoding/json"
	"math/big"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/exactmatch"
)

// gsm8kPath is shared/data/gsm8k_test.jsonl seen from this package's
// directory (tests run there); shared/ lies beside the repository.
const gsm8kPath = "../../../shared/data/gsm8k_test.jsonl"

// gsm8kRow is one GSM8K problem: its gold solution, the solution's text
// before the final "#### " line, and the final answer after it.
type gsm8kRow struct {
	solution, body, final string
}

// loadGSM8K reads the GSM8K solutions in path. The final answer is cut out
// here with the standard library, independently of package extract.
func loadGSM8K(t testing.TB, path string) []gsm8kRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("GSM8K data not available: %v", err)
	}
	defer f.Close()
	var rows []gsm8kRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var row struct{ Answer string }
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("%s line %d: %v", path, len(rows)+1, err)
		}
		i := strings.LastIndex(row.Answer, "#### ")
		if i < 0 {
			t.Fatalf("%s line %d: no final answer", path, len(rows)+1)
		}
		rows = append(rows, gsm8kRow{
			solution: row.Answer,
			body:     row.Answer[:i],
			final:    strings.TrimSpace(row.Answer[i+len("#### "):]),
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// plusOne returns the integer n+1 ("1,599" -> "1600").
func plusOne(t *testing.T, n string) string {
	v, ok := new(big.Int).SetString(strings.ReplaceAll(n, ",", ""), 10)
	if !ok {
		t.Fatalf("final answer %q is not an integer", n)
	}
	return v.Add(v, big.NewInt(1)).String()
}

func str(s string) *structpb.Value { return structpb.NewStringValue(s) }

// TestGSM8K scores every gold solution of the GSM8K test set against its own
// final answer (1), and against a wrong final answer (0), with the typical
// configuration; and the same with the whole solution as the reference.
func TestGSM8K(t *testing.T) {
	rows := loadGSM8K(t, gsm8kPath)
	if len(rows) != 1319 {
		t.Errorf("read %d rows, want 1319", len(rows))
	}
	s := mustNew(t, typical)
	p := typical
	p.ReferenceExtract = []string{"gsm8k"}
	whole := mustNew(t, p)

	ctx := context.Background()
	failures := 0
	check := func(name string, i int, s *exactmatch.Scorer, r *scorers.Rollout, want float64) {
		t.Helper()
		got := s.Score(ctx, r)
		if got.Outcome == scorers.OK && got.Value == want {
			return
		}
		if failures++; failures <= 10 {
			t.Errorf("row %d, %s: got %v %v (%s), want %v\ncompletion: %q", i+1, name, got.Outcome, got.Value, got.Reason, want, r.Completion)
		}
	}
	for i, row := range rows {
		wrong := plusOne(t, row.final)
		// Completions: the gold solution, the same ending in prose, in a
		// box and in answer tags (exercising each extractor of the chain).
		gold := row.solution
		prose := row.body + "So the answer is " + row.final + "."
		boxed := row.body + `The final answer is $\boxed{` + row.final + `}$.`
		tagged := "<think>" + row.body + "</think>\n<answer>" + row.final + "</answer>"

		check("gold", i, s, rollout(gold, str(row.final)), 1)
		check("prose", i, s, rollout(prose, str(row.final)), 1)
		check("boxed", i, s, rollout(boxed, str(row.final)), 1)
		check("tagged", i, s, rollout(tagged, str(row.final)), 1)
		check("number reference", i, s, rollout(gold, structpb.NewNumberValue(mustFloat(t, row.final))), 1)

		check("gold, wrong", i, s, rollout(row.body+"#### "+wrong, str(row.final)), 0)
		check("prose, wrong", i, s, rollout(row.body+"So the answer is "+wrong+".", str(row.final)), 0)
		check("boxed, wrong", i, s, rollout(row.body+`$\boxed{`+wrong+`}$`, str(row.final)), 0)

		// The raw answer column as the reference.
		check("whole, gold", i, whole, rollout(gold, str(row.solution)), 1)
		check("whole, boxed", i, whole, rollout(boxed, str(row.solution)), 1)
		check("whole, wrong", i, whole, rollout(row.body+"#### "+wrong, str(row.solution)), 0)
	}
	if failures > 0 {
		t.Errorf("%d failures", failures)
	}

	// Rows without a reference are not applicable, never 0.
	for _, sc := range []*exactmatch.Scorer{s, whole} {
		for _, r := range []*scorers.Rollout{
			{Completion: rows[0].solution},
			rollout(rows[0].solution, structpb.NewNullValue()),
			rollout(rows[0].solution, str("")),
			{Completion: rows[0].solution, Fields: map[string]*structpb.Value{"question": str("?")}},
		} {
			if got := sc.Score(ctx, r); got.Outcome != scorers.NotApplicable {
				t.Errorf("row without a reference (%v): got %+v", r.Fields, got)
			}
		}
	}
}

func mustFloat(t *testing.T, n string) float64 {
	f, ok := new(big.Float).SetString(strings.ReplaceAll(n, ",", ""))
	if !ok {
		t.Fatalf("final answer %q is not a number", n)
	}
	v, _ := f.Float64()
	return v
}
