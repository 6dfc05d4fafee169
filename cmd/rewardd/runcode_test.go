package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/internal/sandboxtest"
	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

// runCodeConfig serves two code_exec functions for cp_problems' io tests
// with an exact checker (one per language), and lets requests run programs:
// inline code_exec, so POST /run_code, with limits a competitive
// programming problem needs.
const runCodeConfig = `functions:
  - name: io_cpp
    kind: code_exec
    language: cpp
    test_style: io
    checker: exact
    time_limit_field: time_limit_s
    time_limit_seconds: 5
    max_time_limit_seconds: 15
    limits: {cpu_seconds: 60, wall_seconds: 120, memory_mb: 1024, output_kb: 8192}
  - name: io_python
    kind: code_exec
    language: python
    test_style: io
    checker: exact
    time_limit_field: time_limit_s
    time_limit_seconds: 5
    max_time_limit_seconds: 15
    time_limit_factor: 2
    limits: {cpu_seconds: 60, wall_seconds: 120, memory_mb: 1024, output_kb: 8192}
limits:
  max_inflight_requests: 128 # verl's 64 requests at once, and the io scorer's
  request_timeout: 15m       # 8 slow wrong solutions in a request (REWARDD_CP_FULL)
inline:
  kinds: [exact_match, code_exec]
  code_exec_limits: {cpu_seconds: 30, wall_seconds: 120, memory_mb: 1024, output_kb: 8192, processes: 64}
`

// sandboxFusionAnswer is SandboxFusion's RunCodeResponse, as a client reads
// it.
type sandboxFusionAnswer struct {
	Status        string          `json:"status"`
	Message       string          `json:"message"`
	CompileResult *commandOutcome `json:"compile_result"`
	RunResult     *commandOutcome `json:"run_result"`
	Files         map[string]any  `json:"files"`
}

type commandOutcome struct {
	Status        string   `json:"status"`
	ExecutionTime *float64 `json:"execution_time"`
	ReturnCode    *int     `json:"return_code"`
	Stdout        *string  `json:"stdout"`
	Stderr        *string  `json:"stderr"`
}

// verl's verdicts on one test (verl/utils/reward_score/sandbox_fusion):
// true and false, or a code for what went wrong.
const (
	verlWrong        = 0
	verlPassed       = 1
	verlSandboxError = -1
	verlRuntimeError = -2
	verlTimeout      = -3
	verlCompileError = -4
)

// verlCall is verl's call_sandbox_api and _process_single_case, transcribed:
// the same body (one test: the program, its stdin, compile_timeout and
// run_timeout both the test's timeout, memory_limit_MB, empty files and
// fetch_files), a Gateway Timeout retried up to 3 times with a growing
// delay, any other HTTP error a sandbox error (-1), and the answer read as
// verl reads it into its verdict. It returns the verdict, the answer and
// the HTTP status.
func verlCall(url, token string, c *runCodeCall) (int, *sandboxFusionAnswer, int) {
	compileTimeout, wait := c.compileTimeout, c.wait
	if compileTimeout == 0 {
		compileTimeout = c.timeout
	}
	if wait == 0 {
		wait = time.Duration((compileTimeout + c.timeout + 10) * float64(time.Second))
	}
	body, _ := json.Marshal(map[string]any{
		"compile_timeout": compileTimeout, "run_timeout": c.timeout, "code": c.code, "stdin": c.stdin,
		"memory_limit_MB": c.memoryMB, "language": c.language, "files": map[string]any{}, "fetch_files": []string{},
	})
	var resp *http.Response
	for attempt := 0; attempt < 3; attempt++ {
		c.attempts = attempt + 1
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		var err error
		resp, err = (&http.Client{Timeout: wait}).Do(req)
		if err != nil {
			return verlSandboxError, nil, 0
		}
		if resp.StatusCode != http.StatusGatewayTimeout {
			break
		}
		resp.Body.Close()
		time.Sleep(time.Duration(attempt+1) * time.Second)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return verlSandboxError, nil, resp.StatusCode
	}
	var a sandboxFusionAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return verlSandboxError, nil, resp.StatusCode
	}
	rc := func(c *commandOutcome) int {
		if c.ReturnCode == nil {
			return -1 << 31 // None != 0 in Python
		}
		return *c.ReturnCode
	}
	switch a.Status {
	case "SandboxError":
		return verlSandboxError, &a, resp.StatusCode
	case "Failed":
		if c := a.CompileResult; c != nil && (c.Status == "Error" || c.Status == "TimeLimitExceeded" || c.Status == "Finished" && rc(c) != 0) {
			return verlCompileError, &a, resp.StatusCode
		}
		if r := a.RunResult; r != nil {
			switch {
			case r.Status == "TimeLimitExceeded":
				return verlTimeout, &a, resp.StatusCode
			case r.Status == "Error" || r.Status == "Finished" && rc(r) != 0:
				return verlRuntimeError, &a, resp.StatusCode
			}
		}
		return verlSandboxError, &a, resp.StatusCode
	case "Success":
		if r := a.RunResult; r != nil && r.Status == "Finished" {
			out := ""
			if r.Stdout != nil {
				out = *r.Stdout
			}
			if strings.TrimRight(out, "\n") == strings.TrimRight(c.expected, "\n") {
				return verlPassed, &a, resp.StatusCode
			}
			return verlWrong, &a, resp.StatusCode
		}
	}
	return verlSandboxError, &a, resp.StatusCode
}

// describe writes an answer for a test's failure message.
func describe(a *sandboxFusionAnswer) string {
	if a == nil {
		return "no answer"
	}
	b, _ := json.Marshal(a)
	return string(b)
}

// runCodeCall is one /run_code call of a test: what it sends and gets.
type runCodeCall struct {
	code, stdin, expected, language string
	timeout                         float64
	memoryMB                        int
	// compileTimeout is 0 for verl's: the timeout. wait is how long the
	// client waits for the answer (0: as verl, both timeouts and 10 s).
	compileTimeout float64
	wait           time.Duration

	verdict int
	answer  *sandboxFusionAnswer
	status  int
	// attempts is how many requests the call took (a 504 is retried),
	// took how long from its first request to its verdict.
	attempts int
	took     time.Duration
}

// callAll makes the calls as verl's reward function does: one test per
// request, at most 64 requests in flight (sandbox_fusion.max_concurrent).
func callAll(url, token string, calls []*runCodeCall) {
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			c.verdict, c.answer, c.status = verlCall(url, token, c)
			c.took = time.Since(start)
		})
	}
	wg.Wait()
}

// TestRunCode: a real `rewardd serve` answers POST /run_code as
// SandboxFusion does, so that verl's sandbox_fusion client, transcribed
// (one test per request, 64 at once), reads every verdict it knows off
// rewardd's answers; and /run_code agrees with the io scorer of the same
// server, test by test, on competitive-programming problems.
func TestRunCode(t *testing.T) {
	srv := startCodeServer(t, runCodeConfig, "--workers", "2")
	url := "http://" + srv.httpAddr + "/run_code"
	t.Run("BadInput", func(t *testing.T) { testRunCodeBadInput(t, srv, url) })
	t.Run("Limits", func(t *testing.T) { testRunCodeLimits(t, url) })
	t.Run("verl", func(t *testing.T) { testRunCodeVerl(t, url) })
	t.Run("AgreesWithIO", func(t *testing.T) { testRunCodeAgreesWithIO(t, srv, url) })

	_, metrics := httpGet(t, "http://"+srv.httpAddr+"/metrics")
	if !strings.Contains(metrics, `rewardd_requests_total{code="OK",method="http_run_code"}`) {
		t.Errorf("/metrics does not count /run_code requests under method http_run_code")
	}
	if !strings.Contains(metrics, `rewardd_sandbox_executions_total{result="sandbox_error"} 0`+"\n") {
		t.Errorf("/metrics counts sandbox errors; the server's warnings and errors:\n%s", warnings(srv.logText()))
	}
}

// warnings are the lines of a server's log at level warn or above.
func warnings(logs string) string {
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"level":"warn"`) || strings.Contains(line, `"level":"error"`) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// postRunCode posts body to url and returns the HTTP status and the
// SandboxFusion answer (nil when the body is not one) or the error body.
func postRunCode(t *testing.T, url string, body []byte) (int, *sandboxFusionAnswer, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	var a sandboxFusionAnswer
	if resp.StatusCode != http.StatusOK || json.Unmarshal(out, &a) != nil {
		return resp.StatusCode, nil, string(out)
	}
	return resp.StatusCode, &a, string(out)
}

// testRunCodeBadInput: requests the sandbox could not set up (a NUL in a
// file's name, files that clash with each other or with the program's
// own, a file bigger than the work dir, stdin over what /run_code takes,
// more files than leave room for the program's own) are 400s naming what
// is wrong, before anything reaches the sandbox: no fork server is
// restarted, and the next program runs.
func testRunCodeBadInput(t *testing.T, srv *process, url string) {
	restarts := metric(t, srv, "rewardd_sandbox_restarts_total")
	body := func(fields map[string]any) []byte {
		b, err := json.Marshal(fields)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	py := func(files map[string]any, stdin string) []byte {
		return body(map[string]any{"code": "print(1)", "language": "python", "stdin": stdin, "run_timeout": 5, "files": files})
	}
	// The big bodies are written out rather than marshalled: encoding
	// hundreds of MB under the race detector takes most of a minute.
	big := []byte(`{"code": "print(1)", "language": "python", "files": {"big": "` + strings.Repeat("eHh4", 24<<20) + `"}}`) // 72 MiB of "xxx…"
	stdin := []byte(`{"code": "print(1)", "language": "python", "stdin": "` + strings.Repeat("y", 24_000_000) + `"}`)
	for _, c := range []struct {
		name, want string
		body       []byte
	}{
		{"a NUL in a file name", "NUL byte", py(map[string]any{"a\x00b": "eA=="}, "")},
		{"a file and a directory of the same name", `\"a\" is a file, and the directory of \"a/b\"`, py(map[string]any{"a": "", "a/b": ""}, "")},
		{"the program's source", `\"main.cpp\" is where the sandbox puts the program`,
			body(map[string]any{"code": cppDouble, "language": "cpp", "files": map[string]any{"main.cpp": ""}})},
		{"below what the compile makes", `\"main\" is where the sandbox puts the program`,
			body(map[string]any{"code": cppDouble, "language": "cpp", "files": map[string]any{"main/x": ""}})},
		{"a file larger than the work dir", `files[\"big\"] is over 8388608 bytes (8 MiB)`, big},
		{"24 MB of stdin", "code, stdin and files come to 24000008 bytes", stdin},
	} {
		code, a, out := postRunCode(t, url, c.body)
		if code != http.StatusBadRequest || a != nil || !strings.Contains(out, c.want) {
			t.Errorf("%s: HTTP %d %.300s, want 400 with %q", c.name, code, out, c.want)
		}
	}
	// As many files as /run_code takes leave room for the program's own
	// (the sandbox writes at most 64 files): one more is a 400.
	files := map[string]any{}
	for k := range 32 {
		files[fmt.Sprintf("in/%02d.txt", k)] = base64.StdEncoding.EncodeToString([]byte(fmt.Sprint(k)))
	}
	code, a, out := postRunCode(t, url, body(map[string]any{"code": cppDouble, "language": "cpp", "stdin": "4", "files": files}))
	if code != http.StatusOK || a == nil || a.Status != "Success" || *a.RunResult.Stdout != "8\n" {
		t.Errorf("a C++ program with 32 files, after the bad requests: HTTP %d %s, want Success", code, out)
	}
	files["in/32.txt"] = ""
	if code, _, out := postRunCode(t, url, body(map[string]any{"code": cppDouble, "language": "cpp", "files": files})); code != http.StatusBadRequest || !strings.Contains(out, "33 files, at most 32") {
		t.Errorf("33 files: HTTP %d %s, want 400 naming the bound", code, out)
	}
	if got := metric(t, srv, "rewardd_sandbox_restarts_total"); got != restarts {
		t.Errorf("rewardd_sandbox_restarts_total went from %s to %s: a bad request reached a fork server", restarts, got)
	}
}

// testRunCodeLimits: a limit over the server's is lowered to it, and the
// answer's message says so; memory_limit_MB lowered so binds (a program
// that fits in what it asked for does not in the server's 1024 MB).
func testRunCodeLimits(t *testing.T, url string) {
	post := func(fields map[string]any) (*sandboxFusionAnswer, string) {
		t.Helper()
		b, _ := json.Marshal(fields)
		code, a, out := postRunCode(t, url, b)
		if code != http.StatusOK || a == nil {
			t.Fatalf("HTTP %d %s, want 200 and an answer", code, out)
		}
		return a, out
	}
	a, out := post(map[string]any{"code": "print(1)", "language": "python", "run_timeout": 200})
	if a.Status != "Success" || !strings.Contains(a.Message, "inline.code_exec_limits.wall_seconds): the program ran with 120 s") ||
		!strings.Contains(a.Message, "inline.code_exec_limits.cpu_seconds): the program ran with 30 s of CPU") {
		t.Errorf("run_timeout 200: %s, want Success, and a message that it ran with 120 s of wall time and 30 s of CPU", out)
	}
	a, out = post(map[string]any{"code": "x = bytearray(1500 << 20)\nprint(len(x))", "language": "python", "memory_limit_MB": 4096})
	if a.Status != "Failed" || !strings.Contains(a.Message, "inline.code_exec_limits.memory_mb): the program ran with 1024 MB") {
		t.Errorf("1500 MB with memory_limit_MB 4096: %s, want Failed, and a message that it ran with 1024 MB", out)
	}
	a, out = post(map[string]any{"code": cppDouble, "language": "cpp", "stdin": "4", "compile_timeout": 60})
	if a.Status != "Success" || !strings.Contains(a.Message, "the compile ran with 10 s") {
		t.Errorf("compile_timeout 60: %s, want Success, and a message that the compile ran with 10 s", out)
	}
}

// startCodeServer starts `rewardd serve` with the config text and args,
// or skips the test when the sandbox cannot run here.
func startCodeServer(t *testing.T, config string, args ...string) *process {
	t.Helper()
	sandboxtest.SkipUnlessRoot(t)
	path := filepath.Join(t.TempDir(), "config.yml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return startServer(t, append([]string{"--config", path}, args...)...)
}

// A C++ program that doubles its input, and one whose compile runs for
// minutes (a constant evaluated in tens of billions of steps).
const (
	cppDouble   = "#include <bits/stdc++.h>\nint main() { long long x; std::cin >> x; std::cout << 2 * x << std::endl; }\n"
	cppSlowling = "constexpr long f() { long s = 0; for (long i = 0; i < 200000; i++) for (long j = 0; j < 200000; j++) s += i ^ j; return s; }\n" +
		"static_assert(f() != 1);\nint main() {}\n"
)

// testRunCodeVerl: every verdict verl's client knows, from rewardd's
// answers, and 64 concurrent requests of one C++ program compile it once.
func testRunCodeVerl(t *testing.T, url string) {
	cases := verlCases()
	var calls []*runCodeCall
	for _, c := range cases {
		calls = append(calls, c.call)
	}
	same := sameProgramCalls()
	callAll(url, "", append(calls, same...))

	for _, c := range cases {
		checkVerlAnswer(t, c)
		if a := c.call.answer; c.name == "cpp compile out of time" && a != nil && (a.CompileResult == nil || a.CompileResult.Status != "TimeLimitExceeded") {
			t.Errorf("a compile of minutes: %s, want compile_result TimeLimitExceeded", describe(a))
		}
	}
	compiles := map[float64]int{}
	for _, c := range same {
		if c.verdict != verlPassed {
			t.Errorf("the same program, stdin %q: verdict %d (%s)", c.stdin, c.verdict, describe(c.answer))
			continue
		}
		compiles[*c.answer.CompileResult.ExecutionTime]++
	}
	if len(compiles) != 1 {
		t.Errorf("64 concurrent requests of one program: %d distinct compiles (%v), want 1", len(compiles), compiles)
	}
}

// verlCase is a /run_code call and what verl must read off its answer.
type verlCase struct {
	name string
	call *runCodeCall
	want verlWant
}

type verlWant struct {
	verdict          int
	status, run      string
	returnCode       int // checked when run is Finished
	stdout, inStderr string
}

// verlCases are programs that give each verdict verl knows; a call that
// names no timeout or memory limit gets 10 s and 1024 MB.
func verlCases() []verlCase {
	cases := []verlCase{
		{"python passes", &runCodeCall{code: "print(int(input()) * 2)", stdin: "21\n", expected: "42\n", language: "python"},
			verlWant{verdict: verlPassed, status: "Success", run: "Finished", stdout: "42\n"}},
		{"python wrong", &runCodeCall{code: "print(int(input()) + 2)", stdin: "21\n", expected: "42\n", language: "python"},
			verlWant{verdict: verlWrong, status: "Success", run: "Finished", stdout: "23\n"}},
		{"python exits 3", &runCodeCall{code: "import sys\nprint('partial')\nsys.exit(3)", expected: "42", language: "python"},
			verlWant{verdict: verlRuntimeError, status: "Failed", run: "Finished", returnCode: 3, stdout: "partial\n"}},
		{"python raises", &runCodeCall{code: "import sys\nprint('to stderr', file=sys.stderr)\nraise ValueError('no')", expected: "42", language: "python"},
			verlWant{verdict: verlRuntimeError, status: "Failed", run: "Finished", returnCode: 1, inStderr: "to stderr\nValueError: no"}},
		{"python loops", &runCodeCall{code: "while True:\n    pass", expected: "42", language: "python", timeout: 1},
			verlWant{verdict: verlTimeout, status: "Failed", run: "TimeLimitExceeded"}},
		{"python sleeps", &runCodeCall{code: "import time\ntime.sleep(30)", expected: "42", language: "python", timeout: 1},
			verlWant{verdict: verlTimeout, status: "Failed", run: "TimeLimitExceeded"}},
		// run_timeout is wall time: 1.5 s asleep is over 0.5 s, though
		// the program uses no CPU.
		{"python sleeps past a wall run_timeout", &runCodeCall{code: "import time\ntime.sleep(1.5)\nprint(42)", expected: "42", language: "python", timeout: 0.5},
			verlWant{verdict: verlTimeout, status: "Failed", run: "TimeLimitExceeded"}},
		// A signal ends it: Finished, return_code minus the signal
		// (SIGABRT, 6), as SandboxFusion's subprocess reports it.
		{"python aborts", &runCodeCall{code: "import os\nprint('partial', flush=True)\nos.abort()", expected: "42", language: "python"},
			verlWant{verdict: verlRuntimeError, status: "Failed", run: "Finished", returnCode: -6, stdout: "partial\n"}},
		{"python over memory", &runCodeCall{code: "x = bytearray(900 << 20)\nprint(len(x))", expected: "42", language: "python", memoryMB: 128},
			verlWant{verdict: verlRuntimeError, status: "Failed", run: "Error"}},
		{"cpp passes", &runCodeCall{code: cppDouble, stdin: "-7\n", expected: "-14\n", language: "cpp"},
			verlWant{verdict: verlPassed, status: "Success", run: "Finished", stdout: "-14\n"}},
		{"cpp does not compile", &runCodeCall{code: "int main() { return x; }", expected: "42", language: "cpp"},
			verlWant{verdict: verlCompileError, status: "Failed", inStderr: "'x' was not declared"}},
		{"cpp compile out of time", &runCodeCall{code: cppSlowling, expected: "42", language: "cpp", timeout: 2},
			verlWant{verdict: verlCompileError, status: "Failed"}},
		{"cpp returns 7", &runCodeCall{code: "int main() { return 7; }", expected: "42", language: "cpp"},
			verlWant{verdict: verlRuntimeError, status: "Failed", run: "Finished", returnCode: 7}},
		{"cpp aborts", &runCodeCall{code: "#include <cstdlib>\nint main() { std::abort(); }", expected: "42", language: "cpp"},
			verlWant{verdict: verlRuntimeError, status: "Failed", run: "Finished", returnCode: -6}},
		{"cpp segfaults", &runCodeCall{code: "int main() { volatile int *p = 0; return *p; }", expected: "42", language: "cpp"},
			verlWant{verdict: verlRuntimeError, status: "Failed", run: "Finished", returnCode: -11}},
		{"cpp loops", &runCodeCall{code: "int main() { volatile unsigned x = 0; for (;;) x++; }", expected: "42", language: "cpp", timeout: 1},
			verlWant{verdict: verlTimeout, status: "Failed", run: "TimeLimitExceeded"}},
		{"nodejs passes", &runCodeCall{code: "const l = require('fs').readFileSync(0, 'utf8'); console.log(2 * Number(l));", stdin: "4\n", expected: "8", language: "nodejs"},
			verlWant{verdict: verlPassed, status: "Success", run: "Finished", stdout: "8\n"}},
	}
	for _, c := range cases {
		if c.call.timeout == 0 {
			c.call.timeout = 10
		}
		if c.call.memoryMB == 0 {
			c.call.memoryMB = 1024
		}
	}
	return cases
}

// sameProgramCalls are the same C++ program on 64 tests, as verl sends a
// problem's tests at once: it must compile once.
func sameProgramCalls() []*runCodeCall {
	var same []*runCodeCall
	for k := range 64 {
		same = append(same, &runCodeCall{code: strings.Replace(cppDouble, "2 * x", "2 * x + 0", 1), stdin: fmt.Sprint(k), expected: fmt.Sprint(2 * k),
			language: "cpp", timeout: 10, memoryMB: 1024})
	}
	return same
}

// checkVerlAnswer checks the verdict verl reads off c's answer, and the
// answer's fields verl and SandboxFusion's other clients read.
func checkVerlAnswer(t *testing.T, c verlCase) {
	t.Helper()
	a, w := c.call.answer, c.want
	if c.call.verdict != w.verdict || a == nil || a.Status != w.status {
		t.Errorf("%s: verl's verdict %d (HTTP %d, %s), want %d with status %s", c.name, c.call.verdict, c.call.status, describe(a), w.verdict, w.status)
		return
	}
	if a.Files == nil {
		t.Errorf("%s: no files in the answer (SandboxFusion answers {})", c.name)
	}
	switch {
	case w.run == "" && a.RunResult != nil:
		t.Errorf("%s: a run_result %+v for a program that did not compile", c.name, a.RunResult)
	case w.run != "" && (a.RunResult == nil || a.RunResult.Status != w.run):
		t.Errorf("%s: %s, want run_result status %s", c.name, describe(a), w.run)
	case w.run == "Finished" && (a.RunResult.ReturnCode == nil || *a.RunResult.ReturnCode != w.returnCode):
		t.Errorf("%s: return_code %v, want %d", c.name, a.RunResult.ReturnCode, w.returnCode)
	case w.stdout != "" && *a.RunResult.Stdout != w.stdout:
		t.Errorf("%s: stdout %q, want %q", c.name, *a.RunResult.Stdout, w.stdout)
	case w.run != "" && a.RunResult.ExecutionTime == nil:
		t.Errorf("%s: no execution_time", c.name)
	}
	if w.inStderr != "" {
		var stderr string
		if r := a.RunResult; r != nil && r.Stderr != nil {
			stderr = *r.Stderr
		}
		if r := a.CompileResult; r != nil && r.Stderr != nil {
			stderr += *r.Stderr
		}
		if !strings.Contains(stderr, w.inStderr) {
			t.Errorf("%s: stderr %q does not hold %q", c.name, stderr, w.inStderr)
		}
	}
	if (c.call.language == "cpp") != (a.CompileResult != nil) {
		t.Errorf("%s: compile_result %+v (only compiled languages have one)", c.name, a.CompileResult)
	}
}

// cpRow is a row of cp_problems.jsonl (ICPC-style problem packages from
// public contest repositories, CC BY-SA per problem; `id` names the
// repository and the problem's directory).
type cpRow struct {
	ID             string `json:"id"`
	Tests          []struct{ Stdin, Stdout string }
	TimeLimit      *float64            `json:"time_limit_s"`
	Checker        string              `json:"checker"`
	Solutions      map[string][]string `json:"solutions"`
	WrongSolutions map[string][]string `json:"wrong_solutions"`
}

func cpRows(t *testing.T) []cpRow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "data", "cp_problems.jsonl"))
	if err != nil {
		t.Skipf("competitive-programming data (../shared beside the repo): %v", err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	rows := make([]cpRow, len(lines))
	for i, line := range lines {
		if err := json.Unmarshal(line, &rows[i]); err != nil {
			t.Fatalf("cp_problems.jsonl:%d: %v", i+1, err)
		}
	}
	return rows
}

// sameLines is the exact checker: lines equal once trailing white space
// and trailing empty lines are dropped.
func sameLines(got, want string) bool {
	lines := func(s string) []string {
		ls := strings.Split(s, "\n")
		for i := range ls {
			ls[i] = strings.TrimRight(ls[i], " \t\r\f\v")
		}
		for len(ls) > 0 && ls[len(ls)-1] == "" {
			ls = ls[:len(ls)-1]
		}
		return ls
	}
	return slices.Equal(lines(got), lines(want))
}

// testRunCodeAgreesWithIO: on problems of cp_problems.jsonl, every accepted
// and known-wrong solution passes a test through /run_code (the answer's
// stdout compared exactly, as the exact checker does) exactly when the io
// scorer of the same server gives that test AC. By default every 20th
// problem, one accepted and one wrong solution per language;
// REWARDD_CP_FULL=1 takes every problem and solution. Not the problems
// with a special checker: they have several right answers, and a program
// may print another on each run (a set of strings, whose order Python's
// string hashing changes from process to process), which an exact compare
// of two runs cannot judge.
func testRunCodeAgreesWithIO(t *testing.T, srv *process, url string) {
	full := os.Getenv("REWARDD_CP_FULL") == "1"
	sols := pickSolutions(cpRows(t), full)
	// The io scorer, Score calls of 8 solutions one after the other per
	// language; then /run_code, every test, 64 at once (at the same time,
	// the scorer would wait for sandbox slots behind 64 requests).
	calls := runCodeCalls(sols)
	start := time.Now()
	scores := scoreAllIO(t, srv, sols)
	callAll(url, "", calls)
	compared, passed := compareWithIO(t, sols, scores)
	problems := map[string]bool{}
	for _, s := range sols {
		problems[s.problem.ID] = true
	}
	t.Logf("%d solutions of %d problems, %d tests compared (%d passed) in %v (full set: %v)", len(sols), len(problems), compared, passed, time.Since(start), full)
}

// pickSolutions picks the solutions testRunCodeAgreesWithIO compares: of
// every 20th problem with an exact checker, one accepted and one wrong
// solution per language; with full, every solution of every such problem.
func pickSolutions(rows []cpRow, full bool) []*cpSolution {
	var sols []*cpSolution
	for i := range rows {
		if !full && i%20 != 0 || rows[i].Checker == "special" {
			continue
		}
		r := &rows[i]
		for _, lang := range []string{"cpp", "python"} {
			right, wrong := r.Solutions[lang], r.WrongSolutions[lang]
			if !full {
				right, wrong = right[:min(1, len(right))], wrong[:min(1, len(wrong))]
			}
			for _, src := range right {
				sols = append(sols, &cpSolution{problem: r, language: lang, source: src})
			}
			for _, src := range wrong {
				sols = append(sols, &cpSolution{problem: r, language: lang, wrong: true, source: src})
			}
		}
	}
	return sols
}

// runCodeCalls makes each solution's /run_code calls, one per test; it
// returns them all. The io scorer's time limit is CPU time, and it gives a
// test twice that and a second of wall time; run_timeout is wall time (and
// as much CPU): each call's is that wall time, so that a solution the io
// scorer accepts has as much time here as there, however loaded the
// machine (see compareWithIO).
func runCodeCalls(sols []*cpSolution) []*runCodeCall {
	var calls []*runCodeCall
	for _, s := range sols {
		tl := 5.0
		if s.problem.TimeLimit != nil {
			tl = *s.problem.TimeLimit
		}
		if s.language == "python" {
			tl *= 2 // the function's time_limit_factor
		}
		for _, tc := range s.problem.Tests {
			// The compile's limit is the io scorer's (a time limit of 1 s
			// is no compile's: verl's compile_timeout is its run_timeout),
			// and the client waits as long as it takes: 64 requests of slow
			// wrong solutions queue for 2 sandbox slots.
			c := &runCodeCall{code: s.source, stdin: tc.Stdin, expected: tc.Stdout, language: s.language, timeout: 2*tl + 1, memoryMB: 1024,
				compileTimeout: 10, wait: 15 * time.Minute}
			s.calls = append(s.calls, c)
			calls = append(calls, c)
		}
	}
	return calls
}

// scoreAllIO scores the solutions with the io function of their language,
// 8 at a time, the two languages at once; a solution the function did not
// score is missing from the map (and an error of the test).
func scoreAllIO(t *testing.T, srv *process, sols []*cpSolution) map[*cpSolution]*rewardv1.Execution {
	scores := map[*cpSolution]*rewardv1.Execution{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, lang := range []string{"cpp", "python"} {
		var mine []*cpSolution
		for _, s := range sols {
			if s.language == lang {
				mine = append(mine, s)
			}
		}
		wg.Go(func() {
			for len(mine) > 0 {
				n := min(8, len(mine))
				scoreIO(t, srv, lang, mine[:n], func(i int, e *rewardv1.Execution) {
					mu.Lock()
					scores[mine[i]] = e
					mu.Unlock()
				})
				mine = mine[n:]
			}
		})
	}
	wg.Wait()
	return scores
}

// compareWithIO fails the test for every test of a solution that
// /run_code passes (its stdout exactly the expected one) and the io scorer
// does not accept, or the other way round; it returns how many tests it
// compared and how many /run_code passed. A test the io scorer timed out
// is not compared: /run_code gave it the io scorer's wall time as its CPU
// time too (runCodeCalls), in which a slow program may well finish.
func compareWithIO(t *testing.T, sols []*cpSolution, scores map[*cpSolution]*rewardv1.Execution) (compared, passed int) {
	t.Helper()
	for _, s := range sols {
		e := scores[s]
		if e == nil {
			continue // the io scorer's error is reported
		}
		verdicts := map[int]rewardv1.Verdict{} // a program that did not compile ran none
		for _, te := range e.GetTests() {
			verdicts[int(te.GetIndex())] = te.GetVerdict()
		}
		if e.GetVerdict() != rewardv1.Verdict_VERDICT_COMPILATION_ERROR && len(verdicts) != len(s.calls) {
			t.Errorf("%s %s (wrong=%v): the io scorer ran %d of %d tests", s.problem.ID, s.language, s.wrong, len(verdicts), len(s.calls))
		}
		for k, c := range s.calls {
			if verdicts[k] == rewardv1.Verdict_VERDICT_TIME_LIMIT_EXCEEDED {
				continue
			}
			ac := verdicts[k] == rewardv1.Verdict_VERDICT_ACCEPTED
			ok := c.answer != nil && c.answer.Status == "Success" && sameLines(*c.answer.RunResult.Stdout, c.expected)
			compared++
			if ok {
				passed++
			}
			if ac != ok {
				msg := ""
				if c.answer != nil {
					msg = c.answer.Status + " " + c.answer.Message
				}
				t.Errorf("%s %s (wrong=%v) test %d: the io scorer says %v, /run_code %s (HTTP %d)", s.problem.ID, s.language, s.wrong, k+1,
					verdicts[k], msg, c.status)
			}
		}
	}
	return compared, passed
}

// cpSolution is a solution of a cp problem, and its tests' /run_code calls.
type cpSolution struct {
	problem  *cpRow
	language string
	wrong    bool
	source   string
	calls    []*runCodeCall
}

// scoreIO scores sols with the io function of their language and gives
// each one's execution to got, by index; a solution the function did not
// score OK is an error of the test.
func scoreIO(t *testing.T, srv *process, language string, sols []*cpSolution, got func(i int, e *rewardv1.Execution)) {
	req := &rewardv1.ScoreRequest{Functions: []string{"io_" + language}}
	for _, s := range sols {
		tests := make([]any, len(s.problem.Tests))
		for i, tc := range s.problem.Tests {
			tests[i] = map[string]any{"stdin": tc.Stdin, "stdout": tc.Stdout}
		}
		fields := map[string]any{"tests": tests}
		if s.problem.TimeLimit != nil {
			fields["time_limit_s"] = *s.problem.TimeLimit
		}
		st, err := structpb.NewStruct(fields)
		if err != nil {
			t.Error(err)
			return
		}
		req.Rollouts = append(req.Rollouts, &rewardv1.Rollout{Completion: "```" + language + "\n" + s.source + "\n```\n", Fields: st})
	}
	resp, err := srv.client(t).Score(context.Background(), req)
	if err != nil {
		t.Errorf("Score %s: %v", language, err)
		return
	}
	fs := resp.GetFunctions()[0]
	for i, s := range sols {
		if e := fs.GetExecutions()[int32(i)]; fs.GetStatus()[i] == rewardv1.ScoreStatus_SCORE_STATUS_OK && e != nil {
			got(i, e)
			continue
		}
		t.Errorf("%s %s (wrong=%v): the io scorer: %v %q", s.problem.ID, s.language, s.wrong, fs.GetStatus()[i], fs.GetErrors()[int32(i)])
	}
}

// TestRunCodeRefused: /run_code runs programs only for a config that lets
// requests run code, behind the token, and says so when its sandbox could
// not start (SandboxError, never a failed program); bad requests are 400s
// naming what is wrong.
func TestRunCodeRefused(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	plain := filepath.Join(dir, "plain.yml")
	allowed := filepath.Join(dir, "code.yml")
	for path, data := range map[string]string{
		token:   "s3cret\n",
		plain:   "functions:\n  - name: acc\n    kind: exact_match\n",
		allowed: "functions:\n  - name: acc\n    kind: exact_match\ninline:\n  kinds: [code_exec]\nlimits:\n  max_message_bytes: 16777216\n",
	} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	post := func(url, token, body string) (int, string) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	hello := `{"code": "print(1)", "language": "python", "stdin": "", "run_timeout": 2, "files": {}, "fetch_files": []}`

	guarded := startServer(t, "--config", plain, "--auth-token-file", token)
	url := "http://" + guarded.httpAddr + "/run_code"
	if code, body := post(url, "", hello); code != http.StatusUnauthorized {
		t.Errorf("no token: HTTP %d %s, want 401", code, body)
	}
	if code, body := post(url, "s3cret", hello); code != http.StatusForbidden || !strings.Contains(body, "inline.kinds") {
		t.Errorf("a config without inline code_exec: HTTP %d %s, want 403 naming inline.kinds", code, body)
	}

	// The sandbox cannot start here: the requests it allows are answered
	// SandboxError, saying so (the start log says why, naming the
	// interpreter; the answer names nothing of the host); the bad ones
	// are still 400s.
	off := startServer(t, "--config", allowed, "--sandbox-python", "/nonexistent/python3")
	url = "http://" + off.httpAddr + "/run_code"
	code, body := post(url, "", hello)
	var a sandboxFusionAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil || code != 200 || a.Status != "SandboxError" ||
		!strings.Contains(a.Message, "its sandbox could not start") || strings.Contains(a.Message, "/nonexistent") {
		t.Errorf("no sandbox: HTTP %d %s, want 200 SandboxError saying the sandbox could not start, and not where", code, body)
	}
	if logs := off.logText(); strings.Count(logs, "/nonexistent/python3") != 1 {
		t.Errorf("the server's log names the missing interpreter %d times, want once:\n%s", strings.Count(logs, "/nonexistent/python3"), logs)
	}
	// A language rewardd does not run is refused as SandboxFusion refuses
	// one it does not know: 422, a literal_error on body.language.
	for _, c := range []struct{ language, want string }{
		{"julia", "Debian bookworm does not package julia"},
		{"cobol", "not a language SandboxFusion or rewardd knows"},
	} {
		code, body := post(url, "", `{"code": "x", "language": "`+c.language+`"}`)
		var refusal struct {
			Detail []struct {
				Type, Msg, Input string
				Loc              []string
			}
		}
		if err := json.Unmarshal([]byte(body), &refusal); err != nil || code != http.StatusUnprocessableEntity || len(refusal.Detail) != 1 ||
			refusal.Detail[0].Type != "literal_error" || !slices.Equal(refusal.Detail[0].Loc, []string{"body", "language"}) ||
			refusal.Detail[0].Input != c.language || !strings.Contains(refusal.Detail[0].Msg, c.want) || !strings.Contains(refusal.Detail[0].Msg, "'nodejs'") {
			t.Errorf("language %s: HTTP %d %s, want 422 with SandboxFusion's literal_error on body.language, saying %q", c.language, code, body, c.want)
		}
	}
	for _, c := range []struct{ body, want string }{
		{`{"language": "python"}`, `\"code\" is missing`},
		{`{"code": "x", "language": "python", "memory_limit_MB": 16}`, "memory_limit_MB 16: at least 32"},
		{`{"code": "x", "language": "python", "run_timeout": -1}`, "run_timeout -1"},
		{`{"code": "x", "language": "python", "fetch_files": ["../out.txt"]}`, `fetch_files[0]: file name \"../out.txt\"`},
		{`{"code": "x", "language": "python", "files": {"../x": ""}}`, `file name \"../x\"`},
		{`{"code": "x", "language": "python", "files": {"a": "%%%"}}`, "not base64"},
		{`[1]`, "want a JSON object"},
		{`{"code": "x", "language": "python", "stdin": "` + strings.Repeat("y", 9<<20) + `"}`, "code, stdin and files come to 9437185 bytes"},
		{`{"code": "x", "language": "python", "stdin": "` + strings.Repeat("y", 17<<20) + `"}`, "request body is over 16777216 bytes (limits.max_message_bytes)"},
	} {
		code, body := post(url, "", c.body)
		if code != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("%.200s: HTTP %d %s, want 400 with %q", c.body, code, body, c.want)
		}
	}
}
