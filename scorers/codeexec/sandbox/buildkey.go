package sandbox

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// BuildKey identifies what Compile would make of job in this pool, for a
// cache of builds kept across requests: two jobs with the same key compile
// to the same program. It covers the language, the compiler's command line
// as this pool runs it (its flags, the -std job.Std sets, the precompiled
// headers' directory), the compiler's version as the pool found it at start
// and its binary as it is on disk now (size and modification time: a
// toolchain upgraded under a running pool changes the key), the job's
// limits, uid (Judge), source and files. It runs nothing; the error is the
// one Compile would give for a language the pool does not compile.
func (p *Pool) BuildKey(job CompileJob) (string, error) {
	lang, err := p.language(job.Language)
	if err != nil {
		return "", err
	}
	if !lang.Compiled() {
		return "", fmt.Errorf("sandbox: %s %w", lang.Name, errNotCompiled)
	}
	argv := compileArgv(lang, job)
	compiler := "absent"
	if st, err := os.Stat(argv[0]); err == nil {
		compiler = fmt.Sprintf("%d %d", st.Size(), st.ModTime().UnixNano())
	}
	h := sha256.New()
	add := func(parts ...string) {
		for _, s := range parts {
			fmt.Fprintf(h, "%d:%s", len(s), s)
		}
	}
	add(lang.Name, strings.Join(argv, "\x00"), lang.version, compiler,
		fmt.Sprint(job.Limits.WithDefaults(lang.CompileLimits), job.Judge), job.Source)
	for _, name := range slices.Sorted(maps.Keys(job.Files)) {
		add(name, string(job.Files[name]))
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// toolchainVersion is what the compiler of lang says its version is (the
// first line of --version), for BuildKey.
func toolchainVersion(ctx context.Context, lang *Language) (string, error) {
	out, err := combined(ctx, nil, lang.Compile[0], "--version")
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	return first, nil
}
