package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/internal/sandboxtest"
	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
)

const codeConfig = `functions:
  - name: tests
    kind: code_exec
    test_style: assert
    limits: {cpu_seconds: 1, wall_seconds: 2}
  - name: io
    kind: code_exec
    test_style: io
    limits: {cpu_seconds: 1, wall_seconds: 2}
`

// serveCode starts `rewardd serve` with codeConfig and args, and checks
// that its start log says want about the sandbox.
func serveCode(t *testing.T, want string, args ...string) *process {
	t.Helper()
	srv := startServer(t, append([]string{"--config", writeConfig(t, codeConfig)}, args...)...)
	if !strings.Contains(srv.logText(), want) {
		t.Errorf("the start log does not say %q:\n%s", want, srv.logText())
	}
	return srv
}

func codeRequest(t *testing.T) *rewardv1.ScoreRequest {
	t.Helper()
	test := structpb.NewStringValue("def check(c):\n    assert c(2) == 4\n    assert c(3) == 6\n")
	entry := structpb.NewStringValue("double")
	ioTests, err := structpb.NewList([]any{
		map[string]any{"stdin": "2\n", "stdout": "4\n"},
		map[string]any{"stdin": "-1\n", "stdout": "-2\n"},
	})
	if err != nil {
		t.Fatal(err)
	}
	row := func(id, completion string) *rewardv1.Rollout {
		return &rewardv1.Rollout{Id: id, Completion: completion, Fields: &structpb.Struct{Fields: map[string]*structpb.Value{
			"test": test, "entry_point": entry, "tests": structpb.NewListValue(ioTests),
		}}}
	}
	return &rewardv1.ScoreRequest{Rollouts: []*rewardv1.Rollout{
		row("right", "```python\ndef double(x):\n    return 2 * x\nif __name__ == '__main__':\n    print(double(int(input())))\n```"),
		row("wrong", "```python\ndef double(x):\n    return x + 2\nif __name__ == '__main__':\n    print(double(int(input())))\n```"),
		row("hostile", "```python\nimport os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n```"),
	}}
}

// TestServeCodeExec: a real `rewardd serve` runs code_exec functions in its
// sandbox (the binary re-executing itself as the helper), a hostile program
// is a failed program, and the sandbox metrics count what ran.
func TestServeCodeExec(t *testing.T) {
	sandboxtest.SkipUnlessRoot(t)
	srv := serveCode(t, "code execution sandbox ready", "--workers", "2")
	defer srv.stop(t)
	resp, err := srv.client(t).Score(context.Background(), codeRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float64{"tests": {1, 0, 0}, "io": {1, 0.5, 0}}
	for _, fs := range resp.GetFunctions() {
		for i, v := range fs.GetValues() {
			if fs.GetStatus()[i] != rewardv1.ScoreStatus_SCORE_STATUS_OK || v != want[fs.GetName()][i] {
				t.Errorf("%s rollout %d: %v %v (%q), want OK %v", fs.GetName(), i, fs.GetStatus()[i], v, fs.GetErrors()[int32(i)], want[fs.GetName()][i])
			}
		}
	}
	code, metrics := httpGet(t, "http://"+srv.httpAddr+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, line := range []string{
		`rewardd_sandbox_executions_total{result="passed"} 2`,
		`rewardd_sandbox_executions_total{result="failed"} 2`,
		`rewardd_sandbox_executions_total{result="timeout"} 2`,
		`rewardd_sandbox_executions_total{result="sandbox_error"} 0`,
		`rewardd_sandbox_slots 2`,
		`rewardd_sandbox_slots_busy 0`,
	} {
		if !strings.Contains(metrics, line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	if !strings.Contains(metrics, `rewardd_sandbox_execution_duration_seconds_count 6`) {
		t.Errorf("/metrics does not count 6 executions")
	}
}

// TestServeCodeExecFailsClosed: when the sandbox cannot start, the server
// still serves, says so loudly, and scores code_exec rollouts ERROR with the
// reason; other functions are unaffected.
func TestServeCodeExecFailsClosed(t *testing.T) {
	srv := serveCode(t, "CODE EXECUTION IS OFF", "--sandbox-python", "/nonexistent/python3")
	defer srv.stop(t)
	// Not ready (issue 31): its config's code_exec functions cannot run.
	if code, body := httpGet(t, "http://"+srv.httpAddr+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "need the sandbox, which could not start") {
		t.Errorf("GET /readyz: %d %q, want 503 naming the sandbox", code, body)
	}
	conn, err := grpc.NewClient(srv.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: "reward.v1.RewardService"})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("gRPC health: %v %v, want NOT_SERVING", h, err)
	}
	resp, err := srv.client(t).Score(context.Background(), codeRequest(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, fs := range resp.GetFunctions() {
		for i := range fs.GetValues() {
			if fs.GetStatus()[i] != rewardv1.ScoreStatus_SCORE_STATUS_ERROR || !strings.HasPrefix(fs.GetErrors()[int32(i)], "code execution unavailable: sandbox") {
				t.Errorf("%s rollout %d: %v %q, want ERROR naming the sandbox", fs.GetName(), i, fs.GetStatus()[i], fs.GetErrors()[int32(i)])
			}
		}
	}
}

// TestServeUnsafeNoSandboxWarns: the development mode is loud.
func TestServeUnsafeNoSandboxWarns(t *testing.T) {
	srv := serveCode(t, "CODE EXECUTION IS NOT SANDBOXED", "--unsafe-no-sandbox")
	defer srv.stop(t)
	resp, err := srv.client(t).Score(context.Background(), &rewardv1.ScoreRequest{
		Rollouts: codeRequest(t).GetRollouts()[:2], Functions: []string{"tests"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetFunctions()[0].GetValues(); len(got) != 2 || got[0] != 1 || got[1] != 0 {
		t.Errorf("unsafe mode scores %v, want [1 0]", got)
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// TestServeCodeExecDeadline: a client deadline stops the programs it
// covered at once: the call ends with DEADLINE_EXCEEDED long before the
// programs' own wall limit, no process of the sandbox's uids is left, and
// the next request is scored.
func TestServeCodeExecDeadline(t *testing.T) {
	sandboxtest.SkipUnlessRoot(t)
	cfg := writeConfig(t, "functions:\n  - name: tests\n    kind: code_exec\n    test_style: assert\n    limits: {cpu_seconds: 30, wall_seconds: 60}\n")
	srv := startServer(t, "--config", cfg, "--workers", "2")
	defer srv.stop(t)
	client := srv.client(t)

	busy := codeRequest(t)
	for _, r := range busy.GetRollouts() {
		r.Completion = "while True:\n    pass\n"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	start := time.Now()
	_, err := client.Score(ctx, busy)
	cancel()
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("busy programs with a 500 ms deadline: %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d >= 30*time.Second {
		t.Errorf("the call took %v: the programs ran to their own 30 s CPU limit, the deadline (500 ms) did not stop them", d)
	}
	// The server kills the programs when the deadline passes; give it a
	// moment to reap them, then none may remain.
	uidLo := 1_000_000 + (srv.cmd.Process.Pid%10_000)*100
	var left []string
	for range 50 {
		if left = sandboxProcesses(t, uidLo, uidLo+100); len(left) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("sandboxed processes still running after the deadline: %v", left)
	}
	next := codeRequest(t)
	next.Rollouts = next.Rollouts[:2] // the third, a fork bomb, would run to the 60 s wall limit
	resp, err := client.Score(context.Background(), next)
	if err != nil {
		t.Fatal(err)
	}
	if v := resp.GetFunctions()[0].GetValues(); v[0] != 1 || v[1] != 0 {
		t.Errorf("after the deadline: %v, want the right program 1 and the wrong 0", v)
	}
}

// sandboxProcesses lists the host processes whose real uid is in [lo, hi).
func sandboxProcesses(t *testing.T, lo, hi int) []string {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join("/proc", d.Name(), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
				var uid int
				if _, err := fmt.Sscan(rest, &uid); err == nil && uid >= lo && uid < hi {
					found = append(found, d.Name())
				}
			}
		}
	}
	return found
}

// TestServeCodeExecWithoutCapKill: a sandbox that cannot kill its programs
// (root without CAP_KILL, as in a container that drops it) must not start:
// its probe leaves a process behind, the fork server cannot end it and says
// why, and code execution is off with that reason.
func TestServeCodeExecWithoutCapKill(t *testing.T) {
	sandboxtest.SkipUnlessRoot(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) not found: cannot drop CAP_KILL for the test")
	}
	cfg := writeConfig(t, codeConfig)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, setpriv, "--bounding-set", "-kill", "--", binary, "serve", "--config", cfg,
		"--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		logs.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), `"msg":"serving"`) {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	io.Copy(io.Discard, stderr)
	cmd.Wait()
	if !strings.Contains(logs.String(), "CODE EXECUTION IS OFF") || !strings.Contains(logs.String(), "CAP_KILL") {
		t.Errorf("without CAP_KILL the start log must say code execution is off and why:\n%s", logs.String())
	}
	uidLo := 1_000_000 + (cmd.Process.Pid%10_000)*100 // setpriv execs rewardd: same pid
	if left := sandboxProcesses(t, uidLo, uidLo+100); len(left) > 0 {
		t.Errorf("sandboxed processes left: %v", left)
	}
}

// inlineCode is a request defining a code_exec function of its own, with
// limits far above the defaults, whose program touches 1 GiB.
func inlineCode(t *testing.T, memoryMB float64) *rewardv1.ScoreRequest {
	t.Helper()
	params, err := structpb.NewStruct(map[string]any{
		"test_style": "io",
		"limits":     map[string]any{"memory_mb": memoryMB, "cpu_seconds": 2, "wall_seconds": 6},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests, err := structpb.NewList([]any{map[string]any{"stdin": "", "stdout": "ok\n"}})
	if err != nil {
		t.Fatal(err)
	}
	return &rewardv1.ScoreRequest{
		Inline: []*rewardv1.FunctionSpec{{Name: "mine", Kind: "code_exec", Params: params}},
		Rollouts: []*rewardv1.Rollout{{
			Completion: "```python\nblock = bytearray(1 << 30)\nprint('ok')\n```",
			Fields:     &structpb.Struct{Fields: map[string]*structpb.Value{"tests": structpb.NewListValue(tests)}},
		}},
	}
}

// TestServeInlineCodeExecNeedsTheConfig (finding: a request could turn code
// execution on, and raise its own limits): on the default config, which
// serves no code_exec, an inline code_exec function is refused before
// anything runs, and the sandbox never starts. With inline.kinds allowing
// it, a request can lower the server's limits but not raise them.
func TestServeInlineCodeExecNeedsTheConfig(t *testing.T) {
	sandboxtest.SkipUnlessRoot(t)
	srv := startServer(t)
	_, err := srv.client(t).Score(context.Background(), inlineCode(t, 16384))
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "inline.kinds") {
		t.Errorf("inline code_exec on the default config: %v, want INVALID_ARGUMENT naming inline.kinds", err)
	}
	srv.stop(t)
	if log := srv.logText(); strings.Contains(log, "sandbox") {
		t.Errorf("the sandbox started for a request on a config without code_exec:\n%s", log)
	}

	cfg := writeConfig(t, codeConfig+"inline:\n  kinds: [code_exec, exact_match]\n  code_exec_limits: {memory_mb: 256}\n")
	srv = startServer(t, "--config", cfg)
	client := srv.client(t)
	_, err = client.Score(context.Background(), inlineCode(t, 16384))
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "memory_mb") {
		t.Errorf("inline code_exec asking 16384 MB of a server allowing 256: %v, want INVALID_ARGUMENT naming memory_mb", err)
	}
	resp, err := client.Score(context.Background(), inlineCode(t, 128))
	if err != nil {
		t.Fatal(err)
	}
	for _, fs := range resp.GetFunctions() {
		if fs.GetName() == "mine" && (fs.GetStatus()[0] != rewardv1.ScoreStatus_SCORE_STATUS_OK || fs.GetValues()[0] != 0) {
			t.Errorf("a 1 GiB program under a 128 MB inline limit: %v %v %q, want OK 0", fs.GetStatus()[0], fs.GetValues()[0], fs.GetErrors()[0])
		}
	}
}

// TestScoreCodeExecJSONL: `rewardd score` with a C++ code_exec function
// writes, beside each row's score, what running its program found: the
// verdict, each test's verdict and measurements, the compiler's output
// when it did not compile.
func TestScoreCodeExecJSONL(t *testing.T) {
	sandboxtest.SkipUnlessRoot(t)
	if _, err := os.Stat("/usr/bin/g++"); err != nil {
		t.Skip("g++ is not installed (make deps installs it)")
	}
	cfg := writeConfig(t, "functions:\n  - name: cpp\n    kind: code_exec\n    language: cpp\n    test_style: io\n    time_limit_seconds: 1\n")
	var in strings.Builder
	for _, c := range []struct{ id, program string }{
		{"right", "#include <iostream>\nint main() { int n; std::cin >> n; std::cout << 2 * n; }"},
		{"wrong", "#include <iostream>\nint main() { int n; std::cin >> n; std::cout << n + 2; }"},
		{"broken", "int main() { return x; }"},
	} {
		row, _ := json.Marshal(map[string]any{
			"id": c.id, "completion": "```cpp\n" + c.program + "\n```",
			"tests": []any{map[string]any{"stdin": "2", "stdout": "4"}, map[string]any{"stdin": "5", "stdout": "10"}},
		})
		in.Write(append(row, '\n'))
	}
	out, stderr, exit := runRewardd(t, in.String(), "score", "--config", cfg, "--in", "-", "--sandbox-languages", "cpp")
	if exit != 0 {
		t.Fatalf("exit %d: %s", exit, stderr)
	}
	type execution struct {
		Language, Verdict string
		CompilerOutput    string `json:"compiler_output"`
		Passed, Total     int
		Tests             []struct {
			Index       int
			Verdict     string
			WallSeconds float64 `json:"wall_seconds"`
			MemoryBytes int64   `json:"memory_bytes"`
		}
	}
	want := map[string]struct {
		score   float64
		verdict string
		tests   string
	}{"right": {1, "AC", "AC AC"}, "wrong": {0.5, "WA", "AC WA"}, "broken": {0, "CE", ""}}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d output lines, want 3:\n%s", len(lines), out)
	}
	for _, line := range lines {
		var row struct {
			ID         string
			Scores     map[string]float64
			Executions map[string]execution
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		w, e := want[row.ID], row.Executions["cpp"]
		var verdicts []string
		for _, te := range e.Tests {
			verdicts = append(verdicts, te.Verdict)
			if te.WallSeconds <= 0 || te.MemoryBytes <= 0 {
				t.Errorf("%s test %d: not measured: %s", row.ID, te.Index, line)
			}
		}
		if row.Scores["cpp"] != w.score || e.Language != "cpp" || e.Verdict != w.verdict || strings.Join(verdicts, " ") != w.tests || e.Total != 2 {
			t.Errorf("%s: %s, want score %v, verdict %s, tests %q", row.ID, line, w.score, w.verdict, w.tests)
		}
		if (w.verdict == "CE") != strings.Contains(e.CompilerOutput, "'x' was not declared") {
			t.Errorf("%s: compiler output %q", row.ID, e.CompilerOutput)
		}
	}
}

// TestServeUnsafeRunsCompiled: without the sandbox (--unsafe-no-sandbox),
// a compiled language still compiles and runs, in the executor's own work
// dir, and is judged as in the sandbox.
func TestServeUnsafeRunsCompiled(t *testing.T) {
	sandboxtest.SkipUnlessAvailable(t, "cpp")
	cfg := writeConfig(t, "functions:\n  - name: io\n    kind: code_exec\n    language: cpp\n    test_style: io\n")
	srv := startServer(t, "--config", cfg, "--unsafe-no-sandbox", "--workers", "1")
	defer srv.stop(t)
	req := codeRequest(t)
	req.Rollouts = req.Rollouts[:2]
	req.Rollouts[0].Completion = "```cpp\n#include <iostream>\nint main() { long x; std::cin >> x; std::cout << 2 * x << '\\n'; }\n```"
	req.Rollouts[1].Completion = "```cpp\n#include <iostream>\nint main() { long x; std::cin >> x; std::cout << x + 2 << '\\n'; }\n```"
	resp, err := srv.client(t).Score(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetFunctions()[0].GetValues(); len(got) != 2 || got[0] != 1 || got[1] != 0.5 {
		t.Errorf("unsafe mode scores %v (%v), want [1 0.5]", got, resp.GetFunctions()[0].GetErrors())
	}
}
