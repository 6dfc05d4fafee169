package codeexec_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// langProblem is a row of testdata/cp_java.jsonl: a cp_problems row with a
// C++ and a Java solution.
type langProblem struct {
	ID        string              `json:"id"`
	TimeLimit *float64            `json:"time_limit_s"`
	Tests     []map[string]string `json:"tests"`
	Solutions map[string][]string `json:"solutions"`
	fields    map[string]*structpb.Value
}

func langProblems(b *testing.B) []langProblem {
	lines := scorertest.ReadJSONL[json.RawMessage](b, filepath.Join("testdata", "cp_java.jsonl"))
	out := make([]langProblem, len(lines))
	for i, line := range lines {
		p := &out[i]
		var row map[string]any
		if err := json.Unmarshal(line, p); err != nil {
			b.Fatal(err)
		}
		if err := json.Unmarshal(line, &row); err != nil {
			b.Fatal(err)
		}
		delete(row, "solutions")
		s, err := structpb.NewStruct(row)
		if err != nil {
			b.Fatal(err)
		}
		p.fields = s.GetFields()
	}
	return out
}

// naiveCommands are what a user's runner does without a sandbox, as
// bench/baseline/naive_runner.py --style cp does for C++: compile once
// with the toolchain's plain command, then a process per test.
var naiveCommands = map[string]struct {
	source  string
	compile func(dir, src string) []string
	run     func(dir string) []string
}{
	"cpp": {"main.cpp",
		func(dir, src string) []string {
			return []string{"g++", "-std=gnu++17", "-O2", "-o", filepath.Join(dir, "main"), src}
		},
		func(dir string) []string { return []string{filepath.Join(dir, "main")} }},
	"java": {"Main.java",
		func(dir, src string) []string { return []string{"javac", "-d", dir, src} },
		func(dir string) []string { return []string{"java", "-cp", dir, "Main"} }},
}

// naiveScore compiles src and runs it on every test of p, as a naive
// runner does; it returns the fraction of tests whose output is the
// expected one (trailing whitespace ignored, as the exact checker does).
func naiveScore(b *testing.B, lang, src string, p *langProblem) float64 {
	cmds := naiveCommands[lang]
	dir := b.TempDir()
	file := filepath.Join(dir, cmds.source)
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	argv := cmds.compile(dir, file)
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		b.Fatalf("%s: %v\n%s", argv[0], err, out)
	}
	limit := 5.0
	if p.TimeLimit != nil {
		limit = *p.TimeLimit
	}
	passed := 0
	for _, tc := range p.Tests {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration((2*limit+1)*float64(time.Second)))
		argv := cmds.run(dir)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(tc["stdin"])
		out, err := cmd.Output()
		cancel()
		if err == nil && trimLines(out) == trimLines([]byte(tc["stdout"])) {
			passed++
		}
	}
	return float64(passed) / float64(len(p.Tests))
}

// trimLines drops trailing whitespace of each line and trailing empty
// lines.
func trimLines(b []byte) string {
	lines := strings.Split(string(bytes.TrimRight(b, " \t\r\n")), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return strings.Join(lines, "\n")
}

// BenchmarkCPLanguages scores the four problems of testdata/cp_java.jsonl,
// a C++ (the jury's) and a Java solution of each, every test with the
// row's time limit, one submission at a time: through the code_exec
// scorer on a two-slot sandbox (rewardd), and as a naive runner does with
// no sandbox (compile with the plain command, then a process per test).
// Every op's programs are new (a comment with the op's number), as the
// distinct programs of a training step are: nothing is cached across ops.
// One op is the four submissions; compare each language's two sides, run
// alternately (-count).
func BenchmarkCPLanguages(b *testing.B) {
	problems := langProblems(b)
	p := pool(b, "cpp", "java")
	for _, lang := range []string{"cpp", "java"} {
		s := newScorer(b, cpParams(lang), p)
		op := 0
		src := func(pr *langProblem) string {
			return fmt.Sprintf("%s\n// op %d %d\n", pr.Solutions[lang][0], op, time.Now().UnixNano())
		}
		b.Run(lang+"/rewardd", func(b *testing.B) {
			for b.Loop() {
				op++
				for i := range problems {
					pr := &problems[i]
					r := &scorers.Rollout{ID: pr.ID, Completion: fmt.Sprintf("```%s\n%s\n```\n", lang, src(pr)), Fields: pr.fields}
					if res := s.Score(scorers.WithMemo(context.Background()), r); res.Outcome != scorers.OK || res.Value != 1 {
						b.Fatalf("%s %s: %+v", lang, pr.ID, res)
					}
				}
			}
		})
		b.Run(lang+"/naive", func(b *testing.B) {
			for b.Loop() {
				op++
				for i := range problems {
					pr := &problems[i]
					if v := naiveScore(b, lang, src(pr), pr); v != 1 {
						b.Fatalf("%s %s: naive score %v", lang, pr.ID, v)
					}
				}
			}
		})
	}
}
