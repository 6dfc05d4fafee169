package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rewardd/rewardd/internal/sandboxtest"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// compiledLanguages are the languages these tests run besides python; a
// test needs their toolchains (make deps installs them).
var compiledLanguages = []string{"cpp", "java", "javascript"}

// startLanguagePool starts a one-slot pool that runs every language, or
// skips the test, naming the package, when a toolchain is missing.
func startLanguagePool(t *testing.T) *sandbox.Pool {
	t.Helper()
	sandboxtest.SkipUnlessAvailable(t, compiledLanguages...)
	return startPool(t, sandbox.Config{Slots: 1, Languages: compiledLanguages})
}

// build compiles src, which must compile.
func build(t *testing.T, p *sandbox.Pool, lang, src string) *sandbox.Build {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a hang guard (see run)
	defer cancel()
	b, err := p.Compile(ctx, sandbox.CompileJob{Language: lang, Source: src})
	if err != nil {
		t.Fatalf("Compile %s: %v", lang, err)
	}
	if !b.OK() {
		t.Fatalf("%s does not compile: %s (%s)\n%s", lang, b.Status, b.Detail, b.Output)
	}
	return b
}

// langJob is an io job of src in lang: compiled first when lang is.
func langJob(t *testing.T, p *sandbox.Pool, lang, src string, inputs ...string) sandbox.Job {
	t.Helper()
	l, err := sandbox.LookupLanguage(lang)
	if err != nil {
		t.Fatal(err)
	}
	job := sandbox.Job{Language: lang, Style: sandbox.IO, Inputs: inputs, Limits: l.RunLimits}
	if l.Compiled() {
		job.Build = build(t, p, lang, src)
	} else {
		job.Code = src
	}
	return job
}

// doubling reads n and prints 2n, in every language.
var doubling = map[string]string{
	"python":     "print(2 * int(input()))\n",
	"cpp":        "#include <bits/stdc++.h>\nint main() { long long n; std::cin >> n; std::cout << 2 * n << '\\n'; }\n",
	"java":       "import java.util.*;\npublic class Doubling {\n  public static void main(String[] a) {\n    System.out.println(2 * new Scanner(System.in).nextLong());\n  }\n}\n",
	"javascript": "const n = BigInt(require('fs').readFileSync(0, 'utf8').trim());\nconsole.log(String(2n * n));\n",
}

// TestLanguageRuns runs programs in every language in one pool (its start
// compiles and runs a probe in each, which costs seconds): see each
// subtest's function.
func TestLanguageRuns(t *testing.T) {
	p := startLanguagePool(t)
	for _, c := range []struct {
		name string
		f    func(*testing.T, *sandbox.Pool)
	}{
		{"same program in every language", sameProgramEveryLanguage},
		{"peak memory", peakMemory},
		{"verdicts", verdicts},
		{"time limit per test", testTimeLimit},
		{"stop on failure", stopOnFailure},
		{"compile errors", compileErrors},
		{"judge job", judgeJob},
		{"files", jobFiles},
		{"precompiled headers", precompiledHeaders},
	} {
		t.Run(c.name, func(t *testing.T) { c.f(t, p) })
	}
}

// sameProgramEveryLanguage: a program in each language compiles (when it is
// compiled) and runs once per test with the test's stdin; Check judges
// each output; without a Check the output comes back; CPU time and peak
// memory are measured per test.
func sameProgramEveryLanguage(t *testing.T, p *sandbox.Pool) {
	inputs := []string{"21\n", "-4\n", "1000000000000\n"}
	want := []string{"42", "-8", "2000000000000"}
	for _, lang := range append([]string{"python"}, compiledLanguages...) {
		t.Run(lang, func(t *testing.T) {
			job := langJob(t, p, lang, doubling[lang], inputs...)
			job.Check = func(k int, out []byte) bool { return strings.TrimSpace(string(out)) == want[k] }
			for k, tr := range run(t, p, job).Tests {
				if tr.Status != sandbox.Passed {
					t.Errorf("test %d: %s (%s)", k, tr.Status, tr.Detail)
				}
				if tr.MemoryKB <= 0 || tr.Wall <= 0 || tr.ExitCode != 0 {
					t.Errorf("test %d: memory %d KB, wall %v, exit %d: not measured", k, tr.MemoryKB, tr.Wall, tr.ExitCode)
				}
			}
			job.Check, job.KeepOutput = nil, true
			for k, tr := range run(t, p, job).Tests {
				if tr.Status != sandbox.Ran || strings.TrimSpace(string(tr.Stdout)) != want[k] {
					t.Errorf("without a Check, test %d: %s, stdout %q, want ran and %q", k, tr.Status, tr.Stdout, want[k])
				}
			}
		})
	}
}

// precompiledHeaders: C++ programs compile with the precompiled headers
// as g++ compiles them alone, wherever the headers come: first (the .gch
// is used), again (the copy beside it is found, and its guard), after
// another header (the .gch cannot be used: the copy is read).
func precompiledHeaders(t *testing.T, p *sandbox.Pool) {
	main := "int main() { std::vector<long long> v{3, 1, 2}; std::sort(v.begin(), v.end()); long long n; std::cin >> n; std::cout << v[0] * n << std::endl; }\n"
	for name, includes := range map[string]string{
		"bits twice":              "#include <bits/stdc++.h>\n#include <bits/stdc++.h>\n",
		"bits from a second file": "#include <bits/stdc++.h>\n#include <bits/stdc++.h> // again\n#include <iostream>\n",
		"iostream then bits":      "#include <iostream>\n#include <bits/stdc++.h>\n",
		"iostream twice":          "#include <iostream>\n#include <iostream>\n#include <vector>\n#include <algorithm>\n",
		"cstdio then iostream":    "#include <cstdio>\n#include <iostream>\n#include <vector>\n#include <algorithm>\n",
	} {
		job := langJob(t, p, "cpp", includes+main, "42\n")
		job.KeepOutput = true
		if tr := run(t, p, job).Tests[0]; tr.Status != sandbox.Ran || string(tr.Stdout) != "42\n" {
			t.Errorf("%s: %s (%s), stdout %q, want 42", name, tr.Status, tr.Detail, tr.Stdout)
		}
	}
}

// peakMemory: the peak memory of an exec'd program is its own (the
// launcher between the fork server and the program keeps the fork
// server's pages out of it): a program that touches 64 MB reports 64 to 80
// MB, one that touches nothing less than 8 MB.
func peakMemory(t *testing.T, p *sandbox.Pool) {
	src := "#include <cstdlib>\n#include <cstring>\n#include <iostream>\nint main() { int mb; std::cin >> mb;\n" +
		"  char *p = (char *)std::malloc((size_t)mb << 20); std::memset(p, 1, (size_t)mb << 20);\n" +
		"  std::cout << (int)p[mb] << '\\n'; }\n"
	res := run(t, p, langJob(t, p, "cpp", src, "0\n", "64\n"))
	if got := res.Tests[0].MemoryKB; got >= 8<<10 {
		t.Errorf("a program touching nothing: peak %d KB, want < 8 MB", got)
	}
	if got := res.Tests[1].MemoryKB; got < 64<<10 || got > 80<<10 {
		t.Errorf("a program touching 64 MB: peak %d KB, want 64 to 80 MB", got)
	}
	for k, tr := range res.Tests {
		if tr.Status != sandbox.Ran {
			t.Errorf("test %d: %s (%s)", k, tr.Status, tr.Detail)
		}
	}
}

// verdictCase is a program that must end a test with a verdict.
type verdictCase struct {
	name, lang, src string
	want            sandbox.Status
}

// verdicts: in every language, a program over the test's CPU time, its
// memory or its output limit, or that raises, exits non-zero or dies by a
// signal, gets that verdict; the test after it, in the same job, runs as
// if nothing happened.
func verdicts(t *testing.T, p *sandbox.Pool) {
	cases := []verdictCase{
		{"busy", "python", "while True:\n    pass\n", sandbox.Timeout},
		{"memory", "python", "x = bytearray(1 << 30)\n", sandbox.Memory},
		{"raise", "python", "raise ValueError('no')\n", sandbox.RuntimeError},
		{"exit 3", "python", "import sys\nsys.exit(3)\n", sandbox.RuntimeError},
		{"signal", "python", "import os\nos.kill(os.getpid(), 11)\n", sandbox.Crashed},
		{"output", "python", "while True:\n    print('y' * 1000)\n", sandbox.Output},

		{"busy", "cpp", "int main() { volatile unsigned long x = 0; for (;;) x++; }\n", sandbox.Timeout},
		{"memory", "cpp", "#include <vector>\n#include <cstdio>\nint main() { std::vector<char> v(1ul << 30, 1); std::printf(\"%d\", v[5]); }\n", sandbox.Memory},
		{"static array", "cpp", "#include <cstdio>\nstatic char a[1ul << 31];\nint main(int argc, char **) { a[argc << 20] = 1; std::printf(\"%d\", a[argc]); }\n", sandbox.Memory},
		{"exit 3", "cpp", "int main() { return 3; }\n", sandbox.RuntimeError},
		{"segfault", "cpp", "int main() { volatile int *p = 0; return *p; }\n", sandbox.Crashed},
		{"output", "cpp", "#include <cstdio>\nint main() { for (;;) std::puts(\"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\"); }\n", sandbox.Output},

		// Accepted solutions use threads: 64 of them run, in every language
		// that has them, under the default limits.
		{"64 threads", "cpp", "#include <bits/stdc++.h>\nint main() { std::vector<std::thread> ts; std::atomic<int> n{0};\n" +
			"  for (int i = 0; i < 64; i++) ts.emplace_back([&] { n++; });\n  for (auto &t : ts) t.join(); return n == 64 ? 0 : 1; }\n", sandbox.Ran},
		{"64 threads", "python", "import threading\nts = [threading.Thread(target=lambda: None) for _ in range(64)]\n" +
			"for t in ts:\n    t.start()\nfor t in ts:\n    t.join()\n", sandbox.Ran},
		{"64 threads", "java", "public class Main { public static void main(String[] a) throws Exception {\n" +
			"  Thread[] ts = new Thread[64]; for (int i = 0; i < 64; i++) { ts[i] = new Thread(() -> {}); ts[i].start(); }\n" +
			"  for (Thread t : ts) t.join(); } }\n", sandbox.Ran},
		// Judges' Java harnesses run with assertions on.
		{"assert", "java", "public class Main { public static void main(String[] a) { assert 1 + 1 == 3 : \"arithmetic\"; } }\n", sandbox.RuntimeError},

		{"busy", "java", "public class Main { public static void main(String[] a) { long x = 0; while (true) x++; } }\n", sandbox.Timeout},
		{"memory", "java", "public class Main { public static void main(String[] a) { long[][] x = new long[1 << 20][]; for (int i = 0; ; i++) x[i] = new long[1 << 20]; } }\n", sandbox.Memory},
		{"exception", "java", "public class Main { public static void main(String[] a) { throw new RuntimeException(\"no\"); } }\n", sandbox.RuntimeError},
		{"output", "java", "public class Main { public static void main(String[] a) { while (true) System.out.println(\"yyyyyyyyyyyyyyyyyyyyyyyyyyyy\"); } }\n", sandbox.Output},

		{"busy", "javascript", "for (;;) {}\n", sandbox.Timeout},
		{"memory", "javascript", "const a = []; for (;;) a.push(new Array(1 << 20).fill(1.5));\n", sandbox.Memory},
		{"exception", "javascript", "throw new Error('no');\n", sandbox.RuntimeError},
		{"output", "javascript", "for (;;) process.stdout.write('y'.repeat(100000) + '\\n');\n", sandbox.Output},
	}
	for _, c := range cases {
		t.Run(c.lang+" "+c.name, func(t *testing.T) {
			job := langJob(t, p, c.lang, c.src, "", "")
			job.Limits.MemoryMB, job.Limits.OutputKB = 256, 64
			job.TestCPUSeconds = 1
			if c.want != sandbox.Timeout {
				// Starting a runtime (the JVM, V8) and reaching a memory or
				// output limit takes it more than a second of CPU on a
				// loaded machine: those cases are not about time.
				job.TestCPUSeconds = 5
			}
			job.Limits.WallSeconds = 20
			// The second test's program is the same: it must meet the same
			// end, in a process of its own (python: a new one).
			res := run(t, p, job)
			for k, tr := range res.Tests {
				if tr.Status != c.want {
					t.Errorf("test %d: %s (%s), want %s", k, tr.Status, tr.Detail, c.want)
				}
			}
			if c.want == sandbox.Timeout {
				// A python test ends by its process's CPU-time clock, and
				// where the slot's CPU time is known any test ends by it,
				// less the server's own: at its limit at any load.
				// Elsewhere by the kernel's timers, which charge CPU time
				// by the tick (on a loaded machine the JVM reached a 1 s
				// limit having used 0.90 s).
				exact, _ := p.SlotTime()
				exact = exact || c.lang == "python"
				least := 995 * time.Millisecond
				if !exact {
					least = 850 * time.Millisecond
				}
				if res.Tests[0].CPU < least {
					t.Errorf("a time limit reached after %v of CPU, %v of wall time, limit 1 s", res.Tests[0].CPU, res.Tests[0].Wall)
				}
				t.Logf("stopped after %v of CPU, %v of slot time", res.Tests[0].CPU, res.Tests[0].Wall)
			}
		})
	}
}

// testTimeLimit: each test has its own CPU time limit; a test that
// sleeps past its wall time (twice its CPU time plus a second) is stopped
// and the tests after it still run; the submission's wall time bounds the
// whole.
func testTimeLimit(t *testing.T, p *sandbox.Pool) {
	for _, c := range []struct{ lang, src string }{
		{"python", "import time\nn = float(input())\nt = time.process_time()\nwhile time.process_time() - t < n:\n    pass\nif n < 0:\n    time.sleep(60)\nprint('done')\n"},
		{"cpp", "#include <bits/stdc++.h>\n#include <unistd.h>\nint main() { double n; std::cin >> n; auto t = std::clock();\n" +
			"  while (std::clock() - t < n * CLOCKS_PER_SEC) {}\n  if (n < 0) sleep(60);\n  std::puts(\"done\"); }\n"},
	} {
		t.Run(c.lang, func(t *testing.T) {
			job := langJob(t, p, c.lang, c.src, "0.1\n", "0.9\n", "-1\n", "0.2\n")
			job.TestCPUSeconds, job.Limits.WallSeconds = 0.6, 20
			job.Check = func(_ int, out []byte) bool { return string(out) == "done\n" }
			res := run(t, p, job)
			want := []sandbox.Status{sandbox.Passed, sandbox.Timeout, sandbox.Timeout, sandbox.Passed}
			for k, tr := range res.Tests {
				if tr.Status != want[k] {
					t.Errorf("test %d: %s (%s), want %s", k, tr.Status, tr.Detail, want[k])
				}
			}
			if d := res.SlotTime; d > 8*time.Second {
				t.Errorf("took %v of slot time: the sleeper should be stopped after 2.2 s", d)
			}
			if cpu := res.Tests[0].CPU; cpu < 80*time.Millisecond || cpu > 400*time.Millisecond {
				t.Errorf("test 0 used 0.1 s of CPU, measured %v", cpu)
			}
			if !strings.Contains(res.Tests[1].Detail, "0.60 s CPU per test") {
				t.Errorf("the detail does not name the limit: %q", res.Tests[1].Detail)
			}
		})
	}
}

// stopOnFailure: with StopOnFailure, the tests after the first that
// did not run to its end are skipped; a wrong output alone does not stop
// anything (Check judges it in Go, after the run).
func stopOnFailure(t *testing.T, p *sandbox.Pool) {
	src := map[string]string{
		"python": "n = int(input())\nassert n != 3\nprint(n)\n",
		"cpp":    "#include <iostream>\nint main() { int n; std::cin >> n; if (n == 3) return 1; std::cout << n; }\n",
	}
	for _, lang := range []string{"python", "cpp"} {
		job := langJob(t, p, lang, src[lang], "1", "2", "3", "4")
		job.StopOnFailure = true
		job.Check = func(k int, out []byte) bool { return k != 1 }
		var got []sandbox.Status
		for _, tr := range run(t, p, job).Tests {
			got = append(got, tr.Status)
		}
		want := fmt.Sprint([]sandbox.Status{sandbox.Passed, sandbox.Failed, sandbox.RuntimeError, sandbox.Skipped})
		if fmt.Sprint(got) != want {
			t.Errorf("%s: %v, want %v", lang, got, want)
		}
	}
}

// compileErrors: a program that does not compile gives a Build that
// says so, with the compiler's messages; one whose compile runs out of its
// limits gives that limit.
func compileErrors(t *testing.T, p *sandbox.Pool) {
	ctx := context.Background()
	for _, c := range []struct {
		lang, src, message string
	}{
		{"cpp", "int main() { return x; }\n", "'x' was not declared"},
		{"java", "public class Main { void f() { int x = \"s\"; } }\n", "incompatible types"},
	} {
		b, err := p.Compile(ctx, sandbox.CompileJob{Language: c.lang, Source: c.src})
		if err != nil {
			t.Fatalf("%s: Compile: %v", c.lang, err)
		}
		if b.OK() || b.Status != sandbox.Failed || b.ExitCode == 0 || !strings.Contains(b.Output, c.message) {
			t.Errorf("%s: %s (%s), output %q: want failed with %q", c.lang, b.Status, b.Detail, b.Output, c.message)
		}
	}
	if _, err := p.Compile(ctx, sandbox.CompileJob{Language: "python", Source: "x = 1"}); err == nil {
		t.Errorf("Compile of python: no error")
	}
	if _, err := p.Run(ctx, sandbox.Job{Language: "cpp", Style: sandbox.IO, Inputs: []string{""}, Limits: sandbox.DefaultLimits()}); err == nil {
		t.Errorf("Run of cpp without a Build: no error")
	}
}

// judgeJob: a judge job runs under a uid of its own, with per-test
// arguments and files, as checkers do.
func judgeJob(t *testing.T, p *sandbox.Pool) {
	src := "#include <bits/stdc++.h>\n#include <unistd.h>\nint main(int argc, char **argv) {\n" +
		"  std::ifstream f(argv[1]); std::string s; f >> s; std::string in; std::cin >> in;\n" +
		"  std::cout << getuid() << ' ' << s << ' ' << in << ' ' << argv[2] << '\\n'; }\n"
	job := langJob(t, p, "cpp", src, "a", "b")
	job.Args = [][]string{{"answer", "x"}, {"answer", "y"}}
	job.TestFiles = []map[string][]byte{{"answer": []byte("one")}, {"answer": []byte("two")}}
	job.KeepOutput = true
	var uids []string
	for _, judge := range []bool{false, true} {
		job.Judge = judge
		res := run(t, p, job)
		for k, want := range []string{"one a x", "two b y"} {
			uid, rest, _ := strings.Cut(strings.TrimSpace(string(res.Tests[k].Stdout)), " ")
			if rest != want {
				t.Errorf("judge=%v, test %d: %q (%s), want %q", judge, k, res.Tests[k].Stdout, res.Tests[k].Status, want)
			}
			uids = append(uids, uid)
		}
	}
	if uids[0] != uids[1] || uids[2] != uids[3] || uids[0] == uids[2] || uids[0] == "0" || uids[2] == "0" {
		t.Errorf("uids %v: want one for the program, another (neither root) for the judge", uids)
	}
}

// TestCacheShared: pools share what is built once per machine: a second
// pool on the same cache directory builds nothing.
func TestCacheShared(t *testing.T) {
	sandboxtest.SkipUnlessAvailable(t, "cpp")
	// Not under /tmp: the sandbox mounts a /tmp of its own.
	cfg := sandbox.Config{Slots: 1, Languages: []string{"cpp"}, CacheDir: hostPath(t, "/var/tmp", "cache")}
	startPool(t, cfg)
	built := map[string]time.Time{}
	entries, _ := filepath.Glob(filepath.Join(cfg.CacheDir, "*"))
	for _, e := range entries {
		if st, err := os.Stat(e); err == nil && !strings.HasSuffix(e, ".lock") {
			built[e] = st.ModTime()
		}
	}
	if len(built) != 2 {
		t.Fatalf("cache holds %v, want the launcher and one precompiled header", built)
	}
	startPool(t, cfg)
	entries, _ = filepath.Glob(filepath.Join(cfg.CacheDir, "*"))
	for _, e := range entries {
		st, err := os.Stat(e)
		if err != nil || strings.HasSuffix(e, ".lock") {
			continue
		}
		if at, ok := built[e]; !ok || !at.Equal(st.ModTime()) {
			t.Errorf("the second pool built %s again", e)
		}
	}
}

// jobFiles: a job's files are in the work dir, for every test, in every
// language.
func jobFiles(t *testing.T, p *sandbox.Pool) {
	src := map[string]string{
		"python":     "print(open('data/in.txt').read().strip())\n",
		"cpp":        "#include <bits/stdc++.h>\nint main() { std::ifstream f(\"data/in.txt\"); std::string s; f >> s; std::cout << s << '\\n'; }\n",
		"javascript": "console.log(require('fs').readFileSync('data/in.txt', 'utf8').trim());\n",
	}
	for _, lang := range []string{"python", "cpp", "javascript"} {
		job := langJob(t, p, lang, src[lang], "", "")
		job.Files = map[string][]byte{"data/in.txt": []byte("hello\n")}
		job.Check = func(_ int, out []byte) bool { return string(out) == "hello\n" }
		for k, tr := range run(t, p, job).Tests {
			if tr.Status != sandbox.Passed {
				t.Errorf("%s test %d: %s (%s)", lang, k, tr.Status, tr.Detail)
			}
		}
	}
}
