package sandboxtest

import "strings"

// NamespaceAttempts are the names of what a Namespaces program attempts,
// each on a line of its own ("blocked NAME ..." or "OPEN NAME ..."), in
// the order it attempts them: ptrace(PTRACE_ATTACH) of PID 1, a tmpfs
// mounted on /tmp/work, unshare(CLONE_NEWNET) and unshare(CLONE_NEWUSER)
// (or, in a process with threads, which the kernel refuses that with
// EINVAL, a child cloned into a new user namespace). The order lets each attempt get through when the program runs as root
// outside the sandbox (after a new user namespace, the others would fail
// for want of privilege over the host's), so that a program's OPEN lines
// can be seen by hand.
func NamespaceAttempts() []string {
	return []string{"ptrace attach 1", "mount", "unshare net", "unshare user"}
}

// x86-64's numbers, for the languages that make the system call
// themselves: SYS_ptrace 101 (PTRACE_ATTACH 16), SYS_mount 165,
// SYS_unshare 272 (CLONE_NEWNET 0x40000000, CLONE_NEWUSER 0x10000000).

// ptracePython is a python3 program that attaches to PID 1 and exits 0 if
// it could: the languages that make no system call start it, there being
// no util-linux command that attaches. It has no quote and no backslash,
// for the shells and string literals it is put in.
const ptracePython = "import ctypes, sys; sys.exit(ctypes.CDLL(None).ptrace(16, 1, 0, 0) != 0)"

// namespaceCommands are the commands a language with no system call of
// its own starts for each of NamespaceAttempts, in order: each exits 0
// when the attempt got through. mount(8) refuses a user other than root
// before it makes the call (exit 32): there the slot's uid stops it first,
// the seccomp filter being shown by the languages that call mount
// themselves.
func namespaceCommands() [][]string {
	return [][]string{
		{"/usr/bin/python3", "-c", ptracePython},
		{"/usr/bin/mount", "-t", "tmpfs", "none", "/tmp/work"},
		{"/usr/bin/unshare", "-n", "/bin/true"},
		{"/usr/bin/unshare", "-Ur", "/bin/true"},
	}
}

// commandsIn writes each of namespaceCommands as the arguments of a call
// in a language with double-quoted strings: "a", "b", "c".
func commandsIn(format string) string {
	var b strings.Builder
	for i, cmd := range namespaceCommands() {
		args := `"` + strings.Join(cmd, `", "`) + `"`
		b.WriteString(strings.NewReplacer("NAME", NamespaceAttempts()[i], "ARGS", args).Replace(format))
	}
	return b.String()
}

// shellCommands writes each of namespaceCommands as a line of sh, made
// by format from NAME and CMD.
func shellCommands(format string) string {
	var b strings.Builder
	for i, cmd := range namespaceCommands() {
		if i == 0 {
			cmd = []string{cmd[0], cmd[1], "'" + cmd[2] + "'"}
		}
		b.WriteString(strings.NewReplacer("NAME", NamespaceAttempts()[i], "CMD", strings.Join(cmd, " ")).Replace(format))
	}
	return b.String()
}

// namespacePrograms are the Namespaces programs of the languages and
// runners, by name. A program makes the system calls itself where its
// language can (Go's syscall.RawSyscall, Rust's, D's, Racket's and PHP's
// calls into libc, C#'s DllImport, perl's and ruby's syscall, Python's
// ctypes); otherwise it starts namespaceCommands through its language's
// process API, a command that cannot start counting as blocked (saying
// so). Go and C#, whose processes have threads, make the user namespace
// in a child. Verilog has none (see extraLanguagePrograms).
func namespacePrograms() map[string]string {
	goMain := `package main

import (
	"fmt"
	"os/exec"
	"syscall"
	"unsafe"
)

func attempt(name string, r uintptr, errno syscall.Errno) {
	if errno != 0 {
		fmt.Println("blocked", name, errno)
	} else {
		fmt.Println("OPEN", name, r)
	}
}

func cstring(s string) *byte {
	p, _ := syscall.BytePtrFromString(s)
	return p
}

func main() {
	r, _, e := syscall.RawSyscall(syscall.SYS_PTRACE, syscall.PTRACE_ATTACH, 1, 0)
	attempt("ptrace attach 1", r, e)
	src, target, fs := cstring("none"), cstring("/tmp/work"), cstring("tmpfs")
	r, _, e = syscall.RawSyscall6(syscall.SYS_MOUNT, uintptr(unsafe.Pointer(src)), uintptr(unsafe.Pointer(target)), uintptr(unsafe.Pointer(fs)), 0, 0, 0)
	attempt("mount", r, e)
	r, _, e = syscall.RawSyscall(syscall.SYS_UNSHARE, syscall.CLONE_NEWNET, 0, 0)
	attempt("unshare net", r, e)
	// A process with threads (Go's runtime has them) cannot unshare a
	// user namespace (EINVAL): a child is cloned into one.
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
	if err := cmd.Run(); err != nil {
		fmt.Println("blocked unshare user: clone:", err)
	} else {
		fmt.Println("OPEN unshare user: clone")
	}
}
`
	return map[string]string{
		"go": goMain,
		// go test shows a test's output only when it fails.
		"go_test": strings.NewReplacer("\nimport (\n", "\nimport (\n\t\"testing\"\n",
			"func main() {", "func TestNamespaces(t *testing.T) {\n\tdefer t.Fail()").Replace(goMain),
		"rust": `extern "C" {
    fn syscall(n: i64, ...) -> i64;
}
fn attempt(name: &str, r: i64) {
    let e = std::io::Error::last_os_error();
    if r < 0 {
        println!("blocked {} {}", name, e);
    } else {
        println!("OPEN {} {}", name, r);
    }
}
fn main() {
    unsafe {
        attempt("ptrace attach 1", syscall(101, 16i64, 1i64, 0i64, 0i64));
        attempt("mount", syscall(165, b"none\0".as_ptr(), b"/tmp/work\0".as_ptr(), b"tmpfs\0".as_ptr(), 0i64, 0i64));
        attempt("unshare net", syscall(272, 0x40000000i64));
        attempt("unshare user", syscall(272, 0x10000000i64));
    }
}
`,
		"d": `import core.stdc.errno, std.stdio;
extern (C) long syscall(long n, ...);
void attempt(string name, long r) {
    const e = errno;
    if (r < 0) writeln("blocked ", name, " errno ", e); else writeln("OPEN ", name, " ", r);
}
void main() {
    attempt("ptrace attach 1", syscall(101, 16L, 1L, 0L, 0L));
    attempt("mount", syscall(165, "none".ptr, "/tmp/work".ptr, "tmpfs".ptr, 0L, 0L));
    attempt("unshare net", syscall(272, 0x40000000L));
    attempt("unshare user", syscall(272, 0x10000000L));
}
`,
		"csharp": `using System.Diagnostics;
using System.Runtime.InteropServices;
public class Program {
    [DllImport("libc", SetLastError = true)] static extern long syscall(long n, long a, long b, long c, long d, long e);
    [DllImport("libc", EntryPoint = "syscall", SetLastError = true)] static extern long syscall(long n, string a, string b, string c, long d, long e);
    static void Attempt(string name, long r) {
        Console.WriteLine(r < 0 ? "blocked " + name + " errno " + Marshal.GetLastWin32Error() : "OPEN " + name + " " + r);
    }
    public static void Main() {
        Attempt("ptrace attach 1", syscall(101, 16, 1, 0, 0, 0));
        Attempt("mount", syscall(165, "none", "/tmp/work", "tmpfs", 0, 0));
        Attempt("unshare net", syscall(272, 0x40000000, 0, 0, 0, 0));
        // A process with threads (Mono has them) cannot unshare a user
        // namespace (EINVAL): unshare(1) is started to make one.
        try {
            var p = Process.Start(new ProcessStartInfo("/usr/bin/unshare", "-Ur /bin/true") { UseShellExecute = false, RedirectStandardError = true });
            p.WaitForExit();
            Console.WriteLine((p.ExitCode == 0 ? "OPEN" : "blocked") + " unshare user: unshare(1) exit " + p.ExitCode);
        } catch (Exception e) { Console.WriteLine("blocked unshare user: could not start unshare(1): " + e.GetType().Name); }
    }
}
`,
		// syscall may write into its string arguments: they are variables.
		"perl": `sub attempt { my ($name, $r) = @_; print $r == -1 ? "blocked $name $!\n" : "OPEN $name $r\n"; }
my ($src, $target, $fs) = ("none", "/tmp/work", "tmpfs");
attempt("ptrace attach 1", syscall(101, 16, 1, 0, 0));
attempt("mount", syscall(165, $src, $target, $fs, 0, 0));
attempt("unshare net", syscall(272, 0x40000000));
attempt("unshare user", syscall(272, 0x10000000));
`,
		// Kernel#syscall raises the errno; NotImplementedError (no
		// syscall here) is not caught: the program then prints nothing.
		"ruby": `def attempt(name)
  puts "OPEN #{name} #{yield}"
rescue SystemCallError => e
  puts "blocked #{name} #{e.class}"
end
attempt("ptrace attach 1") { syscall(101, 16, 1, 0, 0) }
attempt("mount") { syscall(165, "none", "/tmp/work", "tmpfs", 0, 0) }
attempt("unshare net") { syscall(272, 0x40000000) }
attempt("unshare user") { syscall(272, 0x10000000) }
`,
		// PHP's CLI has FFI (ffi.enable=preload): libc's own wrappers.
		"php": `<?php
$libc = FFI::cdef("long ptrace(int req, int pid, void *addr, void *data);
int mount(const char *src, const char *target, const char *fs, unsigned long flags, const void *data);
int unshare(int flags);
int *__errno_location(void);", "libc.so.6");
function attempt($libc, $name, $r) {
	echo $r < 0 ? "blocked $name errno " . $libc->__errno_location()[0] . "\n" : "OPEN $name $r\n";
}
attempt($libc, "ptrace attach 1", $libc->ptrace(16, 1, null, null));
attempt($libc, "mount", $libc->mount("none", "/tmp/work", "tmpfs", 0, null));
attempt($libc, "unshare net", $libc->unshare(0x40000000));
attempt($libc, "unshare user", $libc->unshare(0x10000000));
`,
		"racket": `#lang racket/base
(require ffi/unsafe)
(define sys (get-ffi-obj "syscall" #f (_fun #:save-errno 'posix _long _long _long _long _long -> _long)))
(define sys/strings (get-ffi-obj "syscall" #f (_fun #:save-errno 'posix _long _string _string _string _long _long -> _long)))
(define (attempt name r)
  (if (< r 0)
      (printf "blocked ~a errno ~a\n" name (saved-errno))
      (printf "OPEN ~a ~a\n" name r)))
(attempt "ptrace attach 1" (sys 101 16 1 0 0))
(attempt "mount" (sys/strings 165 "none" "/tmp/work" "tmpfs" 0 0))
(attempt "unshare net" (sys 272 #x40000000 0 0 0))
(attempt "unshare user" (sys 272 #x10000000 0 0 0))
`,
		// pytest shows a passing test's output nowhere: the lines are
		// printed at exit.
		"pytest": `import atexit, ctypes, os

libc = ctypes.CDLL(None, use_errno=True)


def test_namespaces():
    lines = []

    def attempt(name, r):
        e = ctypes.get_errno()
        lines.append("blocked %s %s" % (name, os.strerror(e)) if r < 0 else "OPEN %s %d" % (name, r))

    attempt("ptrace attach 1", libc.syscall(101, 16, 1, 0, 0))
    attempt("mount", libc.syscall(165, b"none", b"/tmp/work", b"tmpfs", 0, 0))
    attempt("unshare net", libc.syscall(272, 0x40000000))
    attempt("unshare user", libc.syscall(272, 0x10000000))
    atexit.register(print, "\n".join(lines))
`,
		"bash": "attempt() {\n  if \"${@:2}\" >/dev/null 2>&1; then echo \"OPEN $1\"; else echo \"blocked $1: exit $?\"; fi\n}\n" +
			shellCommands("attempt \"NAME\" CMD\n"),
		"lua": "local function attempt(name, cmd)\n  local ok, how, code = os.execute(cmd .. \" >/dev/null 2>&1\")\n" +
			"  print((ok and \"OPEN \" or \"blocked \") .. name .. \": \" .. tostring(how) .. \" \" .. tostring(code))\nend\n" +
			shellCommands("attempt(\"NAME\", \"CMD\")\n"),
		// .shell runs its line with sh, quoting again each argument
		// that has a space: ptracePython's quotes are sqlite3's.
		"sql": strings.ReplaceAll(shellCommands(".shell CMD >/dev/null 2>&1 && echo OPEN NAME || echo blocked NAME\n"), "'", "\""),
		"r": "attempt <- function(name, cmd, ...) {\n" +
			"  r <- tryCatch(suppressWarnings(system2(cmd, shQuote(c(...)), stdout = FALSE, stderr = FALSE)), error = function(e) conditionMessage(e))\n" +
			"  cat(if (isTRUE(r == 0)) \"OPEN\" else \"blocked\", paste0(name, \":\"), r, \"\\n\")\n}\n" +
			commandsIn("attempt(\"NAME\", ARGS)\n"),
		"typescript": "const cp = require(\"child_process\");\nfunction attempt(name: string, cmd: string, ...args: string[]) {\n" +
			"  const r = cp.spawnSync(cmd, args, { stdio: \"ignore\" });\n" +
			"  if (r.error) console.log(\"blocked \" + name + \": could not start: \" + r.error.code);\n" +
			"  else console.log((r.status === 0 ? \"OPEN \" : \"blocked \") + name + \": exit \" + r.status + \" signal \" + r.signal);\n}\n" +
			commandsIn("attempt(\"NAME\", ARGS);\n"),
		"kotlin_script": "fun attempt(name: String, vararg cmd: String) {\n    try {\n" +
			"        val p = ProcessBuilder(*cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start()\n" +
			"        val code = p.waitFor()\n        println((if (code == 0) \"OPEN \" else \"blocked \") + name + \": exit \" + code)\n" +
			"    } catch (e: Exception) { println(\"blocked \" + name + \": could not start: \" + e) }\n}\n" +
			commandsIn("attempt(\"NAME\", ARGS)\n"),
		"scala": "object Main {\n  def attempt(name: String, cmd: String*): Unit =\n    try {\n" +
			"      val p = new ProcessBuilder(cmd: _*).redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start()\n" +
			"      val code = p.waitFor()\n      println((if (code == 0) \"OPEN \" else \"blocked \") + name + \": exit \" + code)\n" +
			"    } catch { case e: Exception => println(\"blocked \" + name + \": could not start: \" + e) }\n" +
			"  def main(args: Array[String]): Unit = {\n" + commandsIn("    attempt(\"NAME\", ARGS)\n") + "  }\n}\n",
		"junit": junitHead + "public class Namespaces {\n    static void attempt(String name, String... cmd) {\n        try {\n" +
			"            Process p = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();\n" +
			"            int code = p.waitFor();\n            System.out.println((code == 0 ? \"OPEN \" : \"blocked \") + name + \": exit \" + code);\n" +
			"        } catch (Exception e) { System.out.println(\"blocked \" + name + \": could not start: \" + e); }\n    }\n\n" +
			"    @Test\n    void namespaces() {\n" + commandsIn("        attempt(\"NAME\", ARGS);\n") + "    }\n}\n",
	}
}
