package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// sandboxFusionKnownFailures are SandboxFusion's runner tests that rewardd
// fails, each with why.
var sandboxFusionKnownFailures = map[string]string{
	"test_java_external_jar": "a .jar among the request's files is not put on the class path: rewardd compiles and runs Java with -cp . only",
	"test_nodejs_lodash_dep": "lodash: SandboxFusion's image has npm packages; rewardd's javascript has none (its typescript has Debian's node-lodash)",
	"test_python_fetch_files": "its program writes /mnt/b, outside the work dir, and fetches it by its absolute path: rewardd's sandbox lets a program write " +
		"its work dir only, and fetch_files takes paths inside it (a 400 otherwise); its a.txt, fetched alone, passes (TestRunCodeFetchFiles)",
	"test_csharp_assertion_error": "Debug.Assert: dotnet's ends the program when it fails; Mono's (Debian has no dotnet) says nothing and goes on, and the program exits 0",
	// Passes or fails as the machine is loaded.
	"test_scala_timeout": "Thread.sleep(5000) under run_timeout 5: slot time leaves out the time the program's processes waited for a CPU " +
		"(docs/sandbox.md, \"Time at any load\"), and the JVM's own threads wait while its main thread sleeps: at load 9-13, " +
		"0.05-0.12 s of CPU, 5.12-5.24 s of wall time and 4.92-5.00 s of slot time, TLE 2 times of 3",
}

// TestSandboxFusionRunnerTests runs SandboxFusion's own tests of its
// /run_code runners (testdata/sandboxfusion: its sandbox/tests/runners,
// one file per language) against a rewardd server, their requests posted
// as they post them, for every language installed here: at least 90% pass,
// and every failure is one of sandboxFusionKnownFailures, which say why.
func TestSandboxFusionRunnerTests(t *testing.T) {
	dir := filepath.Join("testdata", "sandboxfusion")
	var files []string
	for _, l := range sandbox.Languages() {
		file := filepath.Join(dir, "test_"+l.SandboxFusion+".py")
		if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
			t.Logf("%s: SandboxFusion has no runner tests of %s", file, l.SandboxFusion)
			continue
		}
		if err := l.Available(); err != nil {
			t.Logf("%s left out: %v", file, err)
			continue
		}
		files = append(files, file)
	}
	srv := startCodeServer(t, languagesConfig, "--workers", "2")
	cmd := exec.Command("/usr/bin/python3", append([]string{filepath.Join(dir, "run.py"), "http://" + srv.httpAddr}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run.py: %v\n%s", err, stderr.String())
	}
	passed, total := 0, 0
	perFile := map[string][2]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Test, File, Error string
			OK                bool
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("run.py printed %q: %v", sc.Text(), err)
		}
		total++
		n := perFile[r.File]
		n[1]++
		if r.OK {
			passed++
			n[0]++
			if why, known := sandboxFusionKnownFailures[r.Test]; known {
				t.Logf("%s passed, though listed as failing: %s", r.Test, why)
			}
		} else if why, known := sandboxFusionKnownFailures[r.Test]; known {
			t.Logf("%s fails, as known: %s", r.Test, why)
		} else {
			t.Errorf("%s (%s) fails:\n%s", r.Test, r.File, r.Error)
		}
		perFile[r.File] = n
	}
	var lines []string
	for _, f := range files {
		n := perFile[filepath.Base(f)]
		lines = append(lines, fmt.Sprintf("%s %d/%d", filepath.Base(f), n[0], n[1]))
	}
	t.Logf("SandboxFusion's runner tests: %d of %d pass (%s)", passed, total, strings.Join(lines, ", "))
	if total == 0 || passed*10 < total*9 {
		t.Errorf("%d of %d of SandboxFusion's runner tests pass, want at least 90%%", passed, total)
	}
}
