package server

import (
	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
)

// executionProto is e as the API carries it.
func executionProto(e *scorers.Execution) *rewardv1.Execution {
	out := &rewardv1.Execution{
		Language: e.Language, Verdict: rewardv1.Verdict(e.Verdict),
		Passed: int32(e.Passed), Total: int32(e.Total), CompilerOutput: e.CompilerOutput,
		Tests: make([]*rewardv1.TestExecution, len(e.Tests)),
	}
	for k, t := range e.Tests {
		out.Tests[k] = &rewardv1.TestExecution{
			Index: int32(t.Index), Verdict: rewardv1.Verdict(t.Verdict),
			CpuSeconds: t.CPU.Seconds(), WallSeconds: t.Wall.Seconds(),
			MemoryBytes: t.MemoryKB << 10, ExitCode: int32(t.ExitCode), Detail: t.Detail,
		}
	}
	return out
}
