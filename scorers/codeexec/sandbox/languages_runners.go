package sandbox

// runnerLanguages are SandboxFusion's test runners that Debian bookworm
// packages, under SandboxFusion's names: the program is a file of tests,
// run as SandboxFusion runs it (sandbox/runners/major.py), and passes when
// the runner exits 0. As there, pytest and go_test are not compiled (a
// file that does not compile fails its run), junit is (javac, then
// JUnit's console launcher). Their toolchains are optional
// (CODE_EXEC_LANGUAGES=all make deps); a pool runs those installed. Their
// programs for the table tests and the hostile suite are
// internal/sandboxtest's RunnerPrograms.
func runnerLanguages(compileLimits Limits) []*Language {
	return []*Language{
		{
			Name: "pytest", SandboxFusion: "pytest", Runner: true, Source: "test_main.py",
			// As SandboxFusion's "pytest <file>", without the cache
			// directory a later run would read.
			Run:     []string{"/usr/bin/python3", "-m", "pytest", "-p", "no:cacheprovider", "test_main.py"},
			Package: "python3-pytest", Toolchain: []string{"/usr/bin/python3", pytestModule},
			RunLimits: DefaultLimits(), Memory: AddressSpace,
			Env:           []string{"PYTHONDONTWRITEBYTECODE=1"},
			MemoryMarkers: []string{"MemoryError"},
			Probe:         pytestProbe, ProbePrefix: probePrefix,
		},
		{
			Name: "go_test", SandboxFusion: "go_test", Runner: true, Source: "main_test.go",
			// SandboxFusion runs "go test <file>_test.go" in a module whose
			// go.mod requires testify (from its image's module cache);
			// here GOPATH mode finds Debian's testify, with no network and
			// no module cache. The build cache (GOCACHE) is the pool's,
			// warmed once per machine with the standard library and
			// testify and read-only to programs: what a program builds
			// beyond it is built again every run, and no program changes
			// what another's build finds.
			Run:       []string{"/usr/bin/go", "test", "main_test.go"},
			ProgramKB: 64 << 10,
			Package:   "golang-go", Toolchain: []string{"/usr/bin/go", testifyDir + "/assert/assertions.go"},
			Libraries: []string{"golang-github-stretchr-testify-dev"},
			// go test builds, vets and links before the tests run.
			RunLimits: Limits{CPUSeconds: 10, WallSeconds: 20, MemoryMB: 512, OutputKB: 1024, Processes: defaultProcesses},
			Memory:    Resident,
			Env: []string{"CGO_ENABLED=0", "GO111MODULE=off", "GOPATH=/usr/share/gocode", "GOFLAGS=-buildvcs=false",
				"GOTOOLCHAIN=local", "GOPROXY=off"},
			CacheEnv: "GOCACHE", Warm: goTestWarm,
			MemoryMarkers: []string{"fatal error: runtime: out of memory", "runtime: cannot allocate memory"},
			Probe:         goTestProbe, ProbePrefix: probePrefix, ProbeArgs: []string{"-v"},
		},
		{
			Name: "junit", SandboxFusion: "junit", Runner: true, Source: "Main.java", ClassName: javaClass,
			// SandboxFusion compiles *.java against JUnit's standalone
			// jar (its 1.8.2; Debian's is 1.9.1, with Jupiter 5.9.2) and
			// runs its console launcher over the class path; here with
			// the java language's JVM flags, and without the banner and
			// the colours. Unlike there, every class's tests run (not only
			// those of classes named as tests: Test*, *Test, *Tests), and
			// a file in which the launcher finds no test fails: tests
			// that never ran must not pass.
			Compile: []string{"/usr/bin/javac", "-J-Xmx512m", "-J-XX:+UseSerialGC", "-J-XX:TieredStopAtLevel=1",
				"-J-XX:-UsePerfData", "-encoding", "UTF-8", "-cp", ".:" + junitJar, "-d", ".", "{source}"},
			Artefacts: []string{"*.class"},
			Run: []string{"/usr/bin/java", "-ea", "-Xmx{memory_mb}m", "-Xss64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
				"-XX:-UsePerfData", "-XX:CICompilerCount=1", "-Xshare:auto", "-jar", junitJar,
				"--disable-banner", "--disable-ansi-colors", "--fail-if-no-tests", "--include-classname", ".*",
				"--class-path", ".", "--scan-class-path"},
			Package: "junit5", Toolchain: []string{"/usr/bin/javac", "/usr/bin/java", junitJar}, CompilerArchive: true,
			CompileLimits: Limits{CPUSeconds: 20, WallSeconds: 30, MemoryMB: 1024, OutputKB: compilerOutputKB, Processes: 64},
			RunLimits:     Limits{CPUSeconds: 4, WallSeconds: 10, MemoryMB: 512, OutputKB: 1024, Processes: defaultProcesses},
			Memory:        Cgroup, ReadPaths: []string{"/etc/java-17-openjdk"},
			MemoryMarkers: []string{"java.lang.OutOfMemoryError"},
			Probe:         junitProbe, ProbePrefix: probePrefix,
		},
	}
}

const (
	// pytestModule is Debian's pytest (python3-pytest).
	pytestModule = "/usr/lib/python3/dist-packages/pytest/__init__.py"
	// testifyDir is Debian's testify (golang-github-stretchr-testify-dev).
	testifyDir = "/usr/share/gocode/src/github.com/stretchr/testify"
	// junitJar is Debian's JUnit console launcher with the Jupiter API
	// and engine (junit5).
	junitJar = "/usr/share/java/junit-platform-console-standalone.jar"
)

// probePrefix starts the lines of a runner's probe, among its report's.
const probePrefix = "rewardd-probe "

// goTestWarm is what the pool's go test builds once per machine to fill
// the build cache: testify and the standard library packages tests use.
const goTestWarm = `package main

import (
	"bufio"
	"bytes"
	"container/heap"
	"container/list"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/big"
	"math/rand"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	_ = bufio.NewReader
	_ = bytes.NewBuffer
	_ = heap.Init
	_ = list.New
	_ = md5.Sum
	_ = sha256.Sum256
	_ = hex.EncodeToString
	_ = json.Marshal
	_ = errors.New
	_ = fnv.New64
	_ = math.Abs
	_ = big.NewInt
	_ = rand.Intn
	_ = os.Exit
	_ = reflect.DeepEqual
	_ = regexp.MustCompile
	_ = sort.Ints
	_ = strconv.Itoa
	_ = strings.Fields
	_ = sync.Mutex{}
	_ = time.Now
	_ = unicode.IsLetter
)

func TestWarm(t *testing.T) {
	assert.Equal(t, "1", fmt.Sprint(1))
	require.True(t, true)
}
`

const pytestProbe = `import atexit, os, socket

lines = []

def t(name, f):
    try:
        f()
        lines.append(name + " open")
    except Exception:
        lines.append(name + " closed")

# Printed after pytest has put the output back.
atexit.register(lambda: print("".join("rewardd-probe " + l + "\n" for l in lines), end=""))

def test_probe():
    t("tcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
    t("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
    t("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
    t("host_files", lambda: open("/etc/passwd").read())
    t("proc", lambda: open("/proc/self/status").read())
    t("write_outside_workdir", lambda: open("/var/tmp/rewardd-sandbox-probe", "w").write("x"))
    def root():
        if os.getuid() != 0 and os.geteuid() != 0:
            raise OSError("not root")
    t("uid_0", root)
`

const goTestProbe = `package main

import (
	"fmt"
	"os"
	"syscall"
	"testing"
)

func probe(name string, open bool) {
	state := "closed"
	if open {
		state = "open"
	}
	fmt.Println("rewardd-probe", name, state)
}

func TestProbe(t *testing.T) {
	_, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	probe("tcp", err == nil)
	_, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	probe("udp", err == nil)
	_, err = syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	probe("unix", err == nil)
	_, err = os.ReadFile("/etc/passwd")
	probe("host_files", err == nil)
	_, err = os.ReadFile("/proc/self/status")
	probe("proc", err == nil)
	err = os.WriteFile("/var/tmp/rewardd-sandbox-probe", []byte("x"), 0o600)
	probe("write_outside_workdir", err == nil)
	probe("uid_0", os.Getuid() == 0 || os.Geteuid() == 0)
}
`

const junitProbe = `import java.io.*;
import java.net.*;
import org.junit.jupiter.api.Test;

public class Probe {
	interface Try { void run() throws Exception; }
	static void t(String name, Try f) {
		try { f.run(); System.out.println("rewardd-probe " + name + " open"); }
		catch (Throwable e) { System.out.println("rewardd-probe " + name + " closed"); }
	}
	@Test
	void probe() {
		t("tcp", () -> new Socket("127.0.0.1", 1).close());
		t("udp", () -> new DatagramSocket().close());
		t("host_files", () -> new FileInputStream("/etc/passwd").close());
		t("proc", () -> new FileInputStream("/proc/self/status").close());
		t("write_outside_workdir", () -> new FileOutputStream("/var/tmp/rewardd-sandbox-probe").close());
	}
}
`
