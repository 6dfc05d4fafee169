package codeexec_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// cpProblem is a row of cp_problems.jsonl: ICPC-style problem packages
// from public contest repositories (CC BY-SA per problem; each row's `id`
// is <repository>/<problem directory>), with the jury's accepted and wrong
// solutions.
type cpProblem struct {
	ID             string              `json:"id"`
	Checker        string              `json:"checker"`
	Solutions      map[string][]string `json:"solutions"`
	WrongSolutions map[string][]string `json:"wrong_solutions"`
	// fields is the row as a dataset row: every key but the solutions.
	fields map[string]*structpb.Value
}

func cpProblems(t testing.TB) []cpProblem {
	t.Helper()
	lines := scorertest.ReadJSONL[json.RawMessage](t, filepath.Join("..", "..", "..", "shared", "data", "cp_problems.jsonl"))
	out := make([]cpProblem, len(lines))
	for i, line := range lines {
		p := &out[i]
		if err := json.Unmarshal(line, p); err != nil {
			t.Fatal(err)
		}
		var row map[string]any
		if err := json.Unmarshal(line, &row); err != nil {
			t.Fatal(err)
		}
		s, err := structpb.NewStruct(row)
		if err != nil {
			t.Fatal(err)
		}
		p.fields = s.GetFields()
		for _, k := range []string{"solutions", "wrong_solutions", "statement"} {
			delete(p.fields, k)
		}
	}
	if len(out) != 115 {
		t.Fatalf("%d problems, want 115", len(out))
	}
	return out
}

// cpParams is a code_exec function for the data set in language: the
// row's checker and time limit (5 s per test where the row has none: the
// data set's own check ran every solution with a 5 s timeout), twice it
// for Python (Kattis, where these limits come from, runs Python with PyPy;
// two of the accepted CPython solutions use 61% and 72% of their
// problem's limit on an idle machine here, and this VM's CPU time grows
// when the host is busy), scoring
// all: a wrong solution stops at its first failure (some are also slow,
// and would run into the time limit test after test), an accepted one
// runs every test.
func cpParams(language string) codeexec.Params {
	factor := 1.0
	if language == "python" {
		factor = 2
	}
	return codeexec.Params{
		TimeLimitFactor: new(factor),
		Language:        language, TestStyle: "io", Scoring: "all", CheckerField: "checker", TimeLimitField: "time_limit_s",
		TimeLimitSeconds: 5, MaxTimeLimitSeconds: new(15.0),
		Limits: sandbox.Limits{CPUSeconds: 60, WallSeconds: 120, MemoryMB: 1024, OutputKB: 8192},
	}
}

// fence is a completion whose last block is src.
var fence = map[string]string{"cpp": "```cpp\n%s\n```\n", "python": "Here it is:\n```python\n%s\n```\n"}

// TestCPProblems: on the competitive-programming data set, through the
// code_exec scorer and a real sandbox, every accepted solution of the jury
// is AC on every test, in C++ and in Python, with the row's checker (exact,
// case-insensitive, float tolerances, the jury's special checkers), and
// every known-wrong solution scores below 1. The full set (460 accepted,
// 124 wrong: 14 minutes here) runs with REWARDD_CP_FULL=1 (make test-cp);
// by default a deterministic subset: the first problem of each checker
// spec but exact and special, the first two special ones and every tenth
// exact one, one accepted and one wrong solution per language each.
func TestCPProblems(t *testing.T) {
	problems := cpProblems(t)
	full := os.Getenv("REWARDD_CP_FULL") == "1"
	p := pool(t, "cpp")
	scorer := map[string]*codeexec.Scorer{}
	for _, lang := range []string{"cpp", "python"} {
		scorer[lang] = newScorer(t, cpParams(lang), p)
	}
	jobs := cpJobs(problems, full)
	start := time.Now()
	results := make([]scorers.Result, len(jobs))
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := w; i < len(jobs); i += 2 {
				t0 := time.Now()
				results[i] = scorer[jobs[i].lang].Score(context.Background(), jobs[i].r)
				if d := time.Since(t0); os.Getenv("REWARDD_CP_LOG") == "1" {
					var cpu time.Duration
					if e := results[i].Execution; e != nil {
						for _, te := range e.Tests {
							cpu += te.CPU
						}
					}
					t.Logf("JOB %.3f cpu %.3f %s %s wrong=%v %s", d.Seconds(), cpu.Seconds(), jobs[i].problem, jobs[i].lang, jobs[i].wrong, results[i].Reason)
				}
			}
		})
	}
	wg.Wait()
	var accepted, wrong int
	for i, j := range jobs {
		res := results[i]
		switch {
		case res.Outcome != scorers.OK:
			t.Errorf("%s %s (wrong=%v): %s: %s", j.problem, j.lang, j.wrong, res.Outcome, res.Reason)
		case !j.wrong && res.Value != 1:
			t.Errorf("%s %s accepted solution: %v: %s", j.problem, j.lang, res.Value, res.Reason)
		case j.wrong && res.Value >= 1:
			t.Errorf("%s %s wrong solution scores %v: %s", j.problem, j.lang, res.Value, res.Reason)
		case !j.wrong && len(res.Execution.Tests) != res.Execution.Total:
			t.Errorf("%s %s accepted solution: %d of %d tests ran", j.problem, j.lang, len(res.Execution.Tests), res.Execution.Total)
		case !j.wrong:
			accepted++
			for _, te := range res.Execution.Tests {
				if te.Verdict != scorers.Accepted {
					t.Errorf("%s %s accepted solution, test %d: %s", j.problem, j.lang, te.Index, te.Verdict)
				}
			}
		default:
			wrong++
		}
	}
	t.Logf("%d accepted and %d wrong solutions scored in %v (full set: %v)", accepted, wrong, time.Since(start), full)
}

// cpJob is one solution to score: accepted, or known to be wrong.
type cpJob struct {
	problem, lang string
	wrong         bool
	r             *scorers.Rollout
}

// cpJobs lists the solutions TestCPProblems scores: every one when full,
// else the subset its documentation describes.
func cpJobs(problems []cpProblem, full bool) []cpJob {
	var jobs []cpJob
	seen := map[string]int{}
	for i, pr := range problems {
		seen[pr.Checker]++
		switch {
		case full:
		case pr.Checker == "exact" && i%10 != 0:
			continue
		case pr.Checker == "special" && seen[pr.Checker] > 2:
			continue
		case pr.Checker != "exact" && pr.Checker != "special" && seen[pr.Checker] > 1:
			continue
		}
		for _, lang := range []string{"cpp", "python"} {
			sols, wrong := pr.Solutions[lang], pr.WrongSolutions[lang]
			if !full {
				sols, wrong = sols[:min(1, len(sols))], wrong[:min(1, len(wrong))]
			}
			for _, src := range sols {
				jobs = append(jobs, cpJob{pr.ID, lang, false, &scorers.Rollout{ID: pr.ID, Completion: fmt.Sprintf(fence[lang], src), Fields: pr.fields}})
			}
			for _, src := range wrong {
				jobs = append(jobs, cpJob{pr.ID, lang, true, &scorers.Rollout{ID: pr.ID, Completion: fmt.Sprintf(fence[lang], src), Fields: pr.fields}})
			}
		}
	}
	return jobs
}
