package codeexec_test

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// TestTotalOutput: what all the tests of a submission print together is
// bounded (limits.total_output_kb, 16 MiB by default), and a program that
// prints past it scores OK 0 with the verdict OLE, never an ERROR, however
// many tests it passed: a wrong program printing about 1 MB on each test
// of a row of 256 (each within output_kb), and a right one padding each
// answer to 10 kB on 31 tests with total_output_kb 240, scored by all (in
// rounds of 1, 2, 4, 8 and 16 tests, none of which prints 240 KiB by
// itself). What rewardd
// holds for the flood stays bounded: this process's peak resident memory
// grows by a bounded amount, logged with the figures.
func TestTotalOutput(t *testing.T) {
	p := pool(t, "cpp")
	rows := func(n int) map[string]*structpb.Value {
		var cases []any
		for k := range n {
			cases = append(cases, map[string]any{"stdin": strconv.Itoa(k), "stdout": strconv.Itoa(2 * k)})
		}
		tests, err := structpb.NewList(cases)
		if err != nil {
			t.Fatal(err)
		}
		return map[string]*structpb.Value{"tests": structpb.NewListValue(tests)}
	}
	programs := map[string]struct{ flood, padded string }{
		"python": {
			"```python\nimport sys\nsys.stdout.write('x' * 1000000)\n```",
			"```python\nprint(2 * int(input()), ' ' * 10000)\n```",
		},
		"cpp": {
			"```cpp\n#include <cstdio>\n#include <string>\nint main() { std::string s(1000000, 'x'); fputs(s.c_str(), stdout); }\n```",
			"```cpp\n#include <cstdio>\n#include <string>\nint main() { int n; scanf(\"%d\", &n); std::string pad(10000, ' '); printf(\"%d%s\\n\", 2 * n, pad.c_str()); }\n```",
		},
	}
	for _, language := range []string{"python", "cpp"} {
		t.Run(language+"/flood", func(t *testing.T) {
			s := newScorer(t, codeexec.Params{Language: language, TestStyle: "io"}, p)
			before := resetPeakRSS(t)
			got := s.Score(context.Background(), &scorers.Rollout{Completion: programs[language].flood, Fields: rows(256)})
			after := peakRSS(t)
			t.Logf("%s %v %q; rewardd's peak RSS %d MiB before, %d MiB after (+%d MiB)",
				got.Outcome, got.Value, got.Reason, before>>20, after>>20, (after-before)>>20)
			wantOLE(t, got)
			if grew := after - before; grew > 256<<20 {
				t.Errorf("rewardd's peak RSS grew by %d MiB for one submission's output", grew>>20)
			}
		})
		t.Run(language+"/padded", func(t *testing.T) {
			s := newScorer(t, codeexec.Params{Language: language, TestStyle: "io", Scoring: "all", Limits: sandbox.Limits{TotalOutputKB: 240}}, p)
			got := s.Score(context.Background(), &scorers.Rollout{Completion: programs[language].padded, Fields: rows(31)})
			t.Logf("%s %v %q", got.Outcome, got.Value, got.Reason)
			wantOLE(t, got)
			if !strings.Contains(got.Reason, "tests passed; test ") {
				t.Errorf("reason %q names no test", got.Reason)
			}
		})
	}
}

func wantOLE(t *testing.T, got scorers.Result) {
	t.Helper()
	if got.Outcome != scorers.OK || got.Value != 0 || got.Execution == nil || got.Execution.Verdict != scorers.OutputLimitExceeded {
		t.Errorf("ESCAPE: a program printing past the total output: %+v, want OK 0 with verdict OLE", got)
	}
}

// resetPeakRSS resets this process's peak resident set (clear_refs 5) and
// returns its resident set now, in bytes.
func resetPeakRSS(t *testing.T) int64 {
	t.Helper()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS (/proc/self/clear_refs): %v", err)
	}
	return procStatus(t, "VmRSS:")
}

// peakRSS is this process's peak resident set since the last reset.
func peakRSS(t *testing.T) int64 { return procStatus(t, "VmHWM:") }

func procStatus(t *testing.T, key string) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(key)); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(v)), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("/proc/self/status %s %q: %v", key, v, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("/proc/self/status has no %s", key)
	return 0
}

// TestBigInputs: a row whose tests' stdin comes to more than one sandbox
// job takes (sandbox.MaxInputMB) is run in as many jobs as it needs, and
// scored as one: 20 tests of 1 MiB each, in python and C++.
func TestBigInputs(t *testing.T) {
	p := pool(t, "cpp")
	var cases []any
	for k := range 20 {
		line := strings.Repeat(strconv.Itoa(k%10), 1<<20-1) + "\n"
		cases = append(cases, map[string]any{"stdin": line, "stdout": strconv.Itoa(len(line) - 1)})
	}
	tests, err := structpb.NewList(cases)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]*structpb.Value{"tests": structpb.NewListValue(tests)}
	programs := map[string]string{
		"python": "```python\nprint(len(input()))\n```",
		"cpp":    "```cpp\n#include <bits/stdc++.h>\nint main() { std::string s; std::cin >> s; std::cout << s.size() << '\\n'; }\n```",
	}
	for language, program := range programs {
		t.Run(language, func(t *testing.T) {
			s := newScorer(t, codeexec.Params{Language: language, TestStyle: "io", Limits: sandbox.Limits{WallSeconds: 60}}, p)
			got := s.Score(context.Background(), &scorers.Rollout{Completion: program, Fields: fields})
			if got.Outcome != scorers.OK || got.Value != 1 {
				t.Errorf("%v %v (%s), want OK 1", got.Outcome, got.Value, got.Reason)
			}
		})
	}
}
