package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// What the pool builds once per machine, outside the sandbox and from
// trusted sources only (its own launcher/launcher.c, the system's headers), into
// the cache directory: the launcher every exec'd program starts under,
// and the precompiled headers of the languages that have one. Each is
// named by a hash of what it is built from and with, built under a lock
// file and moved into place with rename, so that pools of many processes
// share one copy and none sees half of it.

//go:embed launcher/launcher.c
var launcherSource []byte

//go:embed launcher/mainstack.c
var mainStackSource []byte

// DefaultCacheDir is where a pool keeps what it builds when Config.CacheDir
// is empty: /var/cache/rewardd for root (every slot's uid must be able to
// reach it, and root's home is closed to them), else the user's cache
// directory.
func DefaultCacheDir() string {
	if os.Geteuid() == 0 {
		return "/var/cache/rewardd"
	}
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "rewardd")
	}
	return filepath.Join(os.TempDir(), "rewardd-cache")
}

// cCompiler builds the launcher.
const cCompiler = "/usr/bin/cc"

// buildLauncher returns the path of the launcher built from launcher.c,
// building it if this machine has none yet.
func buildLauncher(ctx context.Context, cacheDir string) (string, error) {
	if _, err := os.Stat(cCompiler); err != nil {
		return "", fmt.Errorf("the launcher of compiled programs needs a C compiler (%s): install the Debian package gcc", cCompiler)
	}
	version, err := output(ctx, nil, cCompiler, "-dumpfullversion")
	if err != nil {
		return "", err
	}
	key := hash(launcherSource, []byte(version))
	path := filepath.Join(cacheDir, "launcher-"+key)
	err = buildOnce(path, func(tmp string) error {
		_, err := output(ctx, launcherSource, cCompiler, "-O2", "-static", "-o", tmp, "-x", "c", "-")
		return err
	})
	if err != nil {
		return "", fmt.Errorf("build the launcher: %w", err)
	}
	return path, nil
}

// buildMainStack returns the path of the library built from mainstack.c,
// which the languages with MainStack preload, building it if this machine
// has none yet.
func buildMainStack(ctx context.Context, cacheDir string) (string, error) {
	version, err := output(ctx, nil, cCompiler, "-dumpfullversion")
	if err != nil {
		return "", err
	}
	path := filepath.Join(cacheDir, "mainstack-"+hash(mainStackSource, []byte(version))+".so")
	err = buildOnce(path, func(tmp string) error {
		_, err := output(ctx, mainStackSource, cCompiler, "-O2", "-shared", "-fPIC", "-o", tmp, "-x", "c", "-")
		return err
	})
	if err != nil {
		return "", fmt.Errorf("build the main thread's stack library: %w", err)
	}
	return path, nil
}

// buildPCH returns the directory that holds lang's precompiled headers (as
// <dir>/<header>.gch beside a copy of <header>, for -I<dir>), building it
// if this machine has none for this compiler version, these flags and these
// headers. The copy is what a second include of the header finds: GCC then
// opens the header it took from the .gch, to see its include guard.
func buildPCH(ctx context.Context, cacheDir string, lang *Language) (string, error) {
	compiler := lang.Compile[0]
	version, err := output(ctx, nil, compiler, "-dumpfullversion", "-dumpmachine")
	if err != nil {
		return "", err
	}
	parts := [][]byte{[]byte(version), []byte(strings.Join(lang.PrecompileFlags, "\x00"))}
	paths := make([]string, len(lang.PrecompiledHeaders))
	for i, name := range lang.PrecompiledHeaders {
		// Where the compiler finds the header: the first line -H prints.
		args := append(append([]string{}, lang.PrecompileFlags...), "-H", "-fsyntax-only", "-x", "c++", "-")
		trace, err := combined(ctx, []byte("#include <"+name+">\n"), compiler, args...)
		if err != nil {
			return "", err
		}
		first, _, _ := strings.Cut(trace, "\n")
		paths[i] = strings.TrimSpace(strings.TrimLeft(first, ". "))
		st, err := os.Stat(paths[i])
		if err != nil {
			return "", fmt.Errorf("find %s: %q: %w", name, first, err)
		}
		parts = append(parts, []byte(name), []byte(paths[i]), []byte(st.ModTime().String()))
	}
	dir := filepath.Join(cacheDir, "pch-"+lang.Name+"-"+hash(parts...))
	err = buildOnce(dir, func(tmp string) error {
		for i, name := range lang.PrecompiledHeaders {
			copied := filepath.Join(tmp, name)
			if err := os.MkdirAll(filepath.Dir(copied), 0o755); err != nil {
				return err
			}
			src, err := os.ReadFile(paths[i])
			if err != nil {
				return err
			}
			if err := os.WriteFile(copied, src, 0o644); err != nil {
				return err
			}
			args := append(append([]string{}, lang.PrecompileFlags...), "-x", "c++-header", paths[i], "-o", copied+".gch")
			if _, err := output(ctx, nil, compiler, args...); err != nil {
				return err
			}
		}
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
		return "", fmt.Errorf("precompile %s: %w", strings.Join(lang.PrecompiledHeaders, ", "), err)
	}
	return dir, nil
}

// buildOnce makes path with build unless it exists: build writes to a
// temporary path beside it, which is then renamed into place. A lock file
// keeps two processes from building the same path at once (the second
// finds it built); readers never need the lock, the rename being atomic.
func buildOnce(path string, build func(tmp string) error) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Every slot's uid goes through it to the files.
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(path); err == nil {
		return nil // built by another process while this one waited
	}
	tmp := fmt.Sprintf("%s.tmp-%d-%d", path, os.Getpid(), time.Now().UnixNano())
	defer os.RemoveAll(tmp)
	if err := build(tmp); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func hash(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// output runs a trusted command and returns its stdout; its stderr is in
// the error when it fails.
func output(ctx context.Context, stdin []byte, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// combined runs a trusted command and returns what it wrote to stdout and
// stderr.
func combined(ctx context.Context, stdin []byte, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return string(out), nil
}
