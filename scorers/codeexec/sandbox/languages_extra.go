package sandbox

import "regexp"

// extraLanguages are the rest of SandboxFusion's languages that Debian
// bookworm packages: C# (Mono), Kotlin scripts, Scala, SQL (sqlite3),
// Racket, Verilog (Icarus) and D (LDC), under SandboxFusion's names, with
// its compile and run commands where Debian's toolchain has them. As
// moreLanguages', their toolchains are optional and their programs are in
// internal/sandboxtest/programs_extra.go.
func extraLanguages(compileLimits Limits) []*Language {
	// Compilers that are Mono programs run many threads, each a process
	// to RLIMIT_NPROC.
	threaded := compileLimits
	threaded.CPUSeconds, threaded.WallSeconds, threaded.Processes = 20, 30, 64
	jvmRun := Limits{CPUSeconds: 4, WallSeconds: 10, MemoryMB: 512, OutputKB: 1024, Processes: defaultProcesses}
	return []*Language{
		{
			Name: "csharp", SandboxFusion: "csharp", Aliases: []string{"cs", "c#"}, Source: "main.cs",
			// SandboxFusion builds with dotnet, whose console projects
			// import System and its usual namespaces implicitly and
			// define DEBUG: mcs gets both (csharpUsings).
			Compile: []string{"/usr/bin/mono", "/usr/lib/mono/4.5/mcs.exe", "-nologo", "-nowarn:105", "-define:DEBUG",
				"-optimize+", "-out:main.exe", "main.cs"},
			Artefacts: []string{"main.exe"},
			Run:       []string{"/usr/bin/mono", "main.exe"},
			Package:   "mono-mcs", Toolchain: []string{"/usr/bin/mono", "/usr/lib/mono/4.5/mcs.exe"},
			CompileLimits: threaded,
			RunLimits:     DefaultLimits(), Memory: Resident, ReadPaths: []string{"/etc/mono"},
			// Mono's shared area would be a file in /dev/shm.
			Env:           []string{"MONO_DISABLE_SHARED_AREA=1"},
			MemoryMarkers: []string{"System.OutOfMemoryException", "Out of memory"},
			SourceText:    csharpUsings,
			MainStack:     true,
			Probe:         csharpProbe,
		},
		{
			Name: "kotlin_script", SandboxFusion: "kotlin_script", Aliases: []string{"kts"}, Source: "main.kts",
			// SandboxFusion's kotlin main.kts, with kotlinc's JVM started
			// directly: Debian's kotlin (1.3) runs no script, its kotlinc
			// -script does. The script is compiled as it runs: about 2 s of
			// CPU before the program's first line, counted in its time.
			Run: []string{"/usr/bin/java", "-Xmx{memory_mb}m", "-Xss64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
				"-XX:-UsePerfData", "-XX:CICompilerCount=1", "-Dkotlin.home=" + kotlinHome,
				"-cp", kotlinHome + "/lib/kotlin-preloader.jar", "org.jetbrains.kotlin.preloading.Preloader",
				"-cp", kotlinHome + "/lib/kotlin-compiler.jar", "org.jetbrains.kotlin.cli.jvm.K2JVMCompiler", "-script", "main.kts"},
			Package: "kotlin", Toolchain: []string{"/usr/bin/java", kotlinHome + "/lib/kotlin-compiler.jar"},
			RunLimits: Limits{CPUSeconds: 10, WallSeconds: 20, MemoryMB: 512, OutputKB: 1024, Processes: defaultProcesses},
			Memory:    Cgroup, ReadPaths: []string{"/etc/java-17-openjdk"},
			MemoryMarkers: []string{"java.lang.OutOfMemoryError"},
			Probe:         kotlinProbe,
		},
		{
			Name: "scala", SandboxFusion: "scala", Source: "main.scala", ClassName: scalaObject,
			// scalac and scala are shell scripts that start the JVM; the
			// JVM is started directly, with java's flags.
			Compile: []string{"/usr/bin/java", "-Xmx512m", "-Xss16m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
				"-cp", scalaLib + "/scala-compiler.jar:" + scalaLib + "/scala-library.jar:" + scalaLib + "/scala-reflect.jar",
				"-Dscala.usejavacp=true", "scala.tools.nsc.Main", "-nowarn", "-d", ".", "main.scala"},
			Artefacts: []string{"*.class"},
			Run: []string{"/usr/bin/java", "-Xmx{memory_mb}m", "-Xss64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
				"-XX:-UsePerfData", "-XX:CICompilerCount=1", "-Xshare:auto", "-cp", scalaLib + "/scala-library.jar:.", "{class}"},
			Package: "scala", Toolchain: []string{"/usr/bin/java", scalaLib + "/scala-compiler.jar"},
			CompileLimits: Limits{CPUSeconds: 30, WallSeconds: 45, MemoryMB: 1024, OutputKB: compilerOutputKB, Processes: 64},
			RunLimits:     jvmRun,
			Memory:        Cgroup, ReadPaths: []string{"/etc/java-17-openjdk"},
			MemoryMarkers: []string{"java.lang.OutOfMemoryError"},
			Probe:         scalaProbe,
		},
		{
			Name: "sql", SandboxFusion: "sql", Aliases: []string{"sqlite", "sqlite3"}, Source: "main.sql",
			// SandboxFusion names sql but runs none: here a program is a
			// script of sqlite3's shell on an empty in-memory database,
			// stopped at its first error, stdin readable as /dev/stdin
			// (.import).
			Run:     []string{"/usr/bin/sqlite3", "-batch", "-bail", ":memory:", ".read main.sql"},
			Package: "sqlite3", Toolchain: []string{"/usr/bin/sqlite3"},
			RunLimits: DefaultLimits(), Memory: AddressSpace,
			MemoryMarkers: []string{"out of memory"},
			Probe:         sqlProbe,
		},
		{
			Name: "racket", SandboxFusion: "racket", Aliases: []string{"rkt"}, Source: "main.rkt",
			Run:     []string{"/usr/bin/racket", "main.rkt"},
			Package: "racket", Toolchain: []string{"/usr/bin/racket"},
			RunLimits: DefaultLimits(), Memory: Resident, ReadPaths: []string{"/etc/racket"},
			MemoryMarkers: []string{"out of memory"},
			Probe:         racketProbe,
		},
		{
			Name: "verilog", SandboxFusion: "verilog", Aliases: []string{"systemverilog", "sv"}, Source: "main.sv",
			// SandboxFusion's (verilog-eval's) commands: the top module
			// is tb.
			Compile:   []string{"/usr/bin/iverilog", "-Wall", "-Winfloop", "-Wno-timescale", "-g2012", "-s", "tb", "-o", "test.vvp", "main.sv"},
			Artefacts: []string{"test.vvp"},
			Run:       []string{"/usr/bin/vvp", "-n", "test.vvp"},
			Package:   "iverilog", Toolchain: []string{"/usr/bin/iverilog", "/usr/bin/vvp"},
			CompileLimits: compileLimits,
			RunLimits:     DefaultLimits(), Memory: AddressSpace,
			MemoryMarkers: []string{"out of memory", "std::bad_alloc"},
			Probe:         verilogProbe,
		},
		{
			Name: "d", SandboxFusion: "D_ut", Aliases: []string{"dlang"}, Source: "main.d",
			// SandboxFusion's dmd command, with LDC: unittest blocks run
			// before main, and main only when there are none.
			Compile:   []string{"/usr/bin/ldc2", "-unittest", "-of=main", "main.d"},
			Artefacts: []string{"main"},
			Run:       []string{"./main"},
			// ldc2 links with cc.
			Package: "ldc", Toolchain: []string{"/usr/bin/ldc2", cCompiler},
			CompileLimits: compileLimits,
			RunLimits:     DefaultLimits(), Memory: Resident, ReadPaths: []string{"/etc/ldc2.conf"},
			MemoryMarkers: []string{"core.exception.OutOfMemoryError"},
			MainStack:     true,
			Probe:         dProbe,
		},
	}
}

// kotlinHome is Debian's Kotlin (1.3).
const kotlinHome = "/usr/share/kotlin/kotlinc"

// scalaLib holds Debian's Scala (2.11) jars.
const scalaLib = "/usr/share/scala-2.11/lib"

var scalaObjectName = regexp.MustCompile(`\bobject\s+(\w+)`)

// scalaObject is the name of the program's first object, as SandboxFusion
// finds it, or Main.
func scalaObject(source string) string {
	if m := scalaObjectName.FindStringSubmatch(source); m != nil {
		return m[1]
	}
	return "Main"
}

// csharpUsings puts before a C# program the namespaces a dotnet console
// project imports implicitly (SandboxFusion's programs use Console with no
// using), on a line of their own that #line leaves out of the program's
// line numbers; a program's own using of one of them is then a repeat,
// whose warning (CS0105) the compile turns off.
func csharpUsings(source string) string {
	return "using System; using System.IO; using System.Collections.Generic; using System.Linq; " +
		"using System.Threading; using System.Threading.Tasks;\n#line 1\n" + source
}

const csharpProbe = `using System.Net;
using System.Net.Sockets;
public class Program {
	static void T(string name, Action f) {
		try { f(); Console.WriteLine(name + " open"); } catch (Exception) { Console.WriteLine(name + " closed"); }
	}
	public static void Main() {
		T("tcp", () => new TcpListener(IPAddress.Loopback, 0).Start());
		T("udp", () => new UdpClient(0).Close());
		T("host_files", () => File.ReadAllText("/etc/passwd"));
		T("proc", () => File.ReadAllText("/proc/self/status"));
		T("write_outside_workdir", () => File.WriteAllText("/var/tmp/rewardd-sandbox-probe", "x"));
	}
}
`

const scalaProbe = `object Main {
  def t(name: String)(f: => Any): Unit =
    println(name + " " + (try { f; "open" } catch { case _: Throwable => "closed" }))
  def main(args: Array[String]): Unit = {
    t("tcp") { new java.net.ServerSocket(0).close() }
    t("udp") { new java.net.DatagramSocket().close() }
    t("host_files") { new java.io.FileInputStream("/etc/passwd").close() }
    t("proc") { new java.io.FileInputStream("/proc/self/status").close() }
    t("write_outside_workdir") { new java.io.FileOutputStream("/var/tmp/rewardd-sandbox-probe").close() }
  }
}
`

const kotlinProbe = `fun t(name: String, f: () -> Unit) =
    println(name + " " + (try { f(); "open" } catch (e: Throwable) { "closed" }))
t("tcp") { java.net.ServerSocket(0).close() }
t("udp") { java.net.DatagramSocket().close() }
t("host_files") { java.io.FileInputStream("/etc/passwd").close() }
t("proc") { java.io.FileInputStream("/proc/self/status").close() }
t("write_outside_workdir") { java.io.FileOutputStream("/var/tmp/rewardd-sandbox-probe").close() }
`

const sqlProbe = `SELECT 'host_files ' || CASE WHEN readfile('/etc/passwd') IS NULL THEN 'closed' ELSE 'open' END;
SELECT 'proc ' || CASE WHEN readfile('/proc/self/status') IS NULL THEN 'closed' ELSE 'open' END;
SELECT 'write_outside_workdir ' || CASE WHEN writefile('/var/tmp/rewardd-sandbox-probe', 'x') IS NULL THEN 'closed' ELSE 'open' END;
.shell bash -c 'exec 3<>/dev/tcp/127.0.0.1/1 2>/dev/null && echo tcp open || echo tcp closed'
.shell bash -c '[ "$(id -u)" = 0 ] && echo uid_0 open || echo uid_0 closed'
`

const racketProbe = `#lang racket/base
(require racket/tcp racket/udp racket/file)
(define (t name f)
  (printf "~a ~a\n" name (with-handlers ([(lambda (e) #t) (lambda (e) "closed")]) (f) "open")))
(t "tcp" (lambda () (tcp-close (tcp-listen 0))))
(t "udp" (lambda () (udp-bind! (udp-open-socket) "127.0.0.1" 0)))
(t "host_files" (lambda () (file->string "/etc/passwd")))
(t "proc" (lambda () (file->string "/proc/self/status")))
(t "write_outside_workdir" (lambda () (display-to-file "x" "/var/tmp/rewardd-sandbox-probe" #:exists 'replace)))
`

const verilogProbe = `module tb;
  integer f;
  task t(input [8*32-1:0] name, input integer fd);
    if (fd != 0) $display("%0s open", name); else $display("%0s closed", name);
  endtask
  initial begin
    f = $fopen("/etc/passwd", "r"); t("host_files", f);
    f = $fopen("/proc/self/status", "r"); t("proc", f);
    f = $fopen("/var/tmp/rewardd-sandbox-probe", "w"); t("write_outside_workdir", f);
    f = $fopen("/etc/shadow", "r"); t("shadow", f);
    $finish;
  end
endmodule
`

const dProbe = `import std.stdio, std.file;
import core.sys.posix.sys.socket, core.sys.posix.unistd;
void t(string name, bool open) { writeln(name, open ? " open" : " closed"); }
void main() {
	t("tcp", socket(AF_INET, SOCK_STREAM, 0) >= 0);
	t("udp", socket(AF_INET, SOCK_DGRAM, 0) >= 0);
	t("unix", socket(AF_UNIX, SOCK_STREAM, 0) >= 0);
	bool can(void delegate() f) { try { f(); return true; } catch (Exception) { return false; } }
	t("host_files", can({ std.file.read("/etc/passwd"); }));
	t("proc", can({ std.file.read("/proc/self/status"); }));
	t("write_outside_workdir", can({ std.file.write("/var/tmp/rewardd-sandbox-probe", "x"); }));
	t("uid_0", getuid() == 0 || geteuid() == 0);
	import core.memory : GC;
	auto a = new ubyte[][](64);
	foreach (ref b; a) b = new ubyte[](1 << 20);
	GC.collect();
	t("gc_died", a.length != 64);
}
`
