package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A language with a CacheEnv (go_test) builds as it runs, and most of a
// cold build is the same for every program: the standard library and the
// test libraries. The pool fills the toolchain's cache once per machine,
// outside the sandbox, by running the language's own Warm program (trusted:
// the pool's, never a submission's) with its Run command, and every program
// reads it through CacheEnv. The sandbox lets programs read the cache
// directory and write nothing there, so what one program builds is never
// found by another: a program that could write the cache could change
// what a later program's tests link against.

// warmCache returns the directory of lang's cache, filling it if this
// machine has none for this toolchain, these files and this command.
func warmCache(ctx context.Context, cacheDir string, lang *Language) (string, error) {
	parts := [][]byte{[]byte(lang.Warm), []byte(strings.Join(lang.Run, "\x00")), []byte(strings.Join(lang.Env, "\x00"))}
	for _, f := range append([]string{lang.Run[0]}, lang.Toolchain...) {
		parts = append(parts, []byte(toolchainID(f)))
	}
	dir := filepath.Join(cacheDir, "warm-"+lang.Name+"-"+hash(parts...))
	err := buildOnce(dir, func(tmp string) error {
		work := filepath.Join(tmp, "work")
		if err := os.MkdirAll(work, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(work, lang.Source), []byte(lang.Warm), 0o644); err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, lang.Run[0], lang.Run[1:]...)
		cmd.Dir = work
		cmd.Env = append([]string{"PATH=/usr/bin:/bin", "LC_ALL=C", "HOME=" + work, "TMPDIR=" + work,
			lang.CacheEnv + "=" + filepath.Join(tmp, "cache")}, lang.Env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w: %s", strings.Join(lang.Run, " "), err, firstLines(string(out), 20))
		}
		if err := os.RemoveAll(work); err != nil {
			return err
		}
		// Every slot's uid reads it; none writes it.
		return filepath.Walk(tmp, func(p string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			if info.IsDir() {
				return os.Chmod(p, 0o755)
			}
			return os.Chmod(p, 0o644)
		})
	})
	if err != nil {
		return "", fmt.Errorf("warm the %s cache: %w", lang.Name, err)
	}
	return filepath.Join(dir, "cache"), nil
}
