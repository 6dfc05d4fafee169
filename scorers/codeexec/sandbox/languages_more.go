package sandbox

import "strings"

// moreLanguages are the languages beyond the first four, those of
// SandboxFusion's that Debian bookworm packages, under SandboxFusion's
// names, with its compile/run split. Their toolchains are optional
// (CODE_EXEC_LANGUAGES=all make deps); a pool runs those installed. Each
// row's Probe tries the ways out its language offers; its programs for the
// table tests and the hostile suite (languages_more_test.go and
// cmd/rewardd's) are in internal/sandboxtest/programs.go.
func moreLanguages(compileLimits Limits) []*Language {
	// Compilers that are Go or Rust programs run many threads, each a
	// process to RLIMIT_NPROC.
	threaded := compileLimits
	threaded.CPUSeconds, threaded.WallSeconds, threaded.Processes = 20, 30, 64
	return []*Language{
		{
			Name: "go", SandboxFusion: "go", Aliases: []string{"golang"}, Source: "main.go",
			// Outside any module, without cgo; the build cache goes to
			// the work dir ($HOME), empty for every compile.
			Compile:   []string{"/usr/bin/go", "build", "-ldflags=-s -w", "-o", "main", "main.go"},
			Artefacts: []string{"main"}, ProgramKB: 16 << 10,
			Run:     []string{"./main"},
			Package: "golang-go", Toolchain: []string{"/usr/bin/go"},
			CompileLimits: threaded,
			RunLimits:     DefaultLimits(), Memory: Resident,
			Env:           []string{"CGO_ENABLED=0", "GO111MODULE=off", "GOFLAGS=-buildvcs=false", "GOTOOLCHAIN=local"},
			MemoryMarkers: []string{"fatal error: runtime: out of memory", "runtime: cannot allocate memory"},
			Probe:         goProbe,
		},
		{
			Name: "rust", SandboxFusion: "rust", Aliases: []string{"rs"}, Source: "main.rs",
			Compile:   []string{"/usr/bin/rustc", "--edition", "2021", "-O", "-C", "strip=debuginfo", "-o", "main", "main.rs"},
			Artefacts: []string{"main"}, ProgramKB: 16 << 10,
			Run: []string{"./main"},
			// rustc links with cc, which the launcher needs too.
			Package: "rustc", Toolchain: []string{"/usr/bin/rustc", cCompiler},
			CompileLimits: threaded,
			RunLimits:     DefaultLimits(), Memory: Resident,
			MemoryMarkers: []string{"memory allocation of"},
			Probe:         rustProbe,
		},
		{
			Name: "bash", SandboxFusion: "bash", Aliases: []string{"sh", "shell"}, Source: "main.sh",
			Run:     []string{"/bin/bash", "main.sh"},
			Package: "bash", Toolchain: []string{"/bin/bash"},
			RunLimits: DefaultLimits(), Memory: AddressSpace,
			MemoryMarkers: []string{"xmalloc: cannot allocate", "xrealloc: cannot allocate"},
			Probe:         bashProbe,
		},
		{
			Name: "typescript", SandboxFusion: "typescript", Aliases: []string{"ts"}, Source: "main.ts",
			// As SandboxFusion's tsx: types are stripped, not checked; a
			// syntax error does not compile.
			Compile:   []string{"/usr/bin/node", "-e", tsTranspile},
			Artefacts: []string{"main.js"},
			Run:       []string{"/usr/bin/node", "--max-old-space-size={memory_mb}", "--v8-pool-size=2", "--stack-size=65500", "main.js"},
			Package:   "node-typescript", Toolchain: []string{"/usr/bin/node", tsModule + "/lib/typescript.js"},
			Libraries:     []string{"node-lodash"},
			CompileLimits: Limits{CPUSeconds: 20, WallSeconds: 30, MemoryMB: 1024, OutputKB: compilerOutputKB, Processes: 64},
			RunLimits:     Limits{CPUSeconds: 2, WallSeconds: 6, MemoryMB: 512, OutputKB: 1024, Processes: defaultProcesses},
			Memory:        Cgroup, Env: []string{"OPENSSL_CONF=/dev/null", "NODE_PATH=/usr/share/nodejs"},
			MemoryMarkers: []string{"JavaScript heap out of memory"},
			Probe:         languageProbes["javascript"],
		},
		{
			Name: "php", SandboxFusion: "php", Source: "main.php",
			// PHP's own memory limit is the test's.
			Run:     []string{"/usr/bin/php8.2", "-d", "memory_limit={memory_mb}M", "-f", "main.php"},
			Package: "php-cli", Toolchain: []string{"/usr/bin/php8.2"},
			RunLimits: DefaultLimits(), Memory: AddressSpace, ReadPaths: []string{"/etc/php"},
			MemoryMarkers: []string{"Allowed memory size of", "Out of memory"},
			SourceText:    phpOpenTag,
			Probe:         phpProbe,
		},
		{
			Name: "ruby", SandboxFusion: "ruby", Aliases: []string{"rb"}, Source: "main.rb",
			Run:     []string{"/usr/bin/ruby3.1", "main.rb"},
			Package: "ruby", Toolchain: []string{"/usr/bin/ruby3.1"},
			RunLimits: DefaultLimits(), Memory: AddressSpace,
			MemoryMarkers: []string{"NoMemoryError", "failed to allocate memory"},
			Probe:         rubyProbe,
		},
		{
			Name: "perl", SandboxFusion: "perl", Aliases: []string{"pl"}, Source: "main.pl",
			Run:     []string{"/usr/bin/perl", "main.pl"},
			Package: "perl", Toolchain: []string{"/usr/bin/perl"},
			Libraries: []string{"libtest-deep-perl", "libdata-compare-perl"},
			RunLimits: DefaultLimits(), Memory: AddressSpace,
			MemoryMarkers: []string{"Out of memory"},
			Probe:         perlProbe,
		},
		{
			Name: "lua", SandboxFusion: "lua", Source: "main.lua",
			Run:     []string{"/usr/bin/lua5.4", "main.lua"},
			Package: "lua5.4", Toolchain: []string{"/usr/bin/lua5.4"},
			Libraries: []string{"lua-unit"},
			RunLimits: DefaultLimits(), Memory: AddressSpace,
			MemoryMarkers: []string{"not enough memory"},
			Probe:         luaProbe,
		},
		{
			Name: "r", SandboxFusion: "R", Source: "main.R",
			Run:     []string{"/usr/bin/Rscript", "main.R"},
			Package: "r-base-core", Toolchain: []string{"/usr/bin/Rscript"},
			RunLimits: DefaultLimits(), Memory: AddressSpace, ReadPaths: []string{"/etc/R"},
			MemoryMarkers: []string{"cannot allocate vector of size", "cannot allocate memory block"},
			Probe:         rProbe,
		},
	}
}

// SandboxFusionOnly are SandboxFusion's languages that rewardd does not
// run, each with why: /run_code answers them as SandboxFusion answers a
// language it does not know, with the reason.
var SandboxFusionOnly = map[string]string{
	"cuda":       "needs a GPU",
	"python_gpu": "needs a GPU",
	"julia":      "Debian bookworm does not package julia",
	"swift":      "Debian bookworm does not package the Swift language (its swift is OpenStack's)",
	"lean":       "Debian bookworm does not package Lean 4 (its elan downloads it)",
	"jest":       "Debian bookworm's jest cannot be installed: its node-jest-worker depends on node-types-node, which bookworm does not have",
}

// tsModule is Debian's TypeScript (node-typescript).
const tsModule = "/usr/share/nodejs/typescript"

// tsTranspile is the TypeScript "compiler": it strips main.ts's types
// into main.js (ts.transpileModule, which reports syntax errors only, as
// tsx does) and exits 1 with the messages on a syntax error.
const tsTranspile = `const ts = require("` + tsModule + `"), fs = require("fs");
const out = ts.transpileModule(fs.readFileSync("main.ts", "utf8"), {fileName: "main.ts", reportDiagnostics: true,
	compilerOptions: {target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.CommonJS, esModuleInterop: true}});
if (out.diagnostics && out.diagnostics.length > 0) {
	process.stderr.write(ts.formatDiagnostics(out.diagnostics, {getCanonicalFileName: (f) => f, getCurrentDirectory: () => ".", getNewLine: () => "\n"}));
	process.exit(1);
}
fs.writeFileSync("main.js", out.outputText);
`

// phpOpenTag adds PHP's opening tag to a program that has none, as
// SandboxFusion does: without it PHP prints the program.
func phpOpenTag(source string) string {
	if strings.Contains(source, "<?php") {
		return source
	}
	return "<?php\n" + source
}

const goProbe = `package main

import (
	"fmt"
	"os"
	"syscall"
)

func t(name string, open bool) {
	if open {
		fmt.Println(name, "open")
	} else {
		fmt.Println(name, "closed")
	}
}

func main() {
	_, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	t("tcp", err == nil)
	_, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	t("udp", err == nil)
	_, err = syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	t("unix", err == nil)
	_, err = os.ReadFile("/etc/passwd")
	t("host_files", err == nil)
	_, err = os.ReadFile("/proc/self/status")
	t("proc", err == nil)
	err = os.WriteFile("/var/tmp/rewardd-sandbox-probe", []byte("x"), 0o600)
	t("write_outside_workdir", err == nil)
	t("uid_0", os.Getuid() == 0 || os.Geteuid() == 0)
}
`

const rustProbe = `use std::fs;
use std::net::{TcpListener, UdpSocket};
extern "C" {
    fn getuid() -> u32;
    fn geteuid() -> u32;
}
fn t(name: &str, open: bool) {
    println!("{} {}", name, if open { "open" } else { "closed" });
}
fn main() {
    t("tcp", TcpListener::bind("127.0.0.1:0").is_ok());
    t("udp", UdpSocket::bind("127.0.0.1:0").is_ok());
    t("host_files", fs::read("/etc/passwd").is_ok());
    t("proc", fs::read("/proc/self/status").is_ok());
    t("write_outside_workdir", fs::write("/var/tmp/rewardd-sandbox-probe", "x").is_ok());
    t("uid_0", unsafe { getuid() == 0 || geteuid() == 0 });
}
`

const bashProbe = `t() { if eval "$2" >/dev/null 2>&1; then echo "$1 open"; else echo "$1 closed"; fi; }
t udp 'exec 3<>/dev/udp/127.0.0.1/53'
t host_files 'read -r x < /etc/passwd'
t proc 'read -r x < /proc/self/status'
t write_outside_workdir 'echo x > /var/tmp/rewardd-sandbox-probe'
t uid_0 '[ "$EUID" = 0 ] || [ "$UID" = 0 ] || [ "$(id -u)" = 0 ]'
`

const phpProbe = `<?php
function t($name, $open) { echo $name, " ", $open ? "open" : "closed", "\n"; }
t("tcp", @stream_socket_server("tcp://127.0.0.1:0") !== false);
t("udp", @stream_socket_client("udp://127.0.0.1:53") !== false);
t("host_files", @file_get_contents("/etc/passwd") !== false);
t("proc", @file_get_contents("/proc/self/status") !== false);
t("write_outside_workdir", @file_put_contents("/var/tmp/rewardd-sandbox-probe", "x") !== false);
t("uid_0", function_exists("posix_geteuid") && (posix_geteuid() === 0 || posix_getuid() === 0));
`

const rubyProbe = `require "socket"
def t(name)
  yield
  puts "#{name} open"
rescue Exception
  puts "#{name} closed"
end
t("tcp") { TCPServer.new("127.0.0.1", 0).close }
t("udp") { UDPSocket.new.close }
t("host_files") { File.read("/etc/passwd") }
t("proc") { File.read("/proc/self/status") }
t("write_outside_workdir") { File.write("/var/tmp/rewardd-sandbox-probe", "x") }
t("uid_0") { raise "not root" unless Process.uid == 0 || Process.euid == 0 }
`

const perlProbe = `use Socket;
sub t { my ($name, $open) = @_; print "$name ", ($open ? "open" : "closed"), "\n"; }
t("tcp", socket(my $s, PF_INET, SOCK_STREAM, 0));
t("udp", socket(my $u, PF_INET, SOCK_DGRAM, 0));
t("unix", socket(my $x, PF_UNIX, SOCK_STREAM, 0));
t("host_files", open(my $f, "<", "/etc/passwd"));
t("proc", open(my $p, "<", "/proc/self/status"));
t("write_outside_workdir", open(my $w, ">", "/var/tmp/rewardd-sandbox-probe"));
t("uid_0", $< == 0 || $> == 0);
`

const luaProbe = `local function t(name, open) print(name .. " " .. (open and "open" or "closed")) end
t("host_files", io.open("/etc/passwd", "r") ~= nil)
t("proc", io.open("/proc/self/status", "r") ~= nil)
t("write_outside_workdir", io.open("/var/tmp/rewardd-sandbox-probe", "w") ~= nil)
t("shell_host_files", os.execute("read -r x < /etc/passwd 2>/dev/null") == true)
local id = io.popen("id -u")
t("uid_0", id ~= nil and id:read("*l") == "0")
`

const rProbe = `t <- function(name, f) {
  ok <- tryCatch({ f(); TRUE }, error = function(e) FALSE, warning = function(w) FALSE)
  cat(name, " ", if (ok) "open" else "closed", "\n", sep = "")
}
t("tcp", function() serverSocket(45678))
t("host_files", function() readLines("/etc/passwd"))
t("proc", function() readLines("/proc/self/status"))
t("write_outside_workdir", function() writeLines("x", "/var/tmp/rewardd-sandbox-probe"))
t("uid_0", function() if (system("id -u", intern = TRUE) != "0") stop("not root"))
`
