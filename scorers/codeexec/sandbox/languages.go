package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Language is one programming language the sandbox runs: where its source
// goes, how it is compiled and run, which Debian package provides its
// toolchain, its default limits, and how its memory is bounded. The table
// is Languages; adding a language is adding an entry there.
type Language struct {
	// Name is the language's name in configs and requests: "cpp".
	Name string
	// SandboxFusion is the language's name in SandboxFusion's /run_code
	// ("nodejs", "R", "D_ut"); it counts as an alias (any case).
	SandboxFusion string
	// Default marks the languages make deps installs without
	// CODE_EXEC_LANGUAGES (the Makefile's CODE_EXEC_PACKAGES); the others
	// are CODE_EXEC_LANGUAGES=all.
	Default bool
	// Probe is the program the pool runs at start in the language (none
	// for python): it tries the ways out of the sandbox the language
	// offers and prints one line per attempt, its name and "closed" or
	// "open" (probe.go). The four first languages' are in languageProbes.
	Probe string
	// SourceText, when set, is what is written to Source for a program
	// (PHP's opening tag, added when the program has none).
	SourceText func(source string) string
	// Aliases are the other names a fenced code block may carry (```c++);
	// the name itself always counts.
	Aliases []string
	// Source is the file the program is written to in the work dir.
	Source string
	// Compile is the compiler's argv, run in the work dir; nil for a
	// language that runs its source. It compiles Source and, when it exits
	// 0, leaves the files Artefacts match.
	Compile []string
	// Artefacts are the files (path.Match patterns) a compile leaves that
	// Run needs.
	Artefacts []string
	// ProgramKB, when set, bounds each file a compile writes, in place of
	// the compiler's output limit (1 MiB): a Go or Rust program is bigger.
	// For a language that is not compiled (go_test, which builds as it
	// runs) it bounds each file a run writes, in place of the output
	// limit; the run's output is still held to the output limit.
	ProgramKB int
	// Run is the argv that runs the program in the work dir; {memory_mb}
	// stands for the test's memory limit in MB and {class} for the
	// program's main class (ClassName). Nil for the in-process language.
	Run []string
	// InProcess marks Python: the fork server's child runs the program in
	// its own interpreter, all of a submission's tests in one process,
	// rather than exec'ing a command per test.
	InProcess bool
	// Package is the Debian package that provides the toolchain.
	Package string
	// Libraries are Debian packages of libraries programs may use, as
	// SandboxFusion's runtime has them (luaunit, Test::Deep, lodash):
	// make deps installs them with Package; the language runs without.
	Libraries []string
	// Toolchain are the files that must exist for the language to run.
	Toolchain []string
	// CompileLimits bound one compile (the compiler and everything it
	// starts).
	CompileLimits Limits
	// RunLimits are the default limits of a run, for the fields a function
	// leaves zero.
	RunLimits Limits
	// Memory says how a test's memory limit is enforced.
	Memory MemoryBound
	// ReadPaths are host paths the toolchain reads besides /usr and /lib
	// (its configuration under /etc): the sandbox lets every program read
	// them.
	ReadPaths []string
	// Env is added to the environment of the compiler and the program.
	Env []string
	// MemoryMarkers are texts that, on the stderr of a run that failed,
	// mean the runtime ran out of memory (the JVM's OutOfMemoryError).
	MemoryMarkers []string
	// ClassName, when set, finds the name of the main class in the source
	// (Java, Scala), which fills {class} in Run and, in Java, names Source
	// ({class}.java).
	ClassName func(source string) string
	// PrecompiledHeaders are headers the pool precompiles once per machine
	// (bits/stdc++.h, iostream), with PrecompileFlags, and puts before the
	// system's on the include path of every compile, each beside a copy of
	// itself: a program whose first include is one of them compiles
	// without parsing it, and any other program as without them.
	PrecompiledHeaders []string
	PrecompileFlags    []string
	// CompilerArchive says the compiler is a JVM whose classes the pool
	// archives once per machine and every compile maps (cds.go).
	CompilerArchive bool
	// Runner marks a test runner (SandboxFusion's pytest, go_test, junit):
	// the program is a file of tests, which the runner finds and runs; it
	// passes when the runner exits 0, which it does when every test passed.
	// It reads no stdin and prints the runner's report.
	Runner bool
	// ProbePrefix, when set, marks the lines of the probe's output that
	// are its own: a runner prints its report too. ProbeArgs are added to
	// Run for the probe (go test's -v: it shows a passing test's output).
	ProbePrefix string
	ProbeArgs   []string
	// CacheEnv, when set, is the environment variable that points the
	// toolchain at its build cache, which the pool fills once per machine,
	// outside the sandbox, by running Warm (as Source, with Run) and which
	// programs only read (warm.go).
	CacheEnv string
	Warm     string
	// MainStack says the language's runtime asks glibc for the main
	// thread's stack (pthread_getattr_np), which glibc reads from
	// /proc/self/maps, closed in the sandbox: the pool builds
	// launcher/mainstack.c once per machine and preloads it into the
	// language's compiles and runs, which answers from the process's own
	// memory instead.
	MainStack bool
}

// MemoryBound is how a language's memory limit is enforced.
type MemoryBound int

const (
	// AddressSpace bounds each process with RLIMIT_AS, which works for
	// programs that reserve little more than they use (C++, CPython).
	AddressSpace MemoryBound = iota
	// Cgroup bounds the slot with its cgroup's memory limit and the
	// runtime with its own flag (-Xmx, --max-old-space-size): the JVM and
	// V8 reserve far more address space than they use. A pool without
	// cgroups does not run these languages.
	Cgroup
	// Resident bounds the slot with its cgroup's memory limit and judges
	// each test by its peak resident set: a C++ program's threads each
	// reserve a stack as large as the main one, which an address space
	// limit would refuse. A pool without cgroups bounds these languages'
	// address space instead.
	Resident
)

// Compiled says whether programs of the language are compiled before they
// run.
func (l *Language) Compiled() bool { return l.Compile != nil }

// Names is the language's name and aliases.
func (l *Language) Names() []string {
	names := append([]string{l.Name}, l.Aliases...)
	if sf := strings.ToLower(l.SandboxFusion); sf != "" && !slices.Contains(names, sf) {
		names = append(names, sf)
	}
	return names
}

// Available says whether the language's toolchain is installed on this
// machine; the error names what is missing and the package to install.
func (l *Language) Available() error {
	var missing []string
	for _, f := range l.Toolchain {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		more := ""
		if !l.Default {
			more = " CODE_EXEC_LANGUAGES=" + l.Name
		}
		return fmt.Errorf("%s is not installed (%s missing): install the Debian package %s (make deps%s does, as root)",
			l.Name, strings.Join(missing, ", "), l.Package, more)
	}
	return nil
}

// SourceName is the file the program's source is written to.
func (l *Language) SourceName(source string) string {
	if l.ClassName != nil && path.Ext(l.Source) == ".java" {
		// Java's source file is named by its public class.
		return l.ClassName(source) + ".java"
	}
	return l.Source
}

// sourceFile is what is written to SourceName for the program source.
func (l *Language) sourceFile(source string) []byte {
	if l.SourceText != nil {
		source = l.SourceText(source)
	}
	return []byte(source)
}

// runArgv is the argv that runs a program of the language, for a test with
// a memory limit of memoryMB.
func (l *Language) runArgv(source string, memoryMB int) []string {
	argv := make([]string, len(l.Run))
	class := "Main"
	if l.ClassName != nil {
		class = l.ClassName(source)
	}
	for i, a := range l.Run {
		a = strings.ReplaceAll(a, "{memory_mb}", strconv.Itoa(memoryMB))
		argv[i] = strings.ReplaceAll(a, "{class}", class)
	}
	return argv
}

// Languages returns the language table, a new copy on every call. The
// sandbox runs every language on it whose toolchain is installed.
func Languages() []*Language {
	compileLimits := Limits{CPUSeconds: 10, WallSeconds: 20, MemoryMB: 1024, OutputKB: compilerOutputKB, Processes: 16}
	return append([]*Language{
		{
			Name: "python", SandboxFusion: "python", Default: true, Aliases: []string{"py", "python3"}, Source: "main.py", InProcess: true,
			Package: "python3", Toolchain: []string{"/usr/bin/python3"},
			RunLimits: DefaultLimits(), Memory: AddressSpace,
			MemoryMarkers: []string{"MemoryError"},
		},
		{
			Name: "cpp", SandboxFusion: "cpp", Default: true, Aliases: []string{"c++", "cc", "cxx", "c++17", "cpp17"}, Source: "main.cpp",
			Compile:   []string{"/usr/bin/g++", "-std=gnu++17", "-O2", "-pipe", "-o", "main", "main.cpp"},
			Artefacts: []string{"main"},
			Run:       []string{"./main"},
			Package:   "g++", Toolchain: []string{"/usr/bin/g++"},
			CompileLimits: compileLimits,
			RunLimits:     DefaultLimits(), Memory: Resident,
			MemoryMarkers: []string{"std::bad_alloc"},
			// The first include of 268 of cp_problems' 302 C++ solutions.
			PrecompiledHeaders: []string{"bits/stdc++.h", "iostream"}, PrecompileFlags: []string{"-std=gnu++17", "-O2"},
		},
		{
			Name: "java", SandboxFusion: "java", Default: true, Source: "Main.java", ClassName: javaClass,
			// One compiler thread, the serial collector and no performance
			// data file: fewer threads (each counts as a process) and no
			// writes outside the work dir.
			Compile: []string{"/usr/bin/javac", "-J-Xmx512m", "-J-XX:+UseSerialGC", "-J-XX:TieredStopAtLevel=1",
				"-J-XX:-UsePerfData", "-encoding", "UTF-8", "-d", ".", "{source}"},
			Artefacts: []string{"*.class"},
			Run: []string{"/usr/bin/java", "-ea", "-Xmx{memory_mb}m", "-Xss64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
				"-XX:-UsePerfData", "-XX:CICompilerCount=1", "-Xshare:auto", "-cp", ".", "{class}"},
			Package: "openjdk-17-jdk-headless", Toolchain: []string{"/usr/bin/javac", "/usr/bin/java"}, CompilerArchive: true,
			CompileLimits: Limits{CPUSeconds: 20, WallSeconds: 30, MemoryMB: 1024, OutputKB: compilerOutputKB, Processes: 64},
			RunLimits:     Limits{CPUSeconds: 4, WallSeconds: 10, MemoryMB: 512, OutputKB: 1024, Processes: defaultProcesses},
			Memory:        Cgroup, ReadPaths: []string{"/etc/java-17-openjdk"},
			MemoryMarkers: []string{"java.lang.OutOfMemoryError"},
		},
		{
			Name: "javascript", SandboxFusion: "nodejs", Default: true, Aliases: []string{"js", "node", "nodejs"}, Source: "main.js",
			// Four V8 platform threads, and OpenSSL's configuration (under
			// /etc) not read at all.
			Run:     []string{"/usr/bin/node", "--max-old-space-size={memory_mb}", "--v8-pool-size=2", "--stack-size=65500", "main.js"},
			Package: "nodejs", Toolchain: []string{"/usr/bin/node"},
			RunLimits: Limits{CPUSeconds: 2, WallSeconds: 6, MemoryMB: 512, OutputKB: 1024, Processes: defaultProcesses},
			Memory:    Cgroup, Env: []string{"OPENSSL_CONF=/dev/null"},
			MemoryMarkers: []string{"JavaScript heap out of memory"},
		},
	}, append(append(moreLanguages(compileLimits), extraLanguages(compileLimits)...), runnerLanguages(compileLimits)...)...)
}

// LookupLanguage finds a language of the table by name or alias (any
// case).
func LookupLanguage(name string) (*Language, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	var names []string
	for _, l := range Languages() {
		for _, n := range l.Names() {
			if n == name {
				return l, nil
			}
		}
		names = append(names, l.Name)
	}
	return nil, fmt.Errorf("unknown language %q (the languages are: %s)", name, strings.Join(names, ", "))
}

var javaPublicClass = regexp.MustCompile(`(?m)^\s*public\s+(?:final\s+)?class\s+([A-Za-z_$][A-Za-z0-9_$]*)`)

// javaClass is the name of the program's public class, or Main.
func javaClass(source string) string {
	if m := javaPublicClass.FindStringSubmatch(source); m != nil {
		return m[1]
	}
	return "Main"
}

// errNotCompiled is returned by Pool.Compile for a language that runs its
// source.
var errNotCompiled = errors.New("is not a compiled language")
