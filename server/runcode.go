package server

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rewardd/rewardd/scorers/codeexec"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// POST /run_code speaks SandboxFusion's API (its RunCodeRequest and
// RunCodeResponse), so that a trainer whose code reward calls SandboxFusion
// (verl's sandbox_fusion.url) calls rewardd unchanged: one program, run once
// on one stdin, answered with what it did, which the caller judges itself.
//
// The answer's status is Success (compiled, ran, exited 0), Failed (the
// program's fault: it did not compile, exited non-zero, ran out of a limit
// or crashed) or SandboxError (the sandbox could not run it: never a
// failed program). compile_result (compiled languages) and run_result are
// {status, execution_time, return_code, stdout, stderr}, status Finished
// (it ended on its own; return_code is its exit status),
// TimeLimitExceeded, or Error (it was stopped another way: a memory or
// output limit, a signal; message says which).

// runCodeRequest is SandboxFusion's RunCodeRequest. Fields it has that
// rewardd does not use are ignored, as SandboxFusion ignores unknown ones.
type runCodeRequest struct {
	Code           *string  `json:"code"`
	Language       string   `json:"language"`
	Stdin          *string  `json:"stdin"`
	CompileTimeout *float64 `json:"compile_timeout"`
	RunTimeout     *float64 `json:"run_timeout"`
	// MemoryLimitMB of -1 (SandboxFusion's default) or 0 is the server's.
	MemoryLimitMB *float64           `json:"memory_limit_MB"`
	Files         map[string]*string `json:"files"`
	FetchFiles    []string           `json:"fetch_files"`
}

// runCodeResponse is SandboxFusion's RunCodeResponse.
type runCodeResponse struct {
	Status          string            `json:"status"`
	Message         string            `json:"message"`
	CompileResult   *commandResult    `json:"compile_result"`
	RunResult       *commandResult    `json:"run_result"`
	ExecutorPodName *string           `json:"executor_pod_name"`
	Files           map[string]string `json:"files"`
}

// commandResult is SandboxFusion's CommandRunResult.
type commandResult struct {
	Status        string   `json:"status"`
	ExecutionTime *float64 `json:"execution_time"`
	ReturnCode    *int     `json:"return_code"`
	Stdout        string   `json:"stdout"`
	Stderr        string   `json:"stderr"`
}

// SandboxFusion's statuses.
const (
	runSuccess      = "Success"
	runFailed       = "Failed"
	runSandboxError = "SandboxError"

	cmdFinished = "Finished"
	cmdError    = "Error"
	cmdTimeout  = "TimeLimitExceeded"
)

// maxRunCodeFiles bounds the files of one request.
const maxRunCodeFiles = 64

// runCode answers POST /run_code.
func (a *jsonAPI) runCode(w http.ResponseWriter, r *http.Request, body []byte) error {
	if !a.svc.Config().Inline.Allows("code_exec") {
		return status.Error(codes.PermissionDenied, "POST /run_code runs the request's program: this server allows it only when its config's inline.kinds lists code_exec")
	}
	var in runCodeRequest
	if err := decodeJSON(body, &in); err != nil {
		return err
	}
	job, err := a.runCodeJob(&in)
	if err != nil {
		return err
	}
	wait := runCodeWait(&in, a.svc.limits().RequestTimeout)
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	if t := ticketFrom(ctx); t != nil {
		if err := t.reserve(runCodeCost(job.Limits.OutputKB)); err != nil {
			return err
		}
	}
	var res codeexec.ExecResult
	if a.exec == nil {
		err = errors.New("this process has no code execution sandbox")
	} else {
		res, err = a.exec.Exec(ctx, job)
	}
	if err := ctx.Err(); err != nil {
		return runCodeLate(err, wait)
	}
	out := runCodeResponse{Files: map[string]string{}}
	if err != nil {
		out.Status, out.Message = runSandboxError, err.Error()
	} else {
		out = runCodeAnswer(res)
	}
	writeJSON(w, out)
	return nil
}

// runCodeJob checks a request and makes its job: the language, within
// this server's languages; the limits, the server's (its config's
// inline.code_exec_limits) unless the request lowers them.
func (a *jsonAPI) runCodeJob(in *runCodeRequest) (codeexec.ExecJob, error) {
	var job codeexec.ExecJob
	if in.Code == nil {
		return job, invalid(`request body: "code" is missing`)
	}
	if in.Language == "" {
		return job, invalid(`request body: "language" is missing`)
	}
	lang, err := sandbox.LookupLanguage(in.Language)
	if err != nil {
		return job, invalid(`request body: language %q is not one rewardd runs (SandboxFusion's python, cpp, java and nodejs)`, in.Language)
	}
	if a.exec != nil {
		if runner, err := a.exec.Runner(); err == nil {
			if err := runner.Supports(lang.Name); err != nil {
				return job, invalid("request body: language %q: %v", in.Language, err)
			}
		}
	}
	if len(in.FetchFiles) > 0 {
		return job, invalid("request body: fetch_files: rewardd's /run_code sends no files back; ask for none")
	}
	caps := a.svc.Config().Inline.CodeExecLimits
	job.Language, job.Source = lang.Name, *in.Code
	if in.Stdin != nil {
		job.Stdin = *in.Stdin
	}
	job.Limits = caps
	job.Limits.Processes = lang.RunLimits.Processes
	if job.Limits.Processes > caps.Processes {
		return job, invalid("%s runs with %d processes, more than this server's inline.code_exec_limits.processes (%d): the config must raise it for /run_code to run %s",
			lang.Name, lang.RunLimits.Processes, caps.Processes, lang.Name)
	}
	if t, err := seconds("run_timeout", in.RunTimeout); err != nil {
		return job, err
	} else if t > caps.CPUSeconds {
		return job, invalid("request body: run_timeout %g s is above this server's %g s (its config's inline.code_exec_limits.cpu_seconds): a request can only lower the server's limits", t, caps.CPUSeconds)
	} else if t > 0 {
		job.Limits.CPUSeconds = t
	}
	if m := in.MemoryLimitMB; m != nil && *m > 0 {
		switch {
		case *m > float64(caps.MemoryMB):
			return job, invalid("request body: memory_limit_MB %g is above this server's %d (its config's inline.code_exec_limits.memory_mb): a request can only lower the server's limits", *m, caps.MemoryMB)
		case *m < 32:
			return job, invalid("request body: memory_limit_MB %g: at least 32", *m)
		}
		job.Limits.MemoryMB = int(*m)
	}
	if lang.Compiled() {
		job.CompileLimits = lang.CompileLimits
		if t, err := seconds("compile_timeout", in.CompileTimeout); err != nil {
			return job, err
		} else if t > lang.CompileLimits.CPUSeconds {
			return job, invalid("request body: compile_timeout %g s is above rewardd's %g s of CPU for a %s compile: a request can only lower the server's limits", t, lang.CompileLimits.CPUSeconds, lang.Name)
		} else if t > 0 {
			job.CompileLimits.CPUSeconds = t
		}
	}
	if len(in.Files) > maxRunCodeFiles {
		return job, invalid("request body: files: %d files, at most %d", len(in.Files), maxRunCodeFiles)
	}
	for name, data := range in.Files {
		if err := sandbox.CheckFileName(name); err != nil {
			return job, invalid("request body: files: %v", err)
		}
		if job.Files == nil {
			job.Files = make(map[string][]byte, len(in.Files))
		}
		job.Files[name] = nil
		if data != nil {
			b, err := base64.StdEncoding.DecodeString(*data)
			if err != nil {
				return job, invalid("request body: files[%q]: not base64: %v", name, err)
			}
			job.Files[name] = b
		}
	}
	return job, nil
}

// seconds reads an optional number of seconds of the request: 0 when it
// is absent.
func seconds(key string, v *float64) (float64, error) {
	if v == nil {
		return 0, nil
	}
	if !(*v > 0) || math.IsInf(*v, 0) {
		return 0, invalid("request body: %s %v: want a number of seconds above 0", key, *v)
	}
	return *v, nil
}

// runCodeCost bounds what a run's answer holds at once: its stdout and
// stderr, up to the output limit each, three times over (as the sandbox
// sends them, in base64, while they are decoded; decoded; in the answer's
// JSON while it is written).
func runCodeCost(outputKB int) int64 { return 2 * 3 * int64(outputKB) << 10 }

// runCodeAnswer is the answer for what the executor did.
func runCodeAnswer(res codeexec.ExecResult) runCodeResponse {
	out := runCodeResponse{Status: runSuccess, Files: map[string]string{}}
	if b := res.Build; b != nil {
		c := &commandResult{Status: cmdFinished, ExecutionTime: ptr(b.Wall.Seconds()), Stderr: b.Output}
		switch b.Status {
		case sandbox.Passed:
			c.ReturnCode = ptr(0)
		case sandbox.Failed:
			c.ReturnCode = ptr(b.ExitCode)
			out.Message = "the program does not compile"
		case sandbox.Timeout:
			c.Status, out.Message = cmdTimeout, "the compile ran out of time"
		default:
			c.Status, out.Message = cmdError, fmt.Sprintf("the compile was stopped: %s (%s)", b.Status, b.Detail)
		}
		out.CompileResult = c
		if !b.OK() {
			out.Status = runFailed
			return out
		}
	}
	t := res.Run
	c := &commandResult{Status: cmdFinished, ExecutionTime: ptr(t.Wall.Seconds()), Stdout: string(t.Stdout), Stderr: string(t.Stderr)}
	out.RunResult = c
	if t.ExitCode >= 0 {
		c.ReturnCode = ptr(t.ExitCode)
	}
	switch t.Status {
	case sandbox.Ran:
		return out
	case sandbox.RuntimeError:
		if t.ExitCode < 0 {
			// Python raised: the interpreter would have printed the
			// exception and exited 1.
			c.ReturnCode = ptr(1)
			if c.Stderr != "" && !strings.HasSuffix(c.Stderr, "\n") {
				c.Stderr += "\n"
			}
			c.Stderr += t.Detail + "\n"
		}
	case sandbox.Timeout:
		c.Status, c.ReturnCode = cmdTimeout, nil
	default:
		c.Status = cmdError
	}
	out.Status, out.Message = runFailed, t.Detail
	return out
}

func ptr[T any](v T) *T { return &v }
