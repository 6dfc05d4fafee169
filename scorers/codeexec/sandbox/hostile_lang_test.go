package sandbox_test

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// The hostile programs of TestHostile, in the languages the sandbox exec's:
// each must end as a failure of the program, leave the host as it was,
// leave the fork servers as they were, and leave the slot scoring right.

// hostileLang is one language's hostile suite: a pool that runs it, the
// fork server and runner it started with, and what every subtest ends
// with.
type hostileLang struct {
	*hostileSlot
	lang string
}

func newHostileLang(t *testing.T, lang string) *hostileLang {
	return &hostileLang{hostileSlot: newHostileSlot(t, startLanguagePool(t)), lang: lang}
}

// run runs src once, with empty stdin, under lim (zero fields: the
// language's defaults), and returns its test's result with its output.
func (h *hostileLang) run(t *testing.T, src string, lim sandbox.Limits) sandbox.TestResult {
	t.Helper()
	job := langJob(t, h.p, h.lang, src, "")
	job.Limits, job.KeepOutput = lim.WithDefaults(job.Limits), true
	return run(t, h.p, job).Tests[0]
}

// after checks what every hostile program must leave behind: none of its
// processes, the same fork servers, a slot that scores right, in its
// language too.
func (h *hostileLang) after(t *testing.T) {
	t.Helper()
	h.hostileSlot.after(t)
	job := langJob(t, h.p, h.lang, doubling[h.lang], "21\n")
	job.Check = func(_ int, out []byte) bool { return strings.TrimSpace(string(out)) == "42" }
	if tr := run(t, h.p, job).Tests[0]; tr.Status != sandbox.Passed {
		t.Errorf("the slot no longer runs %s right: %s (%s)", h.lang, tr.Status, tr.Detail)
	}
}

// noneOf fails the test for every line of out that starts with one of
// prefixes (what a probe prints when an attempt got through).
func noneOf(t *testing.T, out string, prefixes ...string) {
	t.Helper()
	for _, prefix := range prefixes {
		for _, l := range lines(out, prefix) {
			t.Errorf("CONTAINMENT: %s", l)
		}
	}
}

// want checks that a probe reported n attempts (lines starting with
// "blocked" or "denied"), so that it did run them.
func wantBlocked(t *testing.T, out string, n int) {
	t.Helper()
	if got := len(lines(out, "blocked")) + len(lines(out, "denied")); got != n {
		t.Errorf("%d attempts blocked, want %d:\n%s", got, n, out)
	}
}

// oneOfStatus fails unless tr ended in one of want.
func oneOfStatus(t *testing.T, tr sandbox.TestResult, want ...sandbox.Status) {
	t.Helper()
	if !slices.Contains(want, tr.Status) {
		t.Errorf("verdict %s (%s), want one of %v", tr.Status, tr.Detail, want)
	}
}

// listener is a TCP listener on loopback that must never get a
// connection.
func listener(t *testing.T) (port string, check func()) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), func() {
		l.(*net.TCPListener).SetDeadline(time.Now().Add(100 * time.Millisecond))
		if c, err := l.Accept(); err == nil {
			t.Errorf("CONTAINMENT: the listener got a connection from %v", c.RemoteAddr())
			c.Close()
		}
	}
}

const cppAttempt = `#include <bits/stdc++.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
static void attempt(const char *name, long r) {
	std::printf("%s %s %ld\n", r < 0 ? "blocked" : "OPEN", name, r);
	std::fflush(stdout);
}
// A system call made directly, past libc.
static long raw(long n, long a, long b, long c) {
	long r;
	asm volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}
`

// TestHostileCpp: C++ programs that fork without end, allocate without
// end (in one process, and over many small ones), write and read host
// files, open sockets (through libc and through raw system calls), make
// namespaces, use the i386 system call gate, and signal their parents,
// the fork servers and everything; and programs whose compile never ends
// or never fits.
func TestHostileCpp(t *testing.T) {
	h := newHostileLang(t, "cpp")
	runHostile(t, h, []hostileFamily[*hostileLang]{
		{"fork bomb", cppForkBomb},
		{"memory bomb", cppMemoryBomb},
		{"memory bomb of small processes", cppSpreadMemoryBomb},
		{"host files", cppHostFiles},
		{"sockets and namespaces, raw", cppSocketsAndNamespaces},
		{"i386 system calls", cppI386Syscalls},
		{"signals", cppSignals},
		{"compile-time bombs", cppCompileBombs},
		{"static array over the memory limit", cppStaticArray},
	})
}

// cppForkBomb: fork without end: it times out, never past the slot's process
// limit (and the launcher).
func cppForkBomb(t *testing.T, h *hostileLang) {
	stop := watchSlot(t, uidBase)
	tr := h.run(t, "#include <unistd.h>\nint main() { for (;;) fork(); }\n", hostile)
	peak, _ := stop()
	oneOfStatus(t, tr, sandbox.Timeout)
	if peak > hostile.Processes+1 { // the launcher counts too
		t.Errorf("CONTAINMENT: %d tasks of the slot's uid at once, limit %d", peak, hostile.Processes+1)
	}
	if peak < 2 {
		t.Errorf("the fork bomb never forked (peak %d tasks)", peak)
	}
}

// cppMemoryBomb: allocation without end: never resident past the memory
// limit.
func cppMemoryBomb(t *testing.T, h *hostileLang) {
	stop := watchSlot(t, uidBase)
	tr := h.run(t, "#include <cstring>\nint main() { for (;;) std::memset(new char[1 << 20], 1, 1 << 20); }\n", hostile)
	_, rss := stop()
	oneOfStatus(t, tr, sandbox.Memory)
	if rss > hostile.MemoryMB<<10 {
		t.Errorf("CONTAINMENT: %d KB resident, limit %d MB", rss, hostile.MemoryMB)
	}
}

// cppSpreadMemoryBomb: two hundred processes of 2 MiB each, and the first
// of 4 MiB, fill more than the slot's memory cgroup allows while each is
// smaller than any of the slot's servers: the kernel's OOM killer must
// choose among the program's processes (it picks the largest: the first),
// never a server, and the verdict is MLE.
func cppSpreadMemoryBomb(t *testing.T, h *hostileLang) {
	if on, why := h.p.Cgroups(); !on {
		t.Skipf("no cgroups on this machine (%v): each process is bounded by its rlimits only", why)
	}
	src := `#include <cstring>
#include <sys/mman.h>
#include <unistd.h>
// hold touches mb MiB that no process it forks inherits.
static void hold(long mb) {
	char *p = (char *)mmap(nullptr, mb << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	madvise(p, mb << 20, MADV_DONTFORK);
	std::memset(p, 1, mb << 20);
}
int main() {
	hold(4);
	for (int i = 0; i < 200; i++)
		if (fork() == 0) {
			hold(2);
			for (;;)
				pause();
		}
	for (;;)
		pause();
}
`
	// The slot's cgroup allows 64 MB for the program, 64 MB of tmpfs and
	// 64 MB for each server: 320 MB, which 200 processes of 2 MiB and
	// their page tables exceed.
	lim := sandbox.Limits{CPUSeconds: 2, WallSeconds: 6, MemoryMB: 64, OutputKB: 64, Processes: 220}
	tr := h.run(t, src, lim)
	oneOfStatus(t, tr, sandbox.Memory)
}

// cppHostFiles: writes and reads of host files, through libc and raw system
// calls, are refused; the work dir takes writes.
func cppHostFiles(t *testing.T, h *hostileLang) {
	outside := []string{hostPath(t, "/var/tmp", "cpp"), hostPath(t, "/dev/shm", "cpp")}
	src := cppAttempt + `int main() {
	attempt("write " OUT0, open(OUT0, O_WRONLY | O_CREAT, 0666));
	attempt("write " OUT1, open(OUT1, O_WRONLY | O_CREAT, 0666));
	attempt("read /etc/shadow", open("/etc/shadow", O_RDONLY));
	attempt("read /etc/passwd", open("/etc/passwd", O_RDONLY));
	attempt("read /proc/1/environ", open("/proc/1/environ", O_RDONLY));
	attempt("raw openat /etc/passwd", raw(SYS_openat, AT_FDCWD, (long)"/etc/passwd", O_RDONLY));
	attempt("raw mkdir /var/tmp", raw(SYS_mkdir, (long)OUT0 "-dir", 0777, 0));
	std::printf("wrote work %d\n", open("scratch", O_WRONLY | O_CREAT, 0600) >= 0);
}
`
	src = sub(src, "OUT0", strconv.Quote(outside[0]), "OUT1", strconv.Quote(outside[1]))
	tr := h.run(t, src, hostile)
	out := string(tr.Stdout)
	noneOf(t, out, "OPEN")
	wantBlocked(t, out, 7)
	if !strings.Contains(out, "wrote work 1") {
		t.Errorf("the program could not write its own work dir:\n%s", out)
	}
	assertAbsent(t, outside...)
}

// cppSocketsAndNamespaces: sockets, namespaces, ptrace and mount, through
// libc and raw system calls, are refused, and nothing reaches a host
// listener.
func cppSocketsAndNamespaces(t *testing.T, h *hostileLang) {
	port, check := listener(t)
	src := cppAttempt + `int main() {
	attempt("socket inet", socket(AF_INET, SOCK_STREAM, 0));
	attempt("socket unix", socket(AF_UNIX, SOCK_STREAM, 0));
	attempt("raw socket inet", raw(SYS_socket, AF_INET, SOCK_STREAM, 0));
	attempt("raw socket udp", raw(SYS_socket, AF_INET, SOCK_DGRAM, 0));
	attempt("raw socket vsock", raw(SYS_socket, 40, SOCK_STREAM, 0));
	attempt("raw unshare user", raw(SYS_unshare, 0x10000000, 0, 0));
	attempt("raw unshare net", raw(SYS_unshare, 0x40000000, 0, 0));
	attempt("raw clone newuser", raw(SYS_clone, 0x10000000 | SIGCHLD, 0, 0));
	attempt("raw ptrace attach 1", raw(SYS_ptrace, 16, 1, 0));
	attempt("raw mount", raw(SYS_mount, (long)"none", (long)"/tmp/work", (long)"tmpfs"));
	sockaddr_in a{}; a.sin_family = AF_INET; a.sin_port = htons(PORT); a.sin_addr.s_addr = htonl(0x7f000001);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	attempt("connect", s < 0 ? -1 : connect(s, (sockaddr *)&a, sizeof a));
}
`
	tr := h.run(t, sub(src, "PORT", port), hostile)
	out := string(tr.Stdout)
	noneOf(t, out, "OPEN")
	wantBlocked(t, out, 11)
	check()
}

// cppI386Syscalls: int 0x80, the 32-bit system call gate, gets the process
// killed.
func cppI386Syscalls(t *testing.T, h *hostileLang) {
	// int 0x80 is the 32-bit ABI, past the deny list: the filter kills the
	// process (SIGSYS). A kernel without the IA32 gate never runs the call
	// either: the program dies of SIGSEGV, or gets ENOSYS. Only a getpid
	// that answered a pid got through.
	src := `#include <cstdio>
int main() {
	long r;
	asm volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
	std::printf("%s %ld\n", r > 0 ? "RAN" : "blocked", r);
}
`
	tr := h.run(t, src, hostile)
	out := string(tr.Stdout)
	switch {
	case strings.HasPrefix(out, "RAN"):
		t.Errorf("CONTAINMENT: the i386 getpid ran: %q", out)
	case tr.Status == sandbox.Crashed && tr.Signal == int(syscall.SIGSYS):
		t.Logf("blocked: the seccomp filter killed it (SIGSYS)")
	case tr.Status == sandbox.Crashed && tr.Signal == int(syscall.SIGSEGV):
		t.Logf("blocked: no IA32 gate on this kernel (SIGSEGV)")
	case tr.Status == sandbox.Ran && out == fmt.Sprintf("blocked %d\n", -int(syscall.ENOSYS)):
		t.Logf("blocked: ENOSYS")
	default:
		t.Errorf("%s (%s, signal %d), output %q: want killed by SIGSYS or SIGSEGV, or ENOSYS", tr.Status, tr.Detail, tr.Signal, out)
	}
}

// cppSignals: signals to pid 1, to everything and to the parent take nothing
// down but the program.
func cppSignals(t *testing.T, h *hostileLang) {
	src := cppAttempt + `int main() {
	attempt("kill 1", kill(1, SIGKILL));
	attempt("raw kill 1", raw(SYS_kill, 1, SIGKILL, 0));
	kill(-1, SIGKILL); // every process it may signal: its launcher and itself
	std::puts("alive");
}
`
	tr := h.run(t, src, hostile)
	oneOfStatus(t, tr, sandbox.Crashed, sandbox.RuntimeError)
	noneOf(t, string(tr.Stdout), "OPEN")
	tr = h.run(t, "#include <signal.h>\n#include <unistd.h>\nint main() { kill(getppid(), SIGKILL); pause(); }\n", hostile)
	oneOfStatus(t, tr, sandbox.Crashed, sandbox.Timeout)
}

// cppCompileBombs: compiles that never end or never fit end as failed Builds
// within their limits.
func cppCompileBombs(t *testing.T, h *hostileLang) {
	lim := sandbox.Limits{CPUSeconds: 3, WallSeconds: 10, MemoryMB: 512, OutputKB: 16 << 10, Processes: 16}
	for _, c := range []struct{ name, src string }{
		{"include /dev/zero", "#include </dev/zero>\nint main() {}\n"},
		{"include /dev/urandom", "#include </dev/urandom>\nint main() {}\n"},
		{"constexpr loop", "constexpr long f() { long s = 0; for (long i = 0; i < 200000; i++) for (long j = 0; j < 200000; j++) s += i ^ j; return s; }\n" +
			"static_assert(f() != 1);\nint main() {}\n"},
		{"template explosion", "template <int A, int B> struct P { static const long v = P<A - 1, B>::v + P<A, B - 1>::v; };\n" +
			"template <int B> struct P<0, B> { static const long v = 1; };\ntemplate <int A> struct P<A, 0> { static const long v = 1; };\n" +
			"int main() { return P<400, 400>::v & 1; }\n"},
		{"huge initialised array", "char a[1 << 30] = {1};\nint main() { return a[5]; }\n"},
		// Tens of megabytes of diagnostics in a second: each instantiation's
		// error names a type three times longer than the last.
		{"diagnostic bomb", "template <class T> struct W { static_assert(sizeof(T) < 0, \"x\"); W<W<W<T>>> w; };\nint main() { W<int> w; }\n"},
	} {
		start := time.Now()
		b, err := h.p.Compile(t.Context(), sandbox.CompileJob{Language: "cpp", Source: c.src, Limits: lim})
		if err != nil {
			t.Errorf("%s: Compile: %v (a compile that fails is a Build, not an error)", c.name, err)
			continue
		}
		if b.OK() {
			t.Errorf("%s: compiled", c.name)
		}
		if c.name == "constexpr loop" && b.Status != sandbox.Timeout {
			// g++ exits 4 when the CPU limit kills its cc1plus.
			t.Errorf("%s: %s (%s), want the compile's time limit", c.name, b.Status, b.Detail)
		}
		if c.name == "diagnostic bomb" && (b.Status != sandbox.Output || len(b.Output) > 64<<10 || !strings.Contains(b.Output, "static assertion failed")) {
			t.Errorf("%s: %s (%s), %d bytes of messages: want the compiler's output limit, and its first 64 KiB", c.name, b.Status, b.Detail, len(b.Output))
		}
		if b.Wall > time.Duration(lim.WallSeconds+1)*time.Second {
			t.Errorf("%s: took %v of slot time with a wall limit of %g s", c.name, b.Wall, lim.WallSeconds)
		}
		t.Logf("%s: %s (%s) after %v, %v of CPU", c.name, b.Status, b.Detail, time.Since(start), b.CPU)
	}
}

// cppStaticArray: a static array past the memory limit ends as memory.
func cppStaticArray(t *testing.T, h *hostileLang) {
	tr := h.run(t, "static char a[1L << 36];\nint main(int argc, char **) { a[argc << 30] = 1; return a[argc]; }\n", hostile)
	oneOfStatus(t, tr, sandbox.Memory)
}

// TestHostileJava: a JVM that starts threads without end, allocates
// without end, spawns a shell to read host files, writes outside its work
// dir and connects to the host.
func TestHostileJava(t *testing.T) {
	h := newHostileLang(t, "java")
	lim := sandbox.Limits{CPUSeconds: 2, WallSeconds: 6, MemoryMB: 256, OutputKB: 64, Processes: 32}

	t.Run("thread bomb", func(t *testing.T) {
		stop := watchSlot(t, uidBase)
		tr := h.run(t, `public class Main { public static void main(String[] a) {
	while (true) new Thread(() -> { try { Thread.sleep(100000); } catch (Exception e) {} }).start();
} }`, lim)
		peak, _ := stop()
		oneOfStatus(t, tr, sandbox.Memory, sandbox.RuntimeError, sandbox.Timeout, sandbox.Crashed)
		if peak > lim.Processes+1 {
			t.Errorf("CONTAINMENT: %d tasks of the slot's uid at once, limit %d", peak, lim.Processes+1)
		}
		h.after(t)
	})

	t.Run("memory bomb", func(t *testing.T) {
		tr := h.run(t, `import java.util.*;
public class Main { public static void main(String[] a) {
	List<long[]> l = new ArrayList<>(); while (true) l.add(new long[1 << 20]);
} }`, lim)
		oneOfStatus(t, tr, sandbox.Memory)
		h.after(t)
	})

	t.Run("files, processes, sockets", func(t *testing.T) {
		port, check := listener(t)
		outside := hostPath(t, "/var/tmp", "java")
		tr := h.run(t, sub(`import java.io.*;
import java.net.*;
public class Main {
	interface Try { Object run() throws Exception; }
	static void attempt(String name, Try f) {
		try { Object r = f.run(); System.out.println("OPEN " + name + " " + r); }
		catch (Throwable e) { System.out.println("blocked " + name + " " + e.getClass().getSimpleName()); }
	}
	public static void main(String[] a) throws Exception {
		attempt("read /etc/passwd", () -> new FileInputStream("/etc/passwd").read());
		attempt("write outside", () -> { new FileOutputStream(OUTSIDE).close(); return 0; });
		attempt("connect", () -> { new Socket("127.0.0.1", PORT).close(); return 0; });
		attempt("datagram", () -> { new DatagramSocket().close(); return 0; });
		Process p = new ProcessBuilder("/bin/sh", "-c", "cat /etc/passwd /etc/shadow; id -u").redirectErrorStream(true).start();
		System.out.println("shell said " + new String(p.getInputStream().readAllBytes()).replace('\n', ' '));
	}
}`, "OUTSIDE", strconv.Quote(outside), "PORT", port), lim)
		out := string(tr.Stdout)
		noneOf(t, out, "OPEN")
		wantBlocked(t, out, 4)
		if !strings.Contains(out, "shell said") || strings.Contains(out, "root:") {
			t.Errorf("CONTAINMENT or no shell: %s", out)
		}
		assertAbsent(t, outside)
		check()
		h.after(t)
	})
}

// TestHostileJavaScript: node that spawns shells, reads and writes host
// files, connects to the host, allocates without end and kills its
// parent.
func TestHostileJavaScript(t *testing.T) {
	h := newHostileLang(t, "javascript")
	lim := sandbox.Limits{CPUSeconds: 2, WallSeconds: 6, MemoryMB: 256, OutputKB: 64, Processes: 32}

	t.Run("files, processes, sockets", func(t *testing.T) {
		port, check := listener(t)
		outside := hostPath(t, "/var/tmp", "js")
		tr := h.run(t, sub(`const fs = require("fs"), cp = require("child_process");
function attempt(name, f) {
	try { const r = f(); console.log("OPEN " + name + " " + String(r).slice(0, 40)); }
	catch (e) { console.log("blocked " + name + " " + e.code); }
}
attempt("read /etc/passwd", () => fs.readFileSync("/etc/passwd"));
attempt("write outside", () => fs.writeFileSync(OUTSIDE, "x"));
attempt("list /root", () => fs.readdirSync("/root"));
attempt("shell cat /etc/shadow", () => cp.execSync("cat /etc/shadow", {stdio: "pipe"}));
attempt("kill pid 1", () => process.kill(1, "SIGKILL"));
const s = require("net").connect(PORT, "127.0.0.1");
s.on("connect", () => console.log("OPEN connect"));
s.on("error", (e) => console.log("blocked connect " + e.code));
`, "OUTSIDE", strconv.Quote(outside), "PORT", port), lim)
		out := string(tr.Stdout)
		noneOf(t, out, "OPEN")
		wantBlocked(t, out, 6)
		assertAbsent(t, outside)
		check()
		h.after(t)
	})

	t.Run("memory bomb", func(t *testing.T) {
		tr := h.run(t, "const a = []; for (;;) a.push(new Array(1 << 20).fill(2.5));\n", lim)
		oneOfStatus(t, tr, sandbox.Memory)
		h.after(t)
	})

	t.Run("kill the parent", func(t *testing.T) {
		tr := h.run(t, "process.kill(process.ppid, 'SIGKILL'); setTimeout(() => {}, 100000);\n", lim)
		oneOfStatus(t, tr, sandbox.Crashed, sandbox.Timeout)
		h.after(t)
	})
}
