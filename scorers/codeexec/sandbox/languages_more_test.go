package sandbox_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/internal/sandboxtest"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// moreLanguagesPool starts a one-slot pool that runs lang, or skips the
// test naming the Debian package to install.
func moreLanguagesPool(t *testing.T, lang string) *sandbox.Pool {
	t.Helper()
	sandboxtest.SkipUnlessRoot(t)
	sandboxtest.SkipUnlessAvailable(t, lang)
	return startPool(t, sandbox.Config{Slots: 1, Languages: []string{lang}})
}

// TestMoreLanguages: in every language beyond the first four whose
// toolchain is installed (the pool's start has run its probe), a program
// that echoes its stdin passes, one that does not compile fails to (or,
// not compiled, is a runtime error), one that raises is a runtime error,
// one that loops runs out of time.
func TestMoreLanguages(t *testing.T) {
	programs := sandboxtest.MoreLanguagePrograms()
	for _, l := range sandbox.Languages() {
		progs, ok := programs[l.Name]
		if l.Default || l.Runner {
			continue // a runner's are TestRunners
		}
		t.Run(l.Name, func(t *testing.T) {
			if !ok {
				t.Fatalf("%s has no programs in sandboxtest.MoreLanguagePrograms: every language of the table needs its table test and hostile suite", l.Name)
			}
			p := moreLanguagesPool(t, l.Name)
			in := "21\nhello, wörld\n"
			job := langJob(t, p, l.Name, progs.Echo, in, "")
			job.KeepOutput = true
			for k, tr := range run(t, p, job).Tests {
				if tr.Status != sandbox.Ran || string(tr.Stdout) != job.Inputs[k] {
					t.Errorf("echo of %q: %s (%s) %q, want it to run and print its input", job.Inputs[k], tr.Status, tr.Detail, tr.Stdout)
				}
			}

			tr := run(t, p, langJob(t, p, l.Name, progs.RuntimeError, "")).Tests[0]
			oneOfStatus(t, tr, sandbox.RuntimeError)

			compileErrorAndLoop(t, p, l, progs.CompileError, progs.Loop)
		})
	}
}

// compileErrorAndLoop checks, in l, that compileError does not compile
// (Failed, with the compiler's messages) or, in a language that is not
// compiled, that its run is a runtime error; and that loop runs out of
// time.
func compileErrorAndLoop(t *testing.T, p *sandbox.Pool, l *sandbox.Language, compileError, loop string) {
	t.Helper()
	if l.Compiled() {
		b, err := p.Compile(t.Context(), sandbox.CompileJob{Language: l.Name, Source: compileError, Limits: l.CompileLimits})
		if err != nil || b.Status != sandbox.Failed || b.Output == "" {
			t.Errorf("compile error: %+v, %v; want Failed with the compiler's messages", b, err)
		}
	} else {
		tr := run(t, p, langJob(t, p, l.Name, compileError, "")).Tests[0]
		oneOfStatus(t, tr, sandbox.RuntimeError)
	}

	job := langJob(t, p, l.Name, loop, "")
	job.Limits.CPUSeconds, job.Limits.WallSeconds = 1, 4
	oneOfStatus(t, run(t, p, job).Tests[0], sandbox.Timeout)
}

// TestHostileMoreLanguages: in every language beyond the first four whose
// toolchain is installed, a fork bomb, a memory bomb, a connection to the
// host, a write outside the work dir, a flood of output, and a ptrace of
// PID 1, a mount and new network and user namespaces each end as the
// program's failure, leave nothing behind and the slot scoring right.
func TestHostileMoreLanguages(t *testing.T) {
	lim := sandbox.Limits{CPUSeconds: 2, WallSeconds: 6, MemoryMB: 256, OutputKB: 64, Processes: 32}
	programs := sandboxtest.MoreLanguagePrograms()
	for _, l := range sandbox.Languages() {
		progs, ok := programs[l.Name]
		if l.Default || l.Runner || !ok {
			continue // TestMoreLanguages fails a language without programs; a runner's are TestHostileRunners
		}
		t.Run(l.Name, func(t *testing.T) {
			lim := lim
			if l.RunLimits.CPUSeconds > lim.CPUSeconds {
				// A runtime that starts slowly (kotlin compiles its
				// script as it runs) gets its own run limits.
				lim.CPUSeconds, lim.WallSeconds = l.RunLimits.CPUSeconds, l.RunLimits.WallSeconds
			}
			h := &hostileLang{hostileSlot: newHostileSlot(t, moreLanguagesPool(t, l.Name)), lang: l.Name}
			after := func(t *testing.T) {
				t.Helper()
				h.hostileSlot.after(t)
				job := langJob(t, h.p, l.Name, progs.Echo, "42\n")
				job.Check = func(_ int, out []byte) bool { return strings.TrimSpace(string(out)) == "42" }
				if tr := run(t, h.p, job).Tests[0]; tr.Status != sandbox.Passed {
					t.Errorf("the slot no longer runs %s right: %s (%s)", l.Name, tr.Status, tr.Detail)
				}
			}
			t.Run("fork bomb", func(t *testing.T) {
				tr := h.run(t, progs.ForkBomb, lim)
				oneOfStatus(t, tr, sandbox.Timeout, sandbox.RuntimeError, sandbox.Memory, sandbox.Crashed)
				after(t)
			})
			t.Run("memory bomb", func(t *testing.T) {
				tr := h.run(t, progs.MemoryBomb, lim)
				oneOfStatus(t, tr, sandbox.Memory)
				after(t)
			})
			t.Run("network", func(t *testing.T) {
				if progs.Network == "" {
					skipUnreachable(t, l.Name, "have no way to the network", progs.Unreachable)
				}
				networkBlocked(t, h, progs.Network, lim)
				after(t)
			})
			t.Run("write outside the work dir", func(t *testing.T) {
				writeOutsideBlocked(t, h, progs.WriteOutside, lim)
				after(t)
			})
			t.Run("infinite output", func(t *testing.T) {
				tr := h.run(t, progs.Flood, lim)
				oneOfStatus(t, tr, sandbox.Output)
				after(t)
			})
			t.Run("ptrace, mount, unshare", func(t *testing.T) {
				if progs.Namespaces == "" {
					skipUnreachable(t, l.Name, "can neither make these system calls nor start a program that does", progs.Unreachable)
				}
				namespacesBlocked(t, h, progs.Namespaces, lim)
				after(t)
			})
		})
	}
}

// skipUnreachable skips a hostile subtest that lang's programs cannot
// attempt, saying what was checked (why), or fails it when nothing says.
func skipUnreachable(t *testing.T, lang, cannot, why string) {
	t.Helper()
	if why == "" {
		t.Fatalf("%s has no program for this and no Unreachable in sandboxtest saying why: write the program, or what was checked", lang)
	}
	t.Skipf("%s programs %s: %s", lang, cannot, why)
}

// networkBlocked runs src, a program that connects to PORT, with a
// listener's port for it, and fails unless it printed that it was blocked
// and nothing reached the listener.
func networkBlocked(t *testing.T, h *hostileLang, src string, lim sandbox.Limits) {
	t.Helper()
	port, check := listener(t)
	out := string(h.run(t, sub(src, "PORT", port), lim).Stdout)
	noneOf(t, out, "OPEN")
	wantBlocked(t, out, 1)
	check()
}

// writeOutsideBlocked runs src, a program that writes to OUTSIDE, with a
// path under /var/tmp for it, and fails unless it printed that it was
// blocked and the path is not there.
func writeOutsideBlocked(t *testing.T, h *hostileLang, src string, lim sandbox.Limits) {
	t.Helper()
	outside := hostPath(t, "/var/tmp", h.lang)
	out := string(h.run(t, sub(src, "OUTSIDE", strconv.Quote(outside)), lim).Stdout)
	noneOf(t, out, "OPEN")
	wantBlocked(t, out, 1)
	assertAbsent(t, outside)
}

// namespacesBlocked runs src, a program that makes each of
// sandboxtest.NamespaceAttempts, and fails unless each attempt printed a
// line saying it was blocked: an attempt that got through (OPEN) or
// printed nothing fails the test.
func namespacesBlocked(t *testing.T, h *hostileLang, src string, lim sandbox.Limits) {
	t.Helper()
	tr := h.run(t, src, lim)
	out := string(tr.Stdout)
	noneOf(t, out, "OPEN")
	for _, name := range sandboxtest.NamespaceAttempts() {
		if got := lines(out, "blocked "+name); len(got) != 1 {
			t.Errorf("%d lines say %q was blocked, want 1: %s (%s), output:\n%s", len(got), name, tr.Status, tr.Detail, out)
		} else {
			t.Log(got[0])
		}
	}
}
