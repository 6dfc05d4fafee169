package sandbox_test

import (
	"context"
	"testing"

	"github.com/rewardd/rewardd/internal/sandboxtest"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// TestBuildKey: two jobs have the same key exactly when they compile to
// the same program: the language, the source, the files beside it, the
// -std flag, the limits and the uid each change it; a limit left zero and
// the language's default for it do not; a language that is not compiled
// has none.
func TestBuildKey(t *testing.T) {
	sandboxtest.SkipUnlessRoot(t)
	sandboxtest.SkipUnlessAvailable(t, "cpp", "java")
	p := startPool(t, sandbox.Config{Slots: 1, Languages: []string{"cpp", "java"}})
	base := sandbox.CompileJob{Language: "cpp", Source: "int main() {}", Files: map[string][]byte{"a.h": []byte("int a;")}}
	key := func(j sandbox.CompileJob) string {
		t.Helper()
		k, err := p.BuildKey(context.Background(), j)
		if err != nil {
			t.Fatalf("BuildKey(%+v): %v", j, err)
		}
		return k
	}
	want := key(base)
	same := base
	same.Language = "c++"
	same.Files = map[string][]byte{"a.h": []byte("int a;")}
	cpp, err := sandbox.LookupLanguage("cpp")
	if err != nil {
		t.Fatal(err)
	}
	same.Limits = cpp.CompileLimits
	if got := key(same); got != want {
		t.Errorf("the same compile (an alias, equal files, the default limits written out): key %s, want %s", got, want)
	}
	for name, change := range map[string]func(*sandbox.CompileJob){
		"language": func(j *sandbox.CompileJob) {
			j.Language, j.Source = "java", "class Main { public static void main(String[] a) {} }"
		},
		"source":   func(j *sandbox.CompileJob) { j.Source += "\n" },
		"file":     func(j *sandbox.CompileJob) { j.Files = map[string][]byte{"a.h": []byte("int b;")} },
		"no files": func(j *sandbox.CompileJob) { j.Files = nil },
		"std":      func(j *sandbox.CompileJob) { j.Std = "c++20" },
		"limits":   func(j *sandbox.CompileJob) { j.Limits.CPUSeconds = 3 },
		"judge":    func(j *sandbox.CompileJob) { j.Judge = true },
	} {
		j := base
		change(&j)
		if name == "language" {
			j.Files = nil
			if key(j) == key(sandbox.CompileJob{Language: "cpp", Source: j.Source}) {
				t.Errorf("%s: the same key in java and C++", name)
			}
			continue
		}
		if key(j) == want {
			t.Errorf("another %s, the same key", name)
		}
	}
	if _, err := p.BuildKey(context.Background(), sandbox.CompileJob{Language: "python", Source: "pass"}); err == nil {
		t.Error("python has a build key")
	}
}
