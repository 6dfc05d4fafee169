package codeexec_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// cpSolution is the first accepted C++ solution of cp_problems.jsonl that
// includes bits/stdc++.h, with its row.
func cpSolution(b *testing.B) (string, *scorers.Rollout) {
	for _, pr := range cpProblems(b) {
		for _, src := range pr.Solutions["cpp"] {
			if strings.Contains(src, "#include <bits/stdc++.h>") {
				return src, &scorers.Rollout{ID: pr.ID, Completion: fmt.Sprintf(fence["cpp"], src), Fields: pr.fields}
			}
		}
	}
	b.Fatal("no C++ solution includes bits/stdc++.h")
	return "", nil
}

// BenchmarkCppCompile compiles a real solution (it includes
// bits/stdc++.h) in the sandbox, with the precompiled header (gnu++17, the
// flags it was built with) and without it (c++17: GCC then finds the
// header's precompiled form invalid and reads the header itself), side by
// side. One op is one compile.
func BenchmarkCppCompile(b *testing.B) {
	src, _ := cpSolution(b)
	p := pool(b, "cpp")
	for _, c := range []struct{ name, std string }{{"pch", ""}, {"no_pch", "c++17"}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				bld, err := p.Compile(context.Background(), sandbox.CompileJob{Language: "cpp", Source: src, Std: c.std})
				if err != nil || !bld.OK() {
					b.Fatalf("%v %+v", err, bld)
				}
			}
		})
	}
}

// BenchmarkGroup scores a GRPO group of 8 rollouts with the same C++
// program, on two workers, in one request (a memo: one compile, one run)
// and with no memo (eight of each), side by side. One op is one group.
func BenchmarkGroup(b *testing.B) {
	_, r := cpSolution(b)
	p := pool(b, "cpp")
	s := newScorer(b, cpParams("cpp"), p)
	group := func(ctx context.Context) {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for range 4 {
					if res := s.Score(ctx, r); res.Value != 1 {
						b.Errorf("%+v", res)
					}
				}
			})
		}
		wg.Wait()
	}
	b.Run("memo", func(b *testing.B) {
		for b.Loop() {
			group(scorers.WithMemo(context.Background()))
		}
	})
	b.Run("no_memo", func(b *testing.B) {
		for b.Loop() {
			group(context.Background())
		}
	})
}
