package server

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"path"
	"slices"
	"strings"

	"go.uber.org/zap"
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
// failed program; its message is a sentence of rewardd's, the detail is in
// the server's log). compile_result (compiled languages) and run_result
// are {status, execution_time, return_code, stdout, stderr}, status
// Finished (it ended on its own, or a signal ended it: return_code is its
// exit status, or minus the signal's number, as SandboxFusion's
// subprocesses report it), TimeLimitExceeded (run_timeout of wall time ran
// out), or Error (rewardd stopped it for a memory or output limit without a
// signal; message says which).
//
// The limits are SandboxFusion's: run_timeout (10 s when absent) is the
// run's wall time, and its CPU time too (under SandboxFusion's one-CPU
// isolation a program gets no more CPU than wall time: a CPU limit as long
// changes no verdict, and bounds what a many-threaded program costs here);
// memory_limit_MB (-1: the server's); compile_timeout the compile's CPU
// time. A limit over the server's (its config's inline.code_exec_limits;
// for compiles, the language's) is lowered to it, and message says so,
// where SandboxFusion's clients read nothing but on a SandboxError.

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

// Bounds of one /run_code request: its files, and its program's input
// (code, stdin and files together). The sandbox writes at most 64 files
// into a job's work dir, the program's own among them (its source, what
// its compile makes: a Java program's classes), and drops the rest; its
// fork servers hold a program's input several times over in memory of
// their own while they set it up, and its files go into the work dir
// beside its build.
const (
	maxRunCodeFiles = 32
	maxRunCodeInput = 8 << 20
)

// The input is at most a quarter of the work dir: the rest is for the
// program's build and what it writes.
const _ = uint(sandbox.WorkDirMB<<20 - 4*maxRunCodeInput)

// SandboxFusion's run_timeout when a request leaves it out, in seconds.
const defaultRunTimeout = 10

// runCode answers POST /run_code.
func (a *jsonAPI) runCode(w http.ResponseWriter, r *http.Request, body []byte) error {
	if !a.svc.Config().Inline.Allows("code_exec") {
		return status.Error(codes.PermissionDenied, "POST /run_code runs the request's program: this server allows it only when its config's inline.kinds lists code_exec")
	}
	var in runCodeRequest
	if err := decodeJSON(body, &in); err != nil {
		return err
	}
	job, notes, err := a.runCodeJob(&in)
	if err != nil {
		return err
	}
	wait := runCodeWait(&in, a.svc.limits().RequestTimeout)
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	if t := ticketFrom(ctx); t != nil {
		if err := t.reserve(runCodeCost(job)); err != nil {
			return err
		}
	}
	// A sandbox that could not start: the start log said why, once.
	var res codeexec.ExecResult
	err = errNoSandbox
	if a.exec != nil {
		if _, unavailable := a.exec.Runner(); unavailable == nil {
			res, err = a.exec.Exec(ctx, job)
		}
	}
	if err := ctx.Err(); err != nil {
		return runCodeLate(err, wait)
	}
	var out runCodeResponse
	switch {
	case errors.Is(err, errNoSandbox):
		out = runCodeResponse{Status: runSandboxError, Message: err.Error(), Files: map[string]string{}}
	case err != nil:
		a.log.Error("the sandbox could not run a program", zap.String("method", "http_run_code"), zap.String("language", job.Language), zap.Error(err))
		out = runCodeResponse{Status: runSandboxError, Message: "the sandbox could not run the program (the server's log says why): try again", Files: map[string]string{}}
	default:
		out = runCodeAnswer(res, job)
		notes = append(notes, runCodeFetched(&out, res)...)
	}
	out.Message = strings.Join(slices.DeleteFunc(append([]string{out.Message}, notes...), func(m string) bool { return m == "" }), "; ")
	writeJSON(w, out)
	return nil
}

// errNoSandbox is the SandboxError message of a server whose sandbox could
// not start.
var errNoSandbox = errors.New("code execution is off on this server: its sandbox could not start (its start log says why)")

// runCodeJob checks a request and makes its job: the language, within
// this server's languages; the files, which the sandbox can write; the
// limits, the request's (SandboxFusion's defaults where it gives none)
// within the server's (its config's inline.code_exec_limits), with a note
// for each limit lowered to the server's.
func (a *jsonAPI) runCodeJob(in *runCodeRequest) (job codeexec.ExecJob, notes []string, err error) {
	if in.Code == nil {
		return job, nil, invalid(`request body: "code" is missing`)
	}
	if in.Language == "" {
		return job, nil, invalid(`request body: "language" is missing`)
	}
	var runner codeexec.Runner
	if a.exec != nil {
		runner, _ = a.exec.Runner()
	}
	lang, err := runCodeLanguage(in.Language, runner)
	if err != nil {
		return job, nil, err
	}
	if job.FetchFiles, err = runCodeFetchFiles(in); err != nil {
		return job, nil, err
	}
	caps := a.svc.Config().Inline.CodeExecLimits
	job.Language, job.Source = lang.Name, *in.Code
	if in.Stdin != nil {
		job.Stdin = *in.Stdin
	}
	job.Limits = caps
	// The language's process limit (threads count), within the server's.
	job.Limits.Processes = min(lang.RunLimits.Processes, caps.Processes)

	runTimeout, asked := float64(defaultRunTimeout), "run_timeout (SandboxFusion's default)"
	if in.RunTimeout != nil {
		if runTimeout, err = seconds("run_timeout", in.RunTimeout); err != nil {
			return job, nil, err
		}
		asked = "run_timeout"
	}
	wall, cpu := min(runTimeout, caps.WallSeconds), min(runTimeout, caps.CPUSeconds)
	if wall < runTimeout {
		notes = append(notes, fmt.Sprintf("%s %g s is over this server's %g s of wall time (inline.code_exec_limits.wall_seconds): the program ran with %g s", asked, runTimeout, caps.WallSeconds, wall))
	}
	if cpu < runTimeout {
		notes = append(notes, fmt.Sprintf("%s %g s is over this server's %g s of CPU time (inline.code_exec_limits.cpu_seconds): the program ran with %g s of CPU", asked, runTimeout, caps.CPUSeconds, cpu))
	}
	job.Limits.CPUSeconds, job.Limits.WallSeconds, job.RunWallSeconds = cpu, wall, wall

	if m := in.MemoryLimitMB; m != nil && *m > 0 {
		switch {
		case *m < 32:
			return job, nil, invalid("request body: memory_limit_MB %g: at least 32", *m)
		case *m > float64(caps.MemoryMB):
			notes = append(notes, fmt.Sprintf("memory_limit_MB %g is over this server's %d (inline.code_exec_limits.memory_mb): the program ran with %d MB", *m, caps.MemoryMB, caps.MemoryMB))
		default:
			job.Limits.MemoryMB = int(*m)
		}
	}
	if lang.Compiled() {
		job.CompileLimits = lang.CompileLimits
		t, err := seconds("compile_timeout", in.CompileTimeout)
		switch {
		case err != nil:
			return job, nil, err
		case t > lang.CompileLimits.CPUSeconds:
			notes = append(notes, fmt.Sprintf("compile_timeout %g s is over rewardd's %g s of CPU for a %s compile: the compile ran with %g s", t, lang.CompileLimits.CPUSeconds, lang.Name, lang.CompileLimits.CPUSeconds))
		case t > 0:
			job.CompileLimits.CPUSeconds = t
		}
	}
	if job.Files, err = runCodeFiles(in, lang); err != nil {
		return job, nil, err
	}
	input := len(job.Source) + len(job.Stdin)
	for _, data := range job.Files {
		input += len(data)
	}
	if input > maxRunCodeInput {
		return job, nil, invalid("request body: code, stdin and files come to %d bytes; /run_code takes at most %d (%d MiB) for one program", input, maxRunCodeInput, maxRunCodeInput>>20)
	}
	return job, notes, nil
}

// runCodeFiles decodes the request's files (base64, null: empty), each
// with a name the sandbox can write into the work dir
// (sandbox.CheckFileName), none a directory of another, and none the
// program's own: its source, or what its compile makes.
func runCodeFiles(in *runCodeRequest, lang *sandbox.Language) (map[string][]byte, error) {
	if len(in.Files) == 0 {
		return nil, nil
	}
	if len(in.Files) > maxRunCodeFiles {
		return nil, invalid("request body: files: %d files, at most %d", len(in.Files), maxRunCodeFiles)
	}
	own := slices.Clone(lang.Artefacts)
	if !lang.InProcess {
		own = append(own, lang.SourceName(*in.Code))
	}
	files := make(map[string][]byte, len(in.Files))
	for _, name := range slices.Sorted(maps.Keys(in.Files)) {
		if err := sandbox.CheckFileName(name); err != nil {
			return nil, invalid("request body: files: %v", err)
		}
		top, _, _ := strings.Cut(name, "/")
		for _, p := range own {
			if ok, _ := path.Match(p, top); ok {
				return nil, invalid("request body: files[%q]: %q is where the sandbox puts the program (its source, or what its compile makes): name the file otherwise", name, top)
			}
		}
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			if _, clash := in.Files[dir]; clash {
				return nil, invalid("request body: files: %q is a file, and the directory of %q", dir, name)
			}
		}
		var data []byte
		if v := in.Files[name]; v != nil {
			if base64.StdEncoding.DecodedLen(len(*v)) > maxRunCodeInput {
				return nil, invalid("request body: files[%q] is over %d bytes (%d MiB), what /run_code takes for one program", name, maxRunCodeInput, maxRunCodeInput>>20)
			}
			b, err := base64.StdEncoding.DecodeString(*v)
			if err != nil {
				return nil, invalid("request body: files[%q]: not base64: %v", name, err)
			}
			data = b
		}
		files[name] = data
	}
	return files, nil
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

// runCodeCost bounds what a run holds at once besides its request's body:
// its input, three times over (decoded from base64, and in the sandbox's
// request, base64 again, while it is written), and its stdout and stderr,
// up to the output limit each, three times over (as the sandbox sends
// them, in base64, while they are decoded; decoded; in the answer's JSON
// while it is written), and the files it fetches (runCodeFetchCost).
func runCodeCost(job codeexec.ExecJob) int64 {
	input := int64(len(job.Source) + len(job.Stdin))
	for _, data := range job.Files {
		input += int64(len(data))
	}
	return 3*input + 2*3*int64(job.Limits.OutputKB)<<10 + runCodeFetchCost(job)
}

// runCodeAnswer is the answer for what the executor did with job.
func runCodeAnswer(res codeexec.ExecResult, job codeexec.ExecJob) runCodeResponse {
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
	out.Status, out.Message = runFailed, t.Detail
	switch {
	case t.Status == sandbox.Ran:
		out.Status, out.Message = runSuccess, ""
	case t.Status == sandbox.Timeout:
		c.Status, c.ReturnCode = cmdTimeout, nil
		out.Message = fmt.Sprintf("time limit reached (run_timeout: %g s of wall time, %g s of CPU time)", job.RunWallSeconds, job.Limits.CPUSeconds)
	case t.Signal > 0:
		// Ended by a signal (a crash, an abort, the kernel for memory):
		// finished, as SandboxFusion's asyncio subprocess reports it.
		c.ReturnCode = ptr(-t.Signal)
	case t.Status == sandbox.RuntimeError:
		if t.ExitCode < 0 {
			// Python raised: the interpreter would have printed the
			// exception and exited 1.
			c.ReturnCode = ptr(1)
			if c.Stderr != "" && !strings.HasSuffix(c.Stderr, "\n") {
				c.Stderr += "\n"
			}
			c.Stderr += t.Detail + "\n"
		}
	default:
		c.Status = cmdError
	}
	return out
}

func ptr[T any](v T) *T { return &v }
