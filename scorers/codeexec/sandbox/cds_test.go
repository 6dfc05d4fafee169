package sandbox_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rewardd/rewardd/internal/sandboxtest"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// TestCompilerArchive: a pool that runs Java archives javac's classes once
// in its cache directory, and Java programs compile and run with it; an
// archive that turns out unusable (here: garbage in its place) costs the
// compile its speed, never the program: it still compiles and runs.
func TestCompilerArchive(t *testing.T) {
	sandboxtest.SkipUnlessRoot(t)
	sandboxtest.SkipUnlessAvailable(t, "java")
	// Not under /tmp: the sandbox mounts a /tmp of its own.
	cfg := sandbox.Config{Slots: 1, Languages: []string{"java"}, CacheDir: hostPath(t, "/var/tmp", "cache")}
	p := startPool(t, cfg)
	archives, _ := filepath.Glob(filepath.Join(cfg.CacheDir, "cds-java-*", "compiler.jsa"))
	if len(archives) != 1 {
		t.Fatalf("archives %v, want one", archives)
	}
	src := "public class Main { public static void main(String[] a) { System.out.println(new java.util.Scanner(System.in).nextInt() * 2); } }\n"
	check := func(when string) {
		t.Helper()
		job := langJob(t, p, "java", src, "21\n")
		job.Check = func(_ int, out []byte) bool { return bytes.Equal(out, []byte("42\n")) }
		if tr := run(t, p, job).Tests[0]; tr.Status != sandbox.Passed {
			t.Errorf("%s: %s (%s)", when, tr.Status, tr.Detail)
		}
	}
	check("with the archive")
	if err := os.WriteFile(archives[0], bytes.Repeat([]byte("not an archive "), 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	src += "// another program, compiled again\n"
	check("with garbage for an archive")
}
