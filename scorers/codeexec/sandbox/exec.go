package sandbox

import (
	"bytes"
	"cmp"
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

// setupLanguages decides which languages the pool runs. Python, and every
// language Config.Languages names, are set up now, building what they need
// once per machine (the launcher, precompiled headers, …): one of them
// that cannot run fails Start. With no Config.Languages, every other
// language of the table whose toolchain is installed is pending: set up
// and probed after Start returns (startProbes). One that cannot run is
// left out, with the reason in p.unsupported.
func (p *Pool) setupLanguages(ctx context.Context) error {
	p.langs = map[string]*poolLanguage{}
	p.unsupported = map[string]error{}
	p.pending = map[string]*pendingLanguage{}
	wanted := map[string]bool{"python": true}
	for _, name := range p.cfg.Languages {
		l, err := LookupLanguage(name)
		if err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
		wanted[l.Name] = true
	}
	var later []*Language
	for _, l := range Languages() {
		switch {
		case p.cfg.Languages != nil && !wanted[l.Name]:
			p.unsupported[l.Name] = errors.New("not enabled in this pool")
		case p.cfg.Languages == nil && !l.InProcess:
			if err := p.admit(l); err != nil {
				p.unsupported[l.Name] = err
				continue
			}
			later = append(later, l)
		default:
			pl, err := p.setupLanguage(ctx, l)
			if err != nil {
				return fmt.Errorf("sandbox: %s: %w", l.Name, err)
			}
			p.langs[l.Name] = pl
		}
	}
	if len(later) > 0 && p.launcher == "" {
		// The slots' executors start with the pool: the launcher of
		// exec'd programs cannot wait for the probes.
		launcher, err := buildLauncher(ctx, p.cfg.CacheDir)
		if err != nil {
			for _, l := range later {
				p.unsupported[l.Name] = err
			}
			later = nil
		}
		p.launcher = launcher
	}
	for _, l := range later {
		p.pending[l.Name] = &pendingLanguage{lang: l, done: make(chan struct{})}
		p.probeOrder = append(p.probeOrder, l.Name)
	}
	p.readOnly = p.readPaths(later)
	return nil
}

// admit checks that l can run in this pool, as far as that costs nothing
// (its toolchain is installed, the pool bounds its memory), and fixes how
// its memory is bounded.
func (p *Pool) admit(l *Language) error {
	if err := l.Available(); err != nil {
		return err
	}
	if l.InProcess {
		return nil
	}
	if l.Memory == Cgroup && !p.cfg.Unsafe && p.cg == nil {
		return fmt.Errorf("its memory is bounded by the slot's cgroup, and there is none: %v", p.cgErr)
	}
	if l.Memory == Resident && (p.cfg.Unsafe || p.cg == nil) {
		l.Memory = AddressSpace
	}
	return nil
}

// setupLanguage admits l and builds what it needs once per machine.
func (p *Pool) setupLanguage(ctx context.Context, l *Language) (*poolLanguage, error) {
	if l.Name == "python" {
		// The interpreter the fork servers run.
		l.Toolchain = []string{p.cfg.Python}
	}
	if err := p.admit(l); err != nil {
		return nil, err
	}
	pl := &poolLanguage{Language: l}
	if l.InProcess {
		return pl, nil
	}
	if p.launcher == "" {
		launcher, err := buildLauncher(ctx, p.cfg.CacheDir)
		if err != nil {
			return nil, err
		}
		p.launcher = launcher
	}
	return pl, p.prepare(ctx, pl)
}

// prepare builds, once per machine, what the admitted language l needs
// besides the launcher: its compiler's class-data archive, the main
// thread's stack library, precompiled headers, a warm build cache.
func (p *Pool) prepare(ctx context.Context, l *poolLanguage) error {
	if l.CompilerArchive {
		archive, err := buildCompilerArchive(ctx, p.cfg.CacheDir, l.Language)
		if err != nil {
			return err
		}
		l.archive = archive
	}
	if l.MainStack {
		lib, err := buildMainStack(ctx, p.cfg.CacheDir)
		if err != nil {
			return err
		}
		l.preload = lib
	}
	if len(l.PrecompiledHeaders) > 0 {
		dir, err := buildPCH(ctx, p.cfg.CacheDir, l.Language)
		if err != nil {
			return err
		}
		l.pch = dir
	}
	if l.CacheEnv != "" {
		dir, err := warmCache(ctx, p.cfg.CacheDir, l.Language)
		if err != nil {
			return err
		}
		l.env = []string{l.CacheEnv + "=" + dir}
	}
	return nil
}

// readPaths are the host paths the sandbox may read besides the system's:
// the cache directory and the toolchains' configuration, of the languages
// set up and of those pending (later).
func (p *Pool) readPaths(later []*Language) []string {
	var paths []string
	if p.launcher != "" {
		paths = append(paths, p.cfg.CacheDir)
	}
	for _, name := range slices.Sorted(maps.Keys(p.langs)) {
		paths = append(paths, p.langs[name].ReadPaths...)
	}
	for _, l := range later {
		paths = append(paths, l.ReadPaths...)
	}
	return paths
}

// Languages lists the languages the pool runs, by name: those whose probe
// passed. It grows while languages are pending (Probing).
func (p *Pool) Languages() []string {
	p.langMu.Lock()
	defer p.langMu.Unlock()
	return slices.Sorted(maps.Keys(p.langs))
}

// Probing lists the languages whose probe has not ended yet, by name: each
// then moves to Languages, or is left out with the reason Supports gives.
func (p *Pool) Probing() []string {
	p.langMu.Lock()
	defer p.langMu.Unlock()
	return slices.Sorted(maps.Keys(p.pending))
}

// Supports says whether the pool runs programs in language (a name or an
// alias of Languages), and if not, why. It does not wait: a language still
// being probed (Probing) is supported until its probe fails.
func (p *Pool) Supports(language string) error {
	l, err := LookupLanguage(cmp.Or(language, "python"))
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	p.langMu.Lock()
	defer p.langMu.Unlock()
	if p.langs[l.Name] != nil || p.pending[l.Name] != nil {
		return nil
	}
	return fmt.Errorf("sandbox: this pool does not run %s: %w", l.Name, p.unsupported[l.Name])
}

// Await waits until the probe of each of languages (names or aliases of
// Languages) has ended, as long as ctx allows, and returns why the pool
// does not run those it does not. A language under probe is taken before
// the others.
func (p *Pool) Await(ctx context.Context, languages ...string) error {
	var errs []error
	for _, name := range languages {
		if _, err := p.language(ctx, name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// language finds a language the pool runs by name or alias ("" is
// python), waiting for its probe if it is pending, as long as ctx allows
// and the pool is open; the language's probe then goes before the other
// languages' that have not started (with Config.ProbeOnDemand, it starts).
func (p *Pool) language(ctx context.Context, name string) (*poolLanguage, error) {
	l, err := LookupLanguage(cmp.Or(name, "python"))
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	p.langMu.Lock()
	pending := p.pending[l.Name]
	onDemand := false
	if i := slices.Index(p.probeOrder, l.Name); i >= 0 {
		// Not taken by a prober yet.
		if p.cfg.ProbeOnDemand {
			p.probeOrder = slices.Delete(p.probeOrder, i, i+1)
			onDemand = true
		} else {
			p.probeOrder = slices.Insert(slices.Delete(p.probeOrder, i, i+1), 0, l.Name)
		}
	}
	p.langMu.Unlock()
	if onDemand {
		p.probeOnDemand(l.Name)
	}
	if pending != nil {
		select {
		case <-pending.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("sandbox: waiting for the %s probe: %w", l.Name, ctx.Err())
		case <-p.done:
			return nil, errClosed
		}
	}
	p.langMu.Lock()
	defer p.langMu.Unlock()
	if pl, ok := p.langs[l.Name]; ok {
		return pl, nil
	}
	return nil, fmt.Errorf("sandbox: this pool does not run %s: %w", l.Name, p.unsupported[l.Name])
}

// validate checks job against its language and returns the language.
func (p *Pool) validate(ctx context.Context, j *Job) (*poolLanguage, error) {
	lang, err := p.language(ctx, j.Language)
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
	case j.Style == Assert && (j.Files != nil || j.FetchFiles != nil):
		return nil, errors.New("an assert job takes no Files or FetchFiles")
	case j.Style != Assert && (j.Prompt != "" || j.Helpers != ""):
		return nil, errors.New("a Prompt and Helpers are for assert jobs")
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
	input := len(j.Code)
	for _, in := range j.Inputs {
		input += len(in)
	}
	if j.Build != nil {
		input += j.Build.Size()
	}
	for name, data := range j.Files {
		if err := CheckFileName(name); err != nil {
			return nil, err
		}
		input += len(data)
	}
	for _, files := range j.TestFiles {
		for _, data := range files {
			input += len(data)
		}
	}
	if err := checkFetchFiles(j.FetchFiles); err != nil {
		return nil, err
	}
	if input > MaxInputMB<<20 {
		return nil, fmt.Errorf("the job's program, stdin and files come to %d bytes, over the %d MiB one job may take (sandbox.MaxInputMB)", input, MaxInputMB)
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
func env(l *poolLanguage, compiler bool) []string {
	lang := "LANG=C.UTF-8"
	if compiler {
		lang = "LC_ALL=C"
	}
	e := append([]string{"PATH=/usr/bin:/bin", lang, "HOME=" + workDir, "TMPDIR=" + workDir}, l.Env...)
	e = append(e, l.env...)
	if l.preload != "" {
		e = append(e, "LD_PRELOAD="+l.preload)
	}
	return e
}

// request is the harness's request for job in slot s.
func (p *Pool) request(s *slot, lang *poolLanguage, j Job) (*request, error) {
	uid := s.uid
	if j.Judge {
		uid = s.judge
	}
	req := &request{
		Style: j.Style, Code: j.Code, Inputs: j.Inputs, Test: j.Test, Entry: j.EntryPoint, Prompt: j.Prompt, Helpers: j.Helpers, UID: uid,
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
	req.Launcher, req.Env, req.Markers = p.launcher, env(lang, false), lang.MemoryMarkers

	source := j.Code
	if lang.Compiled() {
		source = j.Build.source
		req.Files = append(req.Files, j.Build.files...)
	} else {
		req.Files = append(req.Files, wireFile{Name: lang.SourceName(source), Data: lang.sourceFile(source), Mode: 0o600})
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
	if !l.Compiled() && l.ProgramKB > 0 {
		t.FileSize = int64(l.ProgramKB) << 10 // a runner that builds as it runs
	}
	return t
}

// compileIn compiles job's program in slot s.
func (p *Pool) compileIn(ctx context.Context, s *slot, lang *poolLanguage, job CompileJob) (*Build, error) {
	req, err := p.compileRequest(s, lang, job)
	if err != nil {
		return nil, err
	}
	rep, cgOOM, err := p.roundTrip(ctx, s, req, job.Limits, lang.Memory == Resident)
	if err != nil {
		return nil, err
	}
	if len(rep.Tests) != 1 {
		return nil, fmt.Errorf("fork server answered %d tests of 1", len(rep.Tests))
	}
	return buildOf(lang, job, rep, cgOOM)
}

// compileArgv is the compiler's command line for job's program.
func compileArgv(lang *poolLanguage, job CompileJob) []string {
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
	if lang.archive != "" {
		argv = slices.Insert(argv, 1, "-J-XX:SharedArchiveFile="+lang.archive)
	}
	return argv
}

// compileRequest is the fork server's request to compile job's program in
// slot s: the compiler's command line, the source and job's other files.
func (p *Pool) compileRequest(s *slot, lang *poolLanguage, job CompileJob) (*request, error) {
	src := lang.SourceName(job.Source)
	argv := compileArgv(lang, job)
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
		Launcher: p.launcher, Env: env(lang, true), Collect: lang.Artefacts, Keep: true,
		Markers: compileMemoryMarkers, TimeMarkers: compileTimeMarkers, Back: maxCompilerOutput,
		Files: []wireFile{{Name: src, Data: lang.sourceFile(job.Source), Mode: 0o600}},
		Tests: []wireTest{p.wireTest(lang.Language, argv, lim, lim.CPUSeconds, lim.WallSeconds)},
	}
	req.Tests[0].Output = compilerOutputKB << 10
	req.Tests[0].FileSize = int64(lang.ProgramKB) << 10
	req.Limits.Total = 2 * compilerOutputKB << 10
	for _, name := range slices.Sorted(maps.Keys(job.Files)) {
		if err := CheckFileName(name); err != nil {
			return nil, err
		}
		req.Files = append(req.Files, wireFile{Name: name, Data: job.Files[name], Mode: 0o600})
	}
	return req, nil
}

// buildOf is the build the executor's reply to a compile request
// describes; cgOOM says whether the slot's cgroup ran out of memory.
func buildOf(lang *poolLanguage, job CompileJob, rep *reply, cgOOM bool) (*Build, error) {
	f := rep.Tests[0]
	tr, _, err := judge(f, compileLimit(lang, job.Limits), cgOOM)
	if err != nil {
		return nil, fmt.Errorf("sandbox: compile %s: %w", lang.Name, err)
	}
	b := &Build{
		Language: lang.Name, source: job.Source, Detail: tr.Detail,
		CPU: tr.CPU, Wall: tr.Wall, ExitCode: tr.ExitCode,
	}
	out := string(f.Stdout) + string(f.Stderr)
	if len(out) > maxCompilerOutput {
		out = out[:maxCompilerOutput]
	}
	b.Output = out
	switch tr.Status {
	case Ran:
		if len(rep.Files) == 0 {
			b.Status, b.Detail = Failed, "the compiler made no program"
		} else {
			b.Status, b.files, b.loadBytes = Passed, rep.Files, loadBytes(rep.Files)
		}
	case RuntimeError:
		b.Status = Failed
	case Output:
		b.Status, b.Detail = Output, fmt.Sprintf("the compiler wrote more than %d KB of messages", compilerOutputKB)
	case Timeout, Memory, Crashed:
		b.Status = tr.Status
	default:
		return nil, fmt.Errorf("sandbox: compile: verdict %q", tr.Status)
	}
	return b, nil
}

// compileLimit is what judge needs of a compile's limits.
func compileLimit(lang *poolLanguage, lim Limits) testLimit {
	return testLimit{
		style: IO, cpu: lim.CPUSeconds, wall: lim.WallSeconds, output: compilerOutputKB << 10,
		totalKB: compilerOutputKB * 2, submission: lim, program: lang.Compile[0],
		memoryMarks: compileMemoryMarkers, timeMarks: compileTimeMarkers,
	}
}

// What a compiler's messages say when it ran out of memory, or when the
// CPU limit killed the compiler proper under its driver (g++ then exits 4).
var (
	compileMemoryMarkers = []string{"out of memory", "virtual memory exhausted", "Cannot allocate memory"}
	compileTimeMarkers   = []string{"CPU time limit exceeded signal terminated program"}
)

// compilerOutputKB bounds what a compiler may write, on each of stdout
// and stderr: a compile that writes more (a diagnostic bomb: recursive
// templates, a constexpr loop) is stopped there and fails to compile.
// Only the first maxCompilerOutput bytes of it come back.
const compilerOutputKB = 1024

// result judges the reply to job, one fact per test; cgOOM says the
// kernel killed a process of the slot for memory during the job.
func (j Job) result(rep *reply, lang *poolLanguage, cgOOM bool) (Result, error) {
	want := 1
	if j.Style == IO {
		want = len(j.Inputs)
	}
	if len(rep.Tests) != want {
		return Result{}, fmt.Errorf("fork server answered %d tests of %d", len(rep.Tests), want)
	}
	res := Result{Tests: make([]TestResult, want), Elapsed: seconds(rep.Seconds), SlotTime: seconds(rep.Slot), Output: rep.Output}
	tl := j.testLimit(lang)
	for k, f := range rep.Tests {
		r, over, err := judge(f, tl, cgOOM)
		if err != nil {
			return Result{}, err
		}
		if j.KeepOutput {
			r.Stdout, r.Stderr = f.Stdout, f.Stderr
		}
		if r.Status == Ran {
			switch {
			case j.Check == nil:
				r.Stdout = f.Stdout
			case j.Check(k, f.Stdout):
				r.Status = Passed
			default:
				r.Status, r.Detail = Failed, "wrong output"
			}
		}
		res.OverOutput = res.OverOutput || over
		res.Tests[k] = r
	}
	return res, nil
}

// testLimit is what judge needs of j's limits.
func (j *Job) testLimit(lang *poolLanguage) testLimit {
	cpu, wall := j.testLimits()
	tl := testLimit{
		style: j.Style, cpu: cpu, wall: wall, output: int64(j.Limits.OutputKB) << 10,
		totalKB: int(j.Limits.totalOutput() >> 10), submission: j.Limits, perTestCPU: j.TestCPUSeconds > 0,
		memoryMarks: lang.MemoryMarkers, runner: lang.Runner,
	}
	if j.Style == Assert {
		tl.cpu = j.Limits.CPUSeconds
	}
	if lang.Memory == Resident {
		tl.residentKB = int64(j.Limits.MemoryMB) << 10
	}
	if !lang.InProcess {
		tl.program = lang.runArgv("", 0)[0]
	}
	return tl
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
	if lang.Memory == Cgroup || job.Build == nil || job.Build.loadBytes <= limit {
		return Result{}, false
	}
	res.Tests = make([]TestResult, len(job.Inputs))
	for k := range res.Tests {
		res.Tests[k] = TestResult{Status: Memory, ExitCode: -1,
			Detail: fmt.Sprintf("the program needs %d MB before it starts (its static data), the memory limit is %d MB", job.Build.loadBytes>>20, job.Limits.MemoryMB)}
	}
	return res, true
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
