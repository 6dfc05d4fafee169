package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/internal/sandboxtest"
	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers/scorertest"
)

// judgingConfig has a code_exec function for each way a judge's verdict
// was once got wrong; their names say which.
const judgingConfig = `functions:
  - name: humaneval            # the defaults: the prompt's helpers are defined again
    kind: code_exec
    test_style: assert
    scoring: all
  - name: humaneval_continued  # the completion continues the prompt
    kind: code_exec
    test_style: assert
    prefix_field: prompt
    scoring: all
  - name: exact_ci
    kind: code_exec
    test_style: io
    checker: exact_ci
  - name: cpp
    kind: code_exec
    language: cpp
    test_style: io
    time_limit_seconds: 2
  - name: java
    kind: code_exec
    language: java
    test_style: io
  - name: special
    kind: code_exec
    language: cpp
    test_style: io
    checker: special
  - name: python_io
    kind: code_exec
    test_style: io
    time_limit_seconds: 1
`

// kattisChecker reads the jury's answer, then the contestant's number with
// scanf, and asserts it read one: it aborts on "abc", on nothing, and on a
// number too long for a long long.
const kattisChecker = `#include <cassert>
#include <cstdio>
int main(int argc, char **argv) {
	FILE *ans = std::fopen(argv[2], "r");
	long long want, got;
	assert(std::fscanf(ans, "%lld", &want) == 1);
	assert(std::scanf("%lld", &got) == 1);
	long long more;
	assert(std::scanf("%lld", &more) != 1);
	return got == want ? 42 : 43;
}
`

// TestServeJudgesAsJudges: a real rewardd scores, in its real sandbox, the
// cases where a judge's verdict (contest judges', SandboxFusion's) differs
// from a naive one: each rollout gets the judge's score, OK, with the
// verdict in its reason, and the sandbox restarts no server for any of them.
func TestServeJudgesAsJudges(t *testing.T) {
	sandboxtest.SkipUnlessRoot(t)
	sandboxtest.SkipUnlessAvailable(t, "cpp", "java")
	srv := startServer(t, "--config", writeConfig(t, judgingConfig), "--workers", "2")
	defer srv.stop(t)
	he := scorertest.HumanEvalTask(t, "HumanEval/38")
	heFields := func() map[string]*structpb.Value {
		return map[string]*structpb.Value{"test": structpb.NewStringValue(he.Test), "entry_point": structpb.NewStringValue(he.EntryPoint)}
	}
	ioFields := func(stdin, stdout string) map[string]*structpb.Value {
		tests, _ := structpb.NewList([]any{map[string]any{"stdin": stdin, "stdout": stdout}})
		return map[string]*structpb.Value{"tests": structpb.NewListValue(tests)}
	}
	special := func() map[string]*structpb.Value {
		f := ioFields("1\n", "2\n")
		files, _ := structpb.NewStruct(map[string]any{"main": "check.cpp", "files": map[string]any{"check.cpp": kattisChecker}})
		f["checker_files"] = structpb.NewStructValue(files)
		return f
	}
	cppPrint := func(s string) string {
		return fmt.Sprintf("```cpp\n#include <cstdio>\nint main() { std::fputs(%q, stdout); }\n```", s)
	}
	// A second of CPU in C++, within its 2 s limit: accepted however many
	// run at once and whatever else the machine does.
	spin := func(k int) string {
		return fmt.Sprintf("```cpp\n#include <bits/stdc++.h>\n// copy %d\nint main() { auto t = std::clock();\n"+
			"  while (std::clock() - t < CLOCKS_PER_SEC) {}\n  std::puts(\"ok\"); }\n```", k)
	}
	type rollout struct {
		name       string
		prompt     string
		completion string
		fields     map[string]*structpb.Value
		want       float64
		reason     string // in the reason, when not ""
	}
	cases := map[string][]rollout{
		"humaneval": {
			{"canonical", he.Prompt, "```python\n" + he.Prompt + he.CanonicalSolution + "```", heFields(), 1, ""},
			{"helper redefined as identity", he.Prompt, "```python\n" + he.Prompt + "    return s\n\n\ndef encode_cyclic(s):\n    return s\n```", heFields(), 0, "WA"},
		},
		"humaneval_continued": {
			{"the body alone", he.Prompt, he.CanonicalSolution, heFields(), 1, ""},
		},
		"exact_ci": {
			{"ASCII case", "", "```python\nprint('K')\n```", ioFields("", "k\n"), 1, ""},
			{"the Kelvin sign is not k", "", "```python\nprint('\u212a')\n```", ioFields("", "k\n"), 0, "WA"},
		},
		"cpp": {
			{"64 threads", "", "```cpp\n#include <bits/stdc++.h>\nint main() { std::vector<std::thread> ts; std::atomic<int> n{0};\n" +
				"  for (int i = 0; i < 64; i++) ts.emplace_back([&] { n++; });\n  for (auto &t : ts) t.join(); std::printf(\"%d\\n\", n.load()); }\n```",
				ioFields("", "64\n"), 1, ""},
			{"a diagnostic bomb", "", "```cpp\ntemplate <class T> struct W { static_assert(sizeof(T) < 0, \"x\"); W<W<W<T>>> w; };\nint main() { W<int> w; }\n```",
				ioFields("", "0\n"), 0, "CE"},
		},
		"java": {
			{"assert fires", "", "```java\npublic class Main { public static void main(String[] a) { assert a.length > 5 : \"asserted\"; System.out.println(\"ok\"); } }\n```",
				ioFields("", "ok\n"), 0, "RE"},
		},
		"special": {
			{"right", "", cppPrint("2\n"), special(), 1, ""},
			{"abc where a number is expected", "", cppPrint("abc\n"), special(), 0, "WA"},
			{"nothing", "", cppPrint(""), special(), 0, "WA"},
			{"a 30-digit number", "", cppPrint("123456789012345678901234567890\n"), special(), 0, "WA"},
		},
		"python_io": {
			{"busy", "", "```python\nwhile True:\n    pass\n```", ioFields("", "x\n"), 0, "TLE"},
		},
	}
	for k := range 6 {
		cases["cpp"] = append(cases["cpp"], rollout{fmt.Sprintf("a second of CPU, copy %d", k), "", spin(k), ioFields("", "ok\n"), 1, ""})
	}
	// Two processes that keep both cores busy while the requests run.
	for range 2 {
		burner := exec.Command("/usr/bin/python3", "-I", "-S", "-c", "import time\nend = time.monotonic() + 120\nwhile time.monotonic() < end:\n    pass\n")
		if err := burner.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { burner.Process.Kill(); burner.Wait() }()
	}
	client := srv.client(t)
	for name, rs := range cases {
		req := &rewardv1.ScoreRequest{Functions: []string{name}}
		for i, r := range rs {
			req.Rollouts = append(req.Rollouts, &rewardv1.Rollout{Id: fmt.Sprint(i), Prompt: r.prompt, Completion: r.completion, Fields: &structpb.Struct{Fields: r.fields}})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		resp, err := client.Score(ctx, req)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fs := resp.GetFunctions()[0]
		for i, r := range rs {
			got, st, reason := fs.GetValues()[i], fs.GetStatus()[i], fs.GetReasons()[int32(i)]
			if st != rewardv1.ScoreStatus_SCORE_STATUS_OK || got != r.want || r.reason != "" && !strings.Contains(reason, r.reason) {
				t.Errorf("%s, %s: %v %v %q, want OK %v with %q", name, r.name, st, got, reason, r.want, r.reason)
			}
			ex := fs.GetExecutions()[int32(i)]
			for _, te := range ex.GetTests() {
				if te.GetWallSeconds() <= 0 || te.GetCpuSeconds() <= 0 && te.GetVerdict() != rewardv1.Verdict_VERDICT_ACCEPTED {
					t.Errorf("%s, %s: test %d's details %v: not filled", name, r.name, te.GetIndex(), te)
				}
			}
		}
	}
	_, metrics := httpGet(t, "http://"+srv.httpAddr+"/metrics")
	if !strings.Contains(metrics, "rewardd_sandbox_restarts_total 0\n") || !strings.Contains(metrics, `rewardd_sandbox_executions_total{result="sandbox_error"} 0`) {
		t.Errorf("the sandbox restarted servers or failed:\n%s", grepLines(metrics, "rewardd_sandbox_"))
	}
}

// grepLines returns the lines of s that start with prefix.
func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
