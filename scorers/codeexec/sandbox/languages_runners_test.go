package sandbox_test

import (
	"strings"
	"testing"

	"github.com/rewardd/rewardd/internal/sandboxtest"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// TestRunners: in every test runner whose toolchain is installed (the
// pool's start has run its probe), a file whose tests pass runs and exits
// 0, printing the runner's report; one whose test fails exits non-zero
// (a runtime error); one that does not compile fails to (junit) or fails
// its run (pytest and go_test, which SandboxFusion does not compile
// either); one whose test loops runs out of time.
func TestRunners(t *testing.T) {
	programs := sandboxtest.Runners()
	for _, l := range sandbox.Languages() {
		if !l.Runner {
			continue
		}
		progs, ok := programs[l.Name]
		t.Run(l.Name, func(t *testing.T) {
			if !ok {
				t.Fatalf("%s has no programs in sandboxtest.Runners: every runner of the table needs its table test and hostile suite", l.Name)
			}
			p := moreLanguagesPool(t, l.Name)
			job := langJob(t, p, l.Name, progs.Pass, "")
			job.KeepOutput = true
			tr := run(t, p, job).Tests[0]
			if tr.Status != sandbox.Ran || len(tr.Stdout) == 0 {
				t.Errorf("passing tests: %s (%s) %q, want them run (exit 0) with the runner's report", tr.Status, tr.Detail, tr.Stdout)
			}

			job = langJob(t, p, l.Name, progs.Fail, "")
			job.KeepOutput = true
			tr = run(t, p, job).Tests[0]
			oneOfStatus(t, tr, sandbox.RuntimeError)
			if !strings.Contains(strings.ToLower(string(tr.Stdout)), "fail") {
				t.Errorf("failing test: the runner's report does not say it failed: %q", tr.Stdout)
			}

			compileErrorAndLoop(t, p, l, progs.CompileError, progs.Loop)
		})
	}
}

// TestHostileRunners: in every test runner whose toolchain is installed,
// a test that forks (or starts threads) without end, allocates without
// end, connects to the host, writes outside the work dir, prints without
// end, or ptraces PID 1, mounts and makes new network and user namespaces
// fails, leaves nothing behind and leaves the slot scoring right. A
// runner may catch the memory bomb's error or the flood's failed write in
// the test and report a failed test: the program then ends as a runtime
// error, within its limits all the same; go test holds a test's output in
// its own memory until the test ends, so a flood there ends at the memory
// limit.
func TestHostileRunners(t *testing.T) {
	lim := sandbox.Limits{CPUSeconds: 4, WallSeconds: 10, MemoryMB: 256, OutputKB: 64, Processes: 64}
	programs := sandboxtest.Runners()
	for _, l := range sandbox.Languages() {
		progs, ok := programs[l.Name]
		if !l.Runner || !ok {
			continue // TestRunners fails a runner without programs
		}
		t.Run(l.Name, func(t *testing.T) {
			h := &hostileLang{hostileSlot: newHostileSlot(t, moreLanguagesPool(t, l.Name)), lang: l.Name}
			after := func(t *testing.T) {
				t.Helper()
				h.hostileSlot.after(t)
				if tr := run(t, h.p, langJob(t, h.p, l.Name, progs.Pass, "")).Tests[0]; tr.Status != sandbox.Ran {
					t.Errorf("the slot no longer runs %s right: %s (%s)", l.Name, tr.Status, tr.Detail)
				}
			}
			t.Run("fork bomb", func(t *testing.T) {
				tr := h.run(t, progs.ForkBomb, lim)
				t.Logf("%s (%s)", tr.Status, tr.Detail)
				oneOfStatus(t, tr, sandbox.Timeout, sandbox.RuntimeError, sandbox.Memory, sandbox.Crashed)
				after(t)
			})
			t.Run("memory bomb", func(t *testing.T) {
				tr := h.run(t, progs.MemoryBomb, lim)
				t.Logf("%s (%s)", tr.Status, tr.Detail)
				oneOfStatus(t, tr, sandbox.Memory, sandbox.RuntimeError)
				if tr.Status == sandbox.RuntimeError && !strings.Contains(string(tr.Stdout)+string(tr.Stderr), "Memory") {
					t.Errorf("memory bomb: a runtime error whose output does not say memory ran out:\n%s", tr.Stdout)
				}
				after(t)
			})
			t.Run("network", func(t *testing.T) {
				networkBlocked(t, h, progs.Network, lim)
				after(t)
			})
			t.Run("write outside the work dir", func(t *testing.T) {
				writeOutsideBlocked(t, h, progs.WriteOutside, lim)
				after(t)
			})
			t.Run("infinite output", func(t *testing.T) {
				tr := h.run(t, progs.Flood, lim)
				t.Logf("%s (%s)", tr.Status, tr.Detail)
				oneOfStatus(t, tr, sandbox.Output, sandbox.RuntimeError, sandbox.Memory)
				after(t)
			})
			t.Run("ptrace, mount, unshare", func(t *testing.T) {
				namespacesBlocked(t, h, progs.Namespaces, lim)
				after(t)
			})
		})
	}
}
