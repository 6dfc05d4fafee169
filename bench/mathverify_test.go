package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/mathverify"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// The Math-Verify side-by-side: rewardd's kind: math and Hugging Face
// Math-Verify, run from its source by baseline/mathverify_runner.py, verify
// the same gold/prediction pairs in one invocation. Math-Verify's source is
// not fetched here (CI reaches package registries only): MATH_VERIFY_SRC
// names a checkout of github.com/huggingface/Math-Verify and
// LATEX2SYMPY_SRC one of the latex2sympy2_extended it pins (by default its
// submodule); without them the benchmark skips and says why.
const (
	mathVerifySuitePath = "../scorers/mathverify/testdata/mathverify_suite.jsonl"
	mathTestPath        = "../../shared/data/math_test.jsonl"
	mathVerifyRunner    = "baseline/mathverify_runner.py"
	python3             = "/usr/bin/python3"
)

// mvPair is a pair verified by both sides: the gold as the reference, the
// prediction as the completion, the same strings for both.
type mvPair struct {
	Gold string `json:"gold"`
	Pred string `json:"pred"`
}

// mathVerifyPairs returns the pairs of the side-by-side:
//
//   - the 261 cases of Math-Verify's own test suite that rewardd's
//     TestMathVerifySuite scores (the debatable ones left out);
//   - every fifth MATH test problem (1,000): its whole solution, which ends
//     in \boxed{answer}, against the gold $answer$, and for every other one
//     the solution with the boxed answer's last digit changed (a wrong
//     answer), when it has a digit;
//   - every fifth GSM8K test solution (264), "… #### 18" against 18.
//
// The MATH and GSM8K parts need the data beside the repository and are
// left out without it.
func mathVerifyPairs(tb testing.TB) []mvPair {
	tb.Helper()
	var pairs []mvPair
	for i, line := range readLines(tb, mathVerifySuitePath) {
		if i == 0 {
			continue // where the cases come from
		}
		var c struct {
			mvPair
			Skip string `json:"skip"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			tb.Fatalf("%s line %d: %v", mathVerifySuitePath, i+1, err)
		}
		if c.Skip == "" {
			pairs = append(pairs, c.mvPair)
		}
	}
	if _, err := os.Stat(mathTestPath); err == nil {
		for i, line := range readLines(tb, mathTestPath) {
			if i%5 != 0 {
				continue
			}
			var row struct {
				Solution string `json:"solution"`
			}
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				tb.Fatalf("%s line %d: %v", mathTestPath, i+1, err)
			}
			start, end, ok := lastBoxedSpan(row.Solution)
			if !ok {
				continue
			}
			gold, pred := row.Solution[start:end], row.Solution
			if i%10 == 5 {
				if wrong, ok := lastDigitChanged(gold); ok {
					pred = row.Solution[:start] + wrong + row.Solution[end:]
				}
			}
			pairs = append(pairs, mvPair{"$" + gold + "$", pred})
		}
	}
	if _, err := os.Stat(dataPath); err == nil {
		for i, row := range scorertest.ReadGSM8K(tb, dataPath) {
			if i%5 == 0 {
				pairs = append(pairs, mvPair{row.Final, row.Solution})
			}
		}
	}
	return pairs
}

func readLines(tb testing.TB, path string) []string {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// lastBoxedSpan returns where the contents of the last \boxed{…} of s
// start and end.
func lastBoxedSpan(s string) (start, end int, ok bool) {
	i := strings.LastIndex(s, `\boxed{`)
	if i < 0 {
		return 0, 0, false
	}
	start = i + len(`\boxed{`)
	depth := 1
	for j := start; j < len(s); j++ {
		switch s[j] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return start, j, true
			}
		}
	}
	return 0, 0, false
}

// lastDigitChanged returns s with its last digit replaced by the next one.
func lastDigitChanged(s string) (string, bool) {
	i := strings.LastIndexAny(s, "0123456789")
	if i < 0 {
		return "", false
	}
	return s[:i] + string('0'+(s[i]-'0'+1)%10) + s[i+1:], true
}

// mathVerifyResult is what mathverify_runner.py reports.
type mathVerifyResult struct {
	verdicts []*int // nil where Math-Verify raised
	perPair  time.Duration
	median   time.Duration
}

// runMathVerify verifies pairs with Math-Verify from its source, or skips.
func runMathVerify(tb testing.TB, pairs []mvPair) mathVerifyResult {
	tb.Helper()
	src := os.Getenv("MATH_VERIFY_SRC")
	if src == "" {
		tb.Skip("Math-Verify's source is not available: set MATH_VERIFY_SRC to a checkout of " +
			"github.com/huggingface/Math-Verify (and LATEX2SYMPY_SRC to its latex2sympy2_extended, " +
			"unless its submodule is checked out); it runs on Debian's python3-sympy and python3-antlr4, and java")
	}
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, p := range pairs {
		if err := enc.Encode(p); err != nil {
			tb.Fatal(err)
		}
	}
	cmd := exec.Command(python3, "-I", mathVerifyRunner, "--math-verify", src)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("%s: %v\n%s", mathVerifyRunner, err, stderr.String())
	}
	var res mathVerifyResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Skip     string  `json:"skip"`
			Verdict  *int    `json:"verdict"`
			Checks   *int    `json:"checks"`
			Seconds  float64 `json:"seconds"`
			MedianUS float64 `json:"median_us"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			tb.Fatalf("%s output line %d: %v", mathVerifyRunner, len(res.verdicts)+1, err)
		}
		switch {
		case line.Skip != "":
			tb.Skipf("Math-Verify cannot run: %s", line.Skip)
		case line.Checks != nil:
			if *line.Checks != len(pairs) || len(res.verdicts) != len(pairs) {
				tb.Fatalf("%s verified %d pairs (%d verdicts) of %d", mathVerifyRunner, *line.Checks, len(res.verdicts), len(pairs))
			}
			res.perPair = time.Duration(line.Seconds * 1e9 / float64(len(pairs)))
			res.median = time.Duration(line.MedianUS * 1e3)
			return res
		default:
			res.verdicts = append(res.verdicts, line.Verdict)
		}
	}
	tb.Fatalf("%s ended without its summary line\n%s", mathVerifyRunner, stderr.String())
	return res
}

// BenchmarkMathVerifySideBySide times rewardd's kind: math (default
// parameters, one goroutine, the pairs scored 20 times; the process's CPU
// time, the garbage collector's included, and the wall time) and
// Math-Verify (default options, the CPU time of its parse and verify calls
// without Python's start-up) on the same pairs in one run, and reports the
// ratio of their CPU times per pair and how often their verdicts agree.
// CPU times, because the machine may be shared: waiting for a core is
// nobody's cost.
//
//	MATH_VERIFY_SRC=… LATEX2SYMPY_SRC=… go test -run '^$' -bench MathVerifySideBySide -benchtime 1x ./bench
func BenchmarkMathVerifySideBySide(b *testing.B) {
	pairs := mathVerifyPairs(b)
	s := scorertest.MustNew(b, mathverify.New, mathverify.Params{})
	ctx := context.Background()
	rollouts := make([]*scorers.Rollout, len(pairs))
	for i, p := range pairs {
		rollouts[i] = scorertest.Rollout(p.Pred, structpb.NewStringValue(p.Gold))
	}
	var rewardd, rewarddWall time.Duration
	var mv mathVerifyResult
	ours := make([]int, len(pairs))
	for b.Loop() {
		const passes = 20
		start, startCPU := time.Now(), processCPU(b)
		for range passes {
			for i, r := range rollouts {
				res := s.Score(ctx, r)
				ours[i] = -1
				if res.Outcome == scorers.OK {
					ours[i] = int(res.Value)
				}
			}
		}
		rewardd = (processCPU(b) - startCPU) / time.Duration(passes*len(rollouts))
		rewarddWall = time.Since(start) / time.Duration(passes*len(rollouts))
		mv = runMathVerify(b, pairs)
	}
	agree, decided := 0, 0
	for i, v := range mv.verdicts {
		if v == nil {
			continue
		}
		decided++
		if ours[i] == *v {
			agree++
		}
	}
	b.ReportMetric(float64(len(pairs)), "pairs")
	b.ReportMetric(float64(rewardd.Nanoseconds()), "rewardd-ns/pair")
	b.ReportMetric(float64(rewarddWall.Nanoseconds()), "rewardd-wall-ns/pair")
	b.ReportMetric(float64(mv.perPair.Nanoseconds()), "mathverify-ns/pair")
	b.ReportMetric(float64(mv.median.Nanoseconds()), "mathverify-median-ns/pair")
	b.ReportMetric(float64(mv.perPair)/float64(rewardd), "mathverify/rewardd")
	b.ReportMetric(100*float64(agree)/float64(max(decided, 1)), "%agree")
}

// TestMathVerifyColumnOfClasses checks the mathverify column of
// scorers/mathverify/testdata/classes.tsv, where each class of answers has
// Math-Verify's verdict beside rewardd's, against Math-Verify run from its
// source (and skips without it, as the benchmark does).
func TestMathVerifyColumnOfClasses(t *testing.T) {
	const path = "../scorers/mathverify/testdata/classes.tsv"
	var pairs []mvPair
	var want []string
	for i, line := range readLines(t, path) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) < 5 {
			t.Fatalf("%s line %d: %d columns", path, i+1, len(cols))
		}
		pairs = append(pairs, mvPair{cols[1], cols[2]})
		want = append(want, cols[4])
	}
	res := runMathVerify(t, pairs)
	for i, v := range res.verdicts {
		got := "error"
		if v != nil {
			got = strconv.Itoa(*v)
		}
		if got != want[i] {
			t.Errorf("gold %q, prediction %q: Math-Verify says %s, classes.tsv %s", pairs[i].Gold, pairs[i].Pred, got, want[i])
		}
	}
}

// processCPU is the CPU time, user and system, this process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
