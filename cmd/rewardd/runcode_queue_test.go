package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rewardd/rewardd/scorers/scorertest"
)

// runCodeVerlConfig is docs/recipes.md's config for verl's sandbox_fusion:
// /run_code for Python, admitting more requests than verl sends at once.
const runCodeVerlConfig = `functions:
  - name: acc
    kind: exact_match
limits:
  max_inflight_requests: 128
inline:
  kinds: [code_exec]
  code_exec_limits: {cpu_seconds: 10, wall_seconds: 30, memory_mb: 1024, processes: 64}
`

// pySleepDouble sleeps as long as its second line says, then prints twice
// its first.
const pySleepDouble = "import time\nx = int(input())\ntime.sleep(float(input()))\nprint(2 * x)\n"

// TestRunCodeQueue: a test that waits in rewardd's queue past what its
// client waits is not lost. verl's client, transcribed, sends 64 tests at
// once with a timeout of 1 s (it then waits 1 + 1 + 10 s for each answer),
// each a program that sleeps 0.5 s: on 2 sandbox slots the last ones end
// 16 s or more after the first started, past the 12 s their client
// waits, however fast the machine. Every test passes: a request whose run
// has not finished when its client's wait nears its end is answered 504,
// which verl retries, and the retry waits for the same run.
func TestRunCodeQueue(t *testing.T) {
	srv := startCodeServer(t, runCodeVerlConfig, "--workers", "2")
	url := "http://" + srv.httpAddr + "/run_code"
	var calls []*runCodeCall
	for k := range 64 {
		calls = append(calls, &runCodeCall{code: pySleepDouble, stdin: fmt.Sprintf("%d\n0.5\n", k), expected: fmt.Sprint(2 * k),
			language: "python", timeout: 1, memoryMB: 1024})
	}
	callAll(url, "", calls)

	verdicts := map[int]int{}
	for _, c := range calls {
		verdicts[c.verdict]++
		if c.verdict != verlPassed {
			t.Errorf("stdin %q: verl's verdict %d (HTTP %d, %s), want %d", c.stdin, c.verdict, c.status, describe(c.answer), verlPassed)
		}
	}
	_, metrics := httpGet(t, "http://"+srv.httpAddr+"/metrics")
	late := `rewardd_requests_total{code="DeadlineExceeded",method="http_run_code"}`
	if !strings.Contains(metrics, late+" ") {
		t.Fatalf("no /run_code request was answered 504, though 64 runs of 0.5 s on 2 slots outlast the 12 s their client waits")
	}
	t.Logf("verl's verdicts %v; answers 504 then retried: %s", verdicts, metric(t, srv, late))
}

// TestRunCodeOverloadRetried: a /run_code request refused for overload
// (limits.max_inflight_requests) is answered 504 with Retry-After, which
// SandboxFusion's clients retry, not the 429 that verl scores -1; the
// requests admitted are answered as ever.
func TestRunCodeOverloadRetried(t *testing.T) {
	srv := startCodeServer(t, strings.Replace(runCodeVerlConfig, "max_inflight_requests: 128", "max_inflight_requests: 2", 1), "--workers", "2")
	url := "http://" + srv.httpAddr + "/run_code"
	// Two programs that sleep 5 s hold both admission slots.
	holders := []*runCodeCall{
		{code: pySleepDouble, stdin: "1\n5\n", expected: "2", language: "python", timeout: 10, memoryMB: 1024},
		{code: pySleepDouble, stdin: "2\n5\n", expected: "4", language: "python", timeout: 10, memoryMB: 1024},
	}
	var wg sync.WaitGroup
	for _, c := range holders {
		wg.Go(func() { c.verdict, c.answer, c.status = verlCall(url, "", c) })
	}
	// Once both run in the sandbox, both hold their admission slots until
	// they are answered: one request more is refused at once. (Probing
	// before that would take a slot a holder's retry then needs.)
	busy := "rewardd_sandbox_slots_busy 2\n"
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, metrics := httpGet(t, "http://"+srv.httpAddr+"/metrics"); strings.Contains(metrics, busy) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the two holders never ran at once (no %q in /metrics)", strings.TrimSpace(busy))
		}
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"code": "print(1)", "language": "python", "run_timeout": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusGatewayTimeout {
		t.Errorf("while two requests hold the server's 2 slots: HTTP %d %s, want 504", resp.StatusCode, body)
	} else if got := resp.Header.Get("Retry-After"); got != "1" || !strings.Contains(string(body), "capacity") {
		t.Errorf("refused for overload: Retry-After %q, body %s; want Retry-After 1 and a body that says the server is at capacity", got, body)
	}
	wg.Wait()
	for _, c := range holders {
		if c.verdict != verlPassed {
			t.Errorf("stdin %q: verl's verdict %d (HTTP %d, %s), want %d", c.stdin, c.verdict, c.status, describe(c.answer), verlPassed)
		}
	}
	_, metrics := httpGet(t, "http://"+srv.httpAddr+"/metrics")
	if !strings.Contains(metrics, `rewardd_requests_total{code="ResourceExhausted",method="http_run_code"} `) {
		t.Errorf("/metrics does not count the refusal as RESOURCE_EXHAUSTED")
	}
}

// TestRunCodeVerlSettings (REWARDD_CP_FULL=1; REWARDD_CP_ONLY, a regexp,
// keeps the tests whose names it matches): verl's sandbox_fusion path
// with its own settings (timeout 10 s for compile and run, so 30 s of
// waiting per request; memory_limit_mb 1024; 64 requests at once) over
// every HumanEval canonical solution (one assert-style test each, as
// verl's assert_case: the program, the row's test, check(entry_point))
// and every accepted and wrong solution of cp_problems on every test: no
// test is scored -1, a sandbox error, for waiting in the queue or for
// anything else.
func TestRunCodeVerlSettings(t *testing.T) {
	if os.Getenv("REWARDD_CP_FULL") != "1" {
		t.Skip("all of HumanEval and cp_problems at verl's settings take about 10 minutes here: REWARDD_CP_FULL=1 (make test-cp) runs them; TestRunCodeQueue is the short form")
	}
	var calls []*runCodeCall
	names := map[*runCodeCall]string{}
	for _, r := range scorertest.HumanEval(t) {
		c := &runCodeCall{code: r.Prompt + r.CanonicalSolution + "\n\n" + r.Test + "\ncheck(" + r.EntryPoint + ")\n", language: "python", timeout: 10, memoryMB: 1024}
		calls = append(calls, c)
		names[c] = r.TaskID
	}
	for _, r := range cpRows(t) {
		for _, set := range []struct {
			kind string
			sols map[string][]string
		}{{"solution", r.Solutions}, {"wrong solution", r.WrongSolutions}} {
			for lang, srcs := range set.sols {
				for k, src := range srcs {
					for i, tc := range r.Tests {
						c := &runCodeCall{code: src, stdin: tc.Stdin, expected: tc.Stdout, language: lang, timeout: 10, memoryMB: 1024}
						calls = append(calls, c)
						names[c] = fmt.Sprintf("%s %s %s %d test %d", r.ID, lang, set.kind, k, i+1)
					}
				}
			}
		}
	}
	if only := os.Getenv("REWARDD_CP_ONLY"); only != "" {
		re := regexp.MustCompile(only)
		calls = slices.DeleteFunc(calls, func(c *runCodeCall) bool { return !re.MatchString(names[c]) })
	}
	srv := startCodeServer(t, runCodeVerlConfig, "--workers", "2")
	callAll("http://"+srv.httpAddr+"/run_code", "", calls)

	verdicts := map[int]int{}
	for _, c := range calls {
		verdicts[c.verdict]++
		if os.Getenv("REWARDD_CP_LOG") == "1" {
			// The verdict first, to compare runs; then what it cost.
			t.Logf("VERDICT %s: %d (%d requests, %.1f s)", names[c], c.verdict, c.attempts, c.took.Seconds())
		}
		if c.verdict == verlSandboxError {
			t.Errorf("%s: verl's verdict -1 (HTTP %d, %s)", names[c], c.status, describe(c.answer))
		}
	}
	// How /run_code answered, by code: a 504 is DeadlineExceeded (the run
	// went on, for the retry) or ResourceExhausted (refused at once).
	_, metrics := httpGet(t, "http://"+srv.httpAddr+"/metrics")
	answers := map[string]string{}
	for _, code := range []string{"OK", "DeadlineExceeded", "ResourceExhausted"} {
		name := `rewardd_requests_total{code="` + code + `",method="http_run_code"}`
		answers[code] = "0"
		if strings.Contains(metrics, name+" ") {
			answers[code] = metric(t, srv, name)
		}
	}
	t.Logf("%d tests, verl's verdicts %v; /run_code's answers by code %v", len(calls), verdicts, answers)
}
