package sandbox

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// BuildKey identifies what Compile would make of job in this pool, for a
// cache of builds kept across requests: two jobs with the same key compile
// to the same program. It covers the language, the compiler's command line
// as this pool runs it (its flags, the -std job.Std sets, the precompiled
// headers' directory, the class-data archive), the compiler as it is on
// disk now (toolchainID: a toolchain upgraded under a running pool changes
// the key), the job's limits, uid (Judge), source and files. It runs
// nothing, but waits, as Compile does, for the probe of a language still
// being probed (Probing); the error is the one Compile would give for a
// language the pool does not compile.
func (p *Pool) BuildKey(ctx context.Context, job CompileJob) (string, error) {
	lang, err := p.language(ctx, job.Language)
	if err != nil {
		return "", err
	}
	if !lang.Compiled() {
		return "", fmt.Errorf("sandbox: %s %w", lang.Name, errNotCompiled)
	}
	argv := compileArgv(lang, job)
	h := sha256.New()
	add := func(parts ...string) {
		for _, s := range parts {
			fmt.Fprintf(h, "%d:%s", len(s), s)
		}
	}
	add(lang.Name, strings.Join(argv, "\x00"), toolchainID(argv[0]),
		fmt.Sprint(job.Limits.WithDefaults(lang.CompileLimits), job.Judge), job.Source)
	for _, name := range slices.Sorted(maps.Keys(job.Files)) {
		add(name, string(job.Files[name]))
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// toolchainID names the version of the compiler at path as it is on disk:
// the file its symbolic links lead to (/usr/bin/g++ → g++-12), with its
// size and modification time, which a package upgrade changes. It runs
// nothing (javac --version starts a JVM); "absent" when there is no file.
func toolchainID(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "absent"
	}
	st, err := os.Stat(real)
	if err != nil {
		return "absent"
	}
	return fmt.Sprintf("%s %d %d", real, st.Size(), st.ModTime().UnixNano())
}
