package sandbox

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// judgeUIDBase is the first uid checkers run as: a range of its own, so
// that no submission's process, whatever it leaves behind, shares a uid
// with the checker that reads the expected answers (pool uids are below
// 2,000,000).
const judgeUIDBase = 2_000_000

// maxCompilerOutput bounds a Build's Output.
const maxCompilerOutput = 64 << 10

// setupLanguages decides which languages the pool runs, building what they
// need once per machine (the launcher, precompiled headers). A language
// asked for by name that cannot run fails Start; one the table merely
// lists is left out, with the reason in p.unsupported.
func (p *Pool) setupLanguages(ctx context.Context) error {
	p.langs = map[string]*poolLanguage{}
	p.unsupported = map[string]error{}
	wanted := map[string]bool{"python": true}
	for _, name := range p.cfg.Languages {
		l, err := LookupLanguage(name)
		if err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		wanted[l.Name] = true
	}
	for _, l := range Languages() {
		if p.cfg.Languages != nil && !wanted[l.Name] {
			p.unsupported[l.Name] = errors.New("not enabled in this pool")
			continue
		}
		pl, err := p.setupLanguage(ctx, l)
		if err != nil {
			if p.cfg.Languages != nil || l.InProcess {
				return fmt.Errorf("sandbox: %s: %w", l.Name, err)
			}
			p.unsupported[l.Name] = err
			continue
		}
		p.langs[l.Name] = pl
	}
	return nil
}

func (p *Pool) setupLanguage(ctx context.Context, l *Language) (*poolLanguage, error) {
	pl := &poolLanguage{Language: l}
	if l.InProcess {
		if l.Name == "python" {
			// The interpreter the fork servers run.
			l.Toolchain = []string{p.cfg.Python}
		}
		return pl, l.Available()
	}
	if err := l.Available(); err != nil {
		return nil, err
	}
	if l.Memory == Cgroup && !p.cfg.Unsafe && p.cg == nil {
		return nil, fmt.Errorf("its memory is bounded by the slot's cgroup, and there is none: %v", p.cgErr)
	}
	if p.launcher == "" {
		launcher, err := buildLauncher(ctx, p.cfg.CacheDir)
		if err != nil {
			return nil, err
		}
		p.launcher = launcher
	}
	if len(l.PrecompiledHeaders) > 0 {
		dir, err := buildPCH(ctx, p.cfg.CacheDir, l)
		if err != nil {
			return nil, err
		}
		pl.pch = dir
	}
	return pl, nil
}

// readPaths are the host paths the sandbox may read besides the system's:
// the cache directory and the toolchains' configuration.
func (p *Pool) readPaths() []string {
	var paths []string
	if p.launcher != "" {
		paths = append(paths, p.cfg.CacheDir)
	}
	for _, name := range slices.Sorted(maps.Keys(p.langs)) {
		paths = append(paths, p.langs[name].ReadPaths...)
	}
	return paths
}

// Languages lists the languages the pool runs, by name.
func (p *Pool) Languages() []string { return slices.Sorted(maps.Keys(p.langs)) }

// Supports says whether the pool runs programs in language (a name or an
// alias of Languages), and if not, why.
func (p *Pool) Supports(language string) error {
	_, err := p.language(language)
	return err
}

func (p *Pool) language(name string) (*poolLanguage, error) {
	if name == "" {
		name = "python"
	}
	l, err := LookupLanguage(name)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	if pl, ok := p.langs[l.Name]; ok {
		return pl, nil
	}
	return nil, fmt.Errorf("sandbox: this pool does not run %s: %v", l.Name, p.unsupported[l.Name])
}

// validate checks job against its language and returns the language.
func (p *Pool) validate(j *Job) (*poolLanguage, error) {
	lang, err := p.language(j.Language)
	if err != nil {
		return nil, err
	}
	switch j.Style {
	case IO:
		if len(j.Inputs) == 0 || len(j.Inputs) > maxTests {
			return nil, fmt.Errorf("io submission with %d tests, want 1..%d", len(j.Inputs), maxTests)
		}
		if j.Args != nil && len(j.Args) != len(j.Inputs) || j.TestFiles != nil && len(j.TestFiles) != len(j.Inputs) {
			return nil, fmt.Errorf("io submission with %d tests, %d argument lists and %d file sets", len(j.Inputs), len(j.Args), len(j.TestFiles))
		}
	case Assert:
		if j.EntryPoint == "" || j.Test == "" {
			return nil, errors.New("assert submission needs test code and an entry point")
		}
		if !lang.InProcess {
			return nil, fmt.Errorf("assert submissions are python only, not %s", lang.Name)
		}
	default:
		return nil, fmt.Errorf("unknown test style %q", j.Style)
	}
	switch {
	case lang.InProcess && (j.Build != nil || j.Args != nil || j.TestFiles != nil):
		return nil, fmt.Errorf("a %s job has its source in Code: no Build, Args or TestFiles", lang.Name)
	case j.Style == Assert && j.Files != nil:
		return nil, errors.New("an assert job takes no Files")
	case j.Style != Assert && j.Prompt != "":
		return nil, errors.New("a Prompt is for assert jobs")
	case lang.Compiled() && !j.Build.OK():
		return nil, fmt.Errorf("a %s job needs a Build that compiled", lang.Name)
	case lang.Compiled() && j.Build.Language != lang.Name:
		return nil, fmt.Errorf("a %s job with a %s Build", lang.Name, j.Build.Language)
	case !lang.Compiled() && j.Build != nil:
		return nil, fmt.Errorf("%s is not compiled: the job has its source in Code, not a Build", lang.Name)
	case j.TestCPUSeconds < 0 || j.TestCPUSeconds > 60:
		return nil, fmt.Errorf("a test's CPU time must be in (0, 60] seconds, got %g", j.TestCPUSeconds)
	case j.TestWallSeconds < 0 || j.TestWallSeconds > 120:
		return nil, fmt.Errorf("a test's wall time must be in (0, 120] seconds, got %g", j.TestWallSeconds)
	}
	for name := range j.Files {
		if err := CheckFileName(name); err != nil {
			return nil, err
		}
	}
	for _, files := range j.TestFiles {
		for name := range files {
			if err := CheckFileName(name); err != nil {
				return nil, err
			}
		}
	}
	return lang, j.Limits.Validate()
}

// CheckFileName refuses a file name that is not a plain path below the work
// dir, or that no file can have (a NUL byte): what Job.Files, Job.TestFiles
// and CompileJob.Files take.
func CheckFileName(name string) error {
	if name == "" || len(name) > 255 || strings.HasPrefix(name, "/") {
		return fmt.Errorf("file name %q: want a relative path", name)
	}
	if strings.IndexByte(name, 0) >= 0 {
		return fmt.Errorf("file name %q: a NUL byte is in no file's name", name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("file name %q: want a plain relative path", name)
		}
	}
	return nil
}

// testLimits are the CPU and wall time of one test of job.
func (j *Job) testLimits() (cpu, wall float64) {
	cpu = j.Limits.CPUSeconds
	if j.TestCPUSeconds > 0 {
		cpu = j.TestCPUSeconds
	}
	wall = 2*cpu + 1
	if j.TestWallSeconds > 0 {
		wall = j.TestWallSeconds
	}
	return cpu, min(wall, j.Limits.WallSeconds)
}

// env is the environment of exec'd programs; compilers get the C locale
// (plain ASCII quotes in their messages).
func env(l *Language, compiler bool) []string {
	lang := "LANG=C.UTF-8"
	if compiler {
		lang = "LC_ALL=C"
	}
	return append([]string{"PATH=/usr/bin:/bin", lang, "HOME=" + workDir, "TMPDIR=" + workDir}, l.Env...)
}

// request is the harness's request for job in slot s.
func (p *Pool) request(s *slot, lang *poolLanguage, j Job) (*request, error) {
	uid := s.uid
	if j.Judge {
		uid = s.judge
	}
	req := &request{
		Style: j.Style, Code: j.Code, Inputs: j.Inputs, Test: j.Test, Entry: j.EntryPoint, Prompt: j.Prompt, UID: uid,
		Limits: wireLimits{
			CPU: j.Limits.CPUSeconds, Wall: j.Limits.WallSeconds, Memory: int64(j.Limits.MemoryMB) << 20,
			Output: int64(j.Limits.OutputKB) << 10, Procs: j.Limits.Processes,
			Total: max(0, j.Limits.totalOutput()-j.OutputBefore),
		},
		Stop: j.StopOnFailure, Keep: j.KeepOutput,
	}
	if req.Inputs == nil {
		req.Inputs = []string{}
	}
	cpu, wall := j.testLimits()
	for _, name := range slices.Sorted(maps.Keys(j.Files)) {
		req.Files = append(req.Files, wireFile{Name: name, Data: j.Files[name], Mode: 0o600})
	}
	if lang.InProcess {
		if j.TestCPUSeconds > 0 || j.TestWallSeconds > 0 {
			req.TestCPU, req.TestWall = cpu, wall
		}
		return req, nil
	}
	req.Style, req.Code, req.Inputs = "exec", "", []string{}
	req.Launcher, req.Env, req.Markers = p.launcher, env(lang.Language, false), lang.MemoryMarkers
	source := j.Code
	if lang.Compiled() {
		source = j.Build.source
		req.Files = append(req.Files, j.Build.files...)
	} else {
		req.Files = append(req.Files, wireFile{Name: lang.SourceName(source), Data: []byte(source), Mode: 0o600})
	}
	argv := lang.runArgv(source, j.Limits.MemoryMB)
	for k, in := range j.Inputs {
		t := p.wireTest(lang.Language, argv, j.Limits, cpu, wall)
		t.Stdin = []byte(in)
		if j.Args != nil {
			t.Argv = append(slices.Clip(argv), j.Args[k]...)
		}
		if j.TestFiles != nil {
			for _, name := range slices.Sorted(maps.Keys(j.TestFiles[k])) {
				t.Files = append(t.Files, wireFile{Name: name, Data: j.TestFiles[k][name], Mode: 0o644})
			}
		}
		req.Tests = append(req.Tests, t)
	}
	return req, nil
}

// wireTest is one exec test of argv under lim, with cpu and wall seconds.
func (p *Pool) wireTest(l *Language, argv []string, lim Limits, cpu, wall float64) wireTest {
	t := wireTest{
		Argv: argv, CPU: cpu, Wall: wall, Stack: int64(lim.MemoryMB) << 20,
		Output: int64(lim.OutputKB) << 10, Procs: lim.Processes,
	}
	if l.Memory == AddressSpace {
		t.Memory = int64(lim.MemoryMB) << 20
	}
	return t
}

// compileIn compiles job's program in slot s.
func (p *Pool) compileIn(ctx context.Context, s *slot, lang *poolLanguage, job CompileJob) (*Build, error) {
	req, err := p.compileRequest(s, lang, job)
	if err != nil {
		return nil, err
	}
	rep, cgOOM, err := p.roundTrip(ctx, s, req, job.Limits)
	if err != nil {
		return nil, err
	}
	if len(rep.Tests) != 1 {
		return nil, fmt.Errorf("fork server answered %d tests of 1", len(rep.Tests))
	}
	return buildOf(lang, job, rep, cgOOM)
}

// compileRequest is the fork server's request to compile job's program in
// slot s: the compiler's command line, the source and job's other files.
func (p *Pool) compileRequest(s *slot, lang *poolLanguage, job CompileJob) (*request, error) {
	src := lang.SourceName(job.Source)
	argv := slices.Clone(lang.Compile)
	for i, a := range argv {
		argv[i] = strings.ReplaceAll(a, "{source}", src)
		if job.Std != "" && strings.HasPrefix(a, "-std=") {
			argv[i] = "-std=" + job.Std
		}
	}
	if lang.pch != "" {
		argv = slices.Insert(argv, 1, "-I"+lang.pch)
	}
	uid := s.uid
	if job.Judge {
		uid = s.judge
	}
	lim := job.Limits
	req := &request{
		Style: "exec", Inputs: []string{}, UID: uid,
		Limits: wireLimits{
			CPU: lim.CPUSeconds, Wall: lim.WallSeconds, Memory: int64(lim.MemoryMB) << 20,
			Output: int64(lim.OutputKB) << 10, Procs: lim.Processes, Total: lim.totalOutput(),
		},
		Launcher: p.launcher, Env: env(lang.Language, true), Collect: lang.Artefacts, Keep: true,
		Markers: []string{"out of memory", "virtual memory exhausted", "Cannot allocate memory"},
		// g++ itself exits 4 when its cc1plus is killed at the CPU limit.
		TimeMarkers: []string{"CPU time limit exceeded signal terminated program"},
		Files:       []wireFile{{Name: src, Data: []byte(job.Source), Mode: 0o600}},
		Tests:       []wireTest{p.wireTest(lang.Language, argv, lim, lim.CPUSeconds, lim.WallSeconds)},
	}
	for _, name := range slices.Sorted(maps.Keys(job.Files)) {
		if err := CheckFileName(name); err != nil {
			return nil, err
		}
		req.Files = append(req.Files, wireFile{Name: name, Data: job.Files[name], Mode: 0o600})
	}
	return req, nil
}

// buildOf is the build the fork server's reply to a compile request
// describes; cgOOM says whether the slot's cgroup ran out of memory.
func buildOf(lang *poolLanguage, job CompileJob, rep *reply, cgOOM bool) (*Build, error) {
	t := rep.Tests[0]
	b := &Build{
		Language: lang.Name, source: job.Source, Detail: t.Detail,
		CPU: seconds(t.CPU), Wall: seconds(t.Wall), ExitCode: -1,
	}
	if t.Exit != nil {
		b.ExitCode = *t.Exit
	}
	out := string(t.Stdout) + string(t.Stderr)
	if len(out) > maxCompilerOutput {
		out = out[:maxCompilerOutput]
	}
	b.Output = out
	switch t.Status {
	case "ran":
		if len(rep.Files) == 0 {
			b.Status, b.Detail = Failed, "the compiler made no program"
		} else {
			b.Status, b.files, b.loadBytes = Passed, rep.Files, loadBytes(rep.Files)
		}
	case "exit":
		b.Status = Failed
	case "timeout":
		b.Status = Timeout
	case "memory":
		b.Status = Memory
	case "output", "total_output":
		b.Status = Output
	case "crashed":
		b.Status = Crashed
		if cgOOM {
			b.Status, b.Detail = Memory, "memory limit reached (the slot's cgroup)"
		}
	case "noexec", "harness", "setup":
		return nil, fmt.Errorf("sandbox: compile %s: %s", lang.Name, t.Detail)
	default:
		return nil, fmt.Errorf("sandbox: compile: unknown status %q", t.Status)
	}
	return b, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// loadBytes is the memory the largest ELF executable of files needs
// before it runs (its loadable segments: code, data, static arrays), 0
// when none is one.
func loadBytes(files []wireFile) int64 {
	var most int64
	for _, f := range files {
		ef, err := elf.NewFile(bytes.NewReader(f.Data))
		if err != nil {
			continue
		}
		var n int64
		for _, prog := range ef.Progs {
			if prog.Type == elf.PT_LOAD {
				n += int64(prog.Memsz)
			}
		}
		most = max(most, n)
	}
	return most
}

// overMemory is the Result of job when its program cannot even be loaded
// within its memory limit (a static array larger than the limit): every
// test reached the limit. ok is false when the program fits.
func overMemory(lang *poolLanguage, job Job) (res Result, ok bool) {
	limit := int64(job.Limits.MemoryMB) << 20
	if lang.Memory != AddressSpace || job.Build == nil || job.Build.loadBytes <= limit {
		return Result{}, false
	}
	res.Tests = make([]TestResult, len(job.Inputs))
	for k := range res.Tests {
		res.Tests[k] = TestResult{Status: Memory, ExitCode: -1,
			Detail: fmt.Sprintf("the program needs %d MB before it starts (its static data), the memory limit is %d MB", job.Build.loadBytes>>20, job.Limits.MemoryMB)}
	}
	return res, true
}

type request struct {
	ID     int64      `json:"id"`
	Style  Style      `json:"style"`
	Code   string     `json:"code"`
	Inputs []string   `json:"inputs"`
	Test   string     `json:"test"`
	Entry  string     `json:"entry"`
	Prompt string     `json:"prompt,omitempty"`
	UID    int        `json:"uid"`
	Limits wireLimits `json:"limits"`
	// Each io test's CPU and wall time (python; 0: the submission's).
	TestCPU  float64 `json:"test_cpu,omitempty"`
	TestWall float64 `json:"test_wall,omitempty"`
	// Stop after the first test that did not run to its end; keep every
	// test's stdout and stderr.
	Stop bool `json:"stop,omitempty"`
	Keep bool `json:"keep,omitempty"`
	// An exec job: the launcher, the environment, the files written
	// first, the tests, the files to send back after the last test (when
	// it ran), and the texts on stderr that mean "out of memory".
	Launcher string     `json:"launcher,omitempty"`
	Env      []string   `json:"env,omitempty"`
	Files    []wireFile `json:"files,omitempty"`
	Tests    []wireTest `json:"tests,omitempty"`
	Collect  []string   `json:"collect,omitempty"`
	Markers  []string   `json:"markers,omitempty"`
	// Texts that, on the stderr of a test that failed, mean it ran out of
	// time (a compiler driver whose compiler the CPU limit killed).
	TimeMarkers []string `json:"time_markers,omitempty"`
}

// maxVerdictBytes bounds what a reply says of one test besides its
// output: its status, detail (2,000 characters at most, each \u-escaped
// at worst) and measurements.
const maxVerdictBytes = 32 << 10

// maxReply bounds the size of the reply to r: every test's verdict, the
// output its tests may print together (in base64: stdout and kept stderr),
// and for a compile, the files it sends back (from the work dir, at most
// the slot's tmpfs).
func (r *request) maxReply() int64 {
	tests := int64(max(1, len(r.Inputs), len(r.Tests)))
	size := 64<<10 + tests*maxVerdictBytes + base64Len(r.Limits.Total)
	if len(r.Collect) > 0 {
		size += base64Len(tmpfsMB << 20)
	}
	return size
}

func base64Len(n int64) int64 { return (n + 2) / 3 * 4 }

type wireLimits struct {
	CPU    float64 `json:"cpu"`
	Wall   float64 `json:"wall"`
	Memory int64   `json:"memory"`
	Output int64   `json:"output"`
	Procs  int     `json:"procs"`
	// Total is what the request's tests may print together, in bytes.
	Total int64 `json:"total"`
}

// wireFile is a file in the work dir (Data in base64 on the wire).
type wireFile struct {
	Name string `json:"name"`
	Data []byte `json:"data"`
	Mode int    `json:"mode"`
}

// wireTest is one test of an exec job: a process running argv with stdin
// under its own limits (Memory 0: no address space limit).
type wireTest struct {
	Argv   []string   `json:"argv"`
	Stdin  []byte     `json:"stdin"`
	Files  []wireFile `json:"files,omitempty"`
	CPU    float64    `json:"cpu"`
	Wall   float64    `json:"wall"`
	Memory int64      `json:"memory"`
	Stack  int64      `json:"stack"`
	Output int64      `json:"output"`
	Procs  int        `json:"procs"`
}

type reply struct {
	ID      int64       `json:"id"`
	Tests   []wireReply `json:"tests"`
	Files   []wireFile  `json:"files"`
	Seconds float64     `json:"seconds"`
	// Output is what the tests printed, as counted against Limits.Total.
	Output int64 `json:"output"`
	Pid1   bool  `json:"pid1"`
	UID    int   `json:"uid"`
}

// wireReply is what happened to one test.
type wireReply struct {
	Status string  `json:"status"`
	Detail string  `json:"detail"`
	Stdout []byte  `json:"stdout"`
	Stderr []byte  `json:"stderr"`
	CPU    float64 `json:"cpu"`
	Wall   float64 `json:"wall"`
	RSS    int64   `json:"rss"`
	Exit   *int    `json:"exit"`
	Signal int     `json:"signal,omitempty"`
}

// HarnessError is a problem with the row's tests rather than the program
// (test code that does not compile, raises before it calls the program or
// defines no check; a trusted prompt that raises before it defines a name
// the tests use). It is the caller's data, so the scorer reports it as an
// error, not as a failed program, and the metrics count it as test_error,
// apart from the sandbox's own failures.
type HarnessError struct{ Detail string }

func (e *HarnessError) Error() string {
	return "the row's tests are broken, not the program: " + e.Detail
}

// result turns the harness's reply into the job's Result; cgOOM says the
// kernel killed a process of the slot for memory during the job.
func (j Job) result(rep *reply, cgOOM bool) (Result, error) {
	want := 1
	if j.Style == IO {
		want = len(j.Inputs)
	}
	if len(rep.Tests) != want {
		return Result{}, fmt.Errorf("fork server answered %d tests of %d", len(rep.Tests), want)
	}
	res := Result{Tests: make([]TestResult, want), Elapsed: seconds(rep.Seconds), Output: rep.Output}
	for k, t := range rep.Tests {
		r, over, err := j.testResult(k, t, cgOOM)
		if err != nil {
			return Result{}, err
		}
		res.OverOutput = res.OverOutput || over
		res.Tests[k] = r
	}
	return res, nil
}

// testResult turns the harness's reply t on test k into its TestResult;
// over says the test went over the total output limit.
func (j Job) testResult(k int, t wireReply, cgOOM bool) (r TestResult, over bool, err error) {
	cpu, _ := j.testLimits()
	r = TestResult{Detail: t.Detail, CPU: seconds(t.CPU), Wall: seconds(t.Wall), MemoryKB: t.RSS, ExitCode: -1, Signal: t.Signal}
	if t.Exit != nil {
		r.ExitCode = *t.Exit
	}
	if j.KeepOutput {
		r.Stdout, r.Stderr = t.Stdout, t.Stderr
	}
	switch t.Status {
	case "passed":
		r.Status = Passed
		if j.Style == IO {
			// Only Check passes an io test; the harness never says
			// "passed" for one, so the program wrote this line itself.
			r.Status, r.Detail = Failed, "the program wrote a verdict of its own"
		}
	case "failed":
		r.Status = Failed
	case "error", "exit":
		r.Status = RuntimeError
		if j.Style == Assert {
			r.Status = Failed
		}
	case "ran":
		switch {
		case j.Check == nil:
			r.Status, r.Stdout = Ran, t.Stdout
		case j.Check(k, t.Stdout):
			r.Status = Passed
		default:
			r.Status, r.Detail = Failed, "wrong output"
		}
	case "timeout":
		// Which limit struck first depends on the machine's load; the
		// verdict must not, so the detail names the limits.
		r.Status = Timeout
		if j.Style == IO && j.TestCPUSeconds > 0 {
			r.Detail = fmt.Sprintf("time limit reached (%.2f s CPU per test)", cpu)
		} else {
			r.Detail = fmt.Sprintf("time limit reached (%g CPU seconds, %g wall seconds)", j.Limits.CPUSeconds, j.Limits.WallSeconds)
		}
	case "memory":
		r.Status = Memory
	case "output":
		r.Status = Output
	case "total_output":
		r.Status, over = Output, true
		r.Detail = fmt.Sprintf("the tests together printed more than the total output limit (%d KB)", j.Limits.totalOutput()>>10)
	case "crashed", "noexec":
		r.Status = Crashed
	case "skipped":
		r.Status = Skipped
	case "harness":
		return r, false, &HarnessError{Detail: t.Detail}
	case "setup":
		return r, false, fmt.Errorf("sandbox: %s", t.Detail)
	default:
		return r, false, fmt.Errorf("test %d: unknown status %q", k, t.Status)
	}
	if r.Status == Crashed && cgOOM {
		// The kernel killed a process of the slot for memory: what
		// looked like a crash was the memory limit.
		r.Status, r.Detail = Memory, "memory limit reached (the slot's cgroup)"
	}
	if j.Style == Assert && r.Status == Crashed {
		r.Detail = "the program exited before its tests finished: " + r.Detail
	}
	return r, over, nil
}
