package validate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// UntrustedCodeLabel marks the pods that run model-written programs (the
// code_exec replicas), on the pod template and the Deployment. It is what
// tells the two kinds of replica apart, for Pod Security exemptions, node
// placement and NetworkPolicies, and for these checks.
const UntrustedCodeLabel = "rewardd/untrusted-code"

// CodeExecCapabilities are the capabilities a code_exec replica holds, no
// more and no fewer: without any one of them the sandbox fails its start-up
// probe or its first program that forks (each was taken away in turn, on a
// read-only root with the runtime's default seccomp profile).
var CodeExecCapabilities = map[string]string{
	"SYS_ADMIN":    "new namespaces (clone with CLONE_NEW*), the mounts of the private /proc and /tmp, sethostname",
	"SETUID":       "setresuid to the slot's unprivileged uid",
	"SETGID":       "setgroups and setresgid to the slot's gid",
	"KILL":         "kill(-1) by the fork server, PID 1 of the sandbox, of a program's processes, which run under another uid",
	"DAC_OVERRIDE": "emptying the work dir of what a program left, in directories of another uid",
	"FOWNER":       "chmod of the program's directories before removing them",
	"CHOWN":        "handing the work dir to the next program's uid",
}

// SlotServersMiB is the resident memory of one slot's idle servers: its
// Python runner and zygote and its executor (measured 21.4, 23.7 and 21.9
// MiB with Debian's python3.11, the modules the harness preloads, and the
// rewardd binary), rounded up.
const SlotServersMiB = 70

// SandboxPython is the interpreter the code-exec image provides: Debian's
// python3 package, which deploy/Dockerfile's code-exec stage installs, puts
// it there.
const SandboxPython = "/usr/bin/python3"

// SandboxFacts are what a code_exec Deployment must agree with in
// scorers/codeexec/sandbox.
type SandboxFacts struct {
	// DefaultMemoryMB is DefaultLimits().MemoryMB: the address space of a
	// submission whose function sets no limits.memory_mb.
	DefaultMemoryMB int
	// TmpfsMiB is the size of the private tmpfs each slot mounts on /tmp;
	// what programs write there is charged to the pod's memory.
	TmpfsMiB int
	// Arch is the only architecture the sandbox's seccomp filter admits, as
	// kubernetes.io/arch names it.
	Arch string
	// Results are the values of rewardd_sandbox_executions_total's result
	// label.
	Results []string
}

var tmpfsSize = regexp.MustCompile(`(?:^|,)size=([0-9]+)([kmg]?)(?:,|$)`)

// ReadSandboxFacts parses scorers/codeexec/sandbox under root: job.go's
// DefaultLimits, confine_linux.go's tmpfs mount and architecture filter,
// and metrics.go's executionResults.
func ReadSandboxFacts(root string) (*SandboxFacts, error) {
	dir := filepath.Join(root, "scorers", "codeexec", "sandbox")
	parse := func(name string) (*ast.File, string, error) {
		path := filepath.Join(dir, name)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		return f, path, err
	}
	facts := &SandboxFacts{}

	f, path, err := parse("job.go")
	if err != nil {
		return nil, err
	}
	if facts.DefaultMemoryMB = defaultMemoryMB(f); facts.DefaultMemoryMB <= 0 {
		return nil, fmt.Errorf("%s: found no DefaultLimits() with a literal MemoryMB; update ReadSandboxFacts", path)
	}

	f, path, err = parse("confine_linux.go")
	if err != nil {
		return nil, err
	}
	facts.TmpfsMiB, facts.Arch = confinement(f)
	if facts.TmpfsMiB <= 0 {
		return nil, fmt.Errorf("%s: found no tmpfsMB constant nor unix.Mount(…, \"/tmp\", \"tmpfs\", …, \"size=…\"); update ReadSandboxFacts", path)
	}
	if facts.Arch == "" {
		return nil, fmt.Errorf("%s: found no auditArchX8664 (the architecture the seccomp filter admits); update ReadSandboxFacts", path)
	}

	f, path, err = parse("metrics.go")
	if err != nil {
		return nil, err
	}
	if facts.Results = executionResults(f); len(facts.Results) == 0 {
		return nil, fmt.Errorf("%s: found no executionResults = []string{…}; update ReadSandboxFacts", path)
	}
	return facts, nil
}

// defaultMemoryMB is the literal MemoryMB in job.go's DefaultLimits, 0 if
// there is none.
func defaultMemoryMB(f *ast.File) int {
	mb := 0
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != "DefaultLimits" || fd.Body == nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if kv, ok := n.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "MemoryMB" {
					if lit, ok := kv.Value.(*ast.BasicLit); ok && lit.Kind == token.INT {
						mb, _ = strconv.Atoi(lit.Value)
					}
				}
			}
			return true
		})
	}
	return mb
}

// confinement reads confine_linux.go's /tmp size in MiB (a tmpfsMB
// constant or the size= of its tmpfs mount) and the architecture its
// seccomp filter admits; zero values for what it does not find.
func confinement(f *ast.File) (tmpfsMiB int, arch string) {
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Mount" || len(n.Args) != 5 {
				return true
			}
			target, _ := stringLit(n.Args[1])
			fstype, _ := stringLit(n.Args[2])
			data, _ := stringLit(n.Args[4])
			if target != "/tmp" || fstype != "tmpfs" {
				return true
			}
			if m := tmpfsSize.FindStringSubmatch(data); m != nil {
				v, _ := strconv.ParseInt(m[1], 10, 64)
				shift := map[string]uint{"": 0, "k": 10, "m": 20, "g": 30}[m[2]]
				tmpfsMiB = int((v<<shift + 1<<20 - 1) >> 20) // rounded up to a MiB
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if id.Name == "auditArchX8664" {
					arch = "amd64"
				}
				if id.Name == "tmpfsMB" && i < len(n.Values) {
					if lit, ok := n.Values[i].(*ast.BasicLit); ok && lit.Kind == token.INT {
						tmpfsMiB, _ = strconv.Atoi(lit.Value)
					}
				}
			}
		}
		return true
	})
	return tmpfsMiB, arch
}

// executionResults is the string elements of metrics.go's executionResults.
func executionResults(f *ast.File) []string {
	var results []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, id := range vs.Names {
			if id.Name != "executionResults" || i >= len(vs.Values) {
				continue
			}
			if cl, ok := vs.Values[i].(*ast.CompositeLit); ok {
				for _, e := range cl.Elts {
					if v, ok := stringLit(e); ok {
						results = append(results, v)
					}
				}
			}
		}
		return true
	})
	return results
}

// Stage is one stage of a Dockerfile.
type Stage struct {
	Name         string   // after AS, lower-cased; "" when unnamed
	From         string   // the base image
	Instructions []string // the stage's instructions after FROM, continuation lines joined
}

// ReadDockerfile splits a Dockerfile into its stages.
func ReadDockerfile(path string) ([]Stage, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var stages []Stage
	var cur strings.Builder
	flush := func() error {
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if line == "" {
			return nil
		}
		fields := strings.Fields(line)
		if strings.EqualFold(fields[0], "FROM") {
			st := Stage{}
			args := fields[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "--") {
				args = args[1:]
			}
			if len(args) == 0 {
				return fmt.Errorf("%s: FROM without an image", path)
			}
			st.From = args[0]
			if len(args) == 3 && strings.EqualFold(args[1], "AS") {
				st.Name = strings.ToLower(args[2])
			}
			stages = append(stages, st)
			return nil
		}
		if len(stages) == 0 {
			if strings.EqualFold(fields[0], "ARG") {
				return nil
			}
			return fmt.Errorf("%s: %s before the first FROM", path, fields[0])
		}
		stages[len(stages)-1].Instructions = append(stages[len(stages)-1].Instructions, line)
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "#") || (t == "" && cur.Len() == 0) {
			continue
		}
		if strings.HasSuffix(strings.TrimRight(line, " \t"), "\\") {
			cur.WriteString(strings.TrimSuffix(strings.TrimRight(line, " \t"), "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(line)
		if err := flush(); err != nil {
			return nil, err
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return stages, sc.Err()
}

// User is the stage's last USER, "" when it sets none.
func (st Stage) User() string {
	user := ""
	for _, in := range st.Instructions {
		if f := strings.Fields(in); len(f) == 2 && strings.EqualFold(f[0], "USER") {
			user = f[1]
		}
	}
	return user
}

// ImageSteps is the script whose steps deploy/Dockerfile RUNs: the one
// place that names the images' packages and the build's flags.
const ImageSteps = "deploy/build-image-steps.sh"

// Runs says whether a RUN of the stage runs ImageSteps' step (its first
// argument, as a word: "build" is not "build-deps").
func (st Stage) Runs(step string) bool {
	for _, in := range st.Instructions {
		f := strings.Fields(in)
		if len(f) == 0 || !strings.EqualFold(f[0], "RUN") {
			continue
		}
		for i, w := range f[:len(f)-1] {
			if strings.HasSuffix(w, ImageSteps) && f[i+1] == step {
				return true
			}
		}
	}
	return false
}

// BuildsOrInstalls returns the stage's RUN instructions that install
// packages or build Go code themselves, not through ImageSteps: a second
// source of what the image holds.
func (st Stage) BuildsOrInstalls() []string {
	var out []string
	for _, in := range st.Instructions {
		f := strings.Fields(in)
		if len(f) == 0 || !strings.EqualFold(f[0], "RUN") {
			continue
		}
		if strings.Contains(in, "apt-get install") || strings.Contains(in, "go build") || strings.Contains(in, "go install") {
			out = append(out, in)
		}
	}
	return out
}

// ImagePackages is what ImageSteps' step installs ("build", "code-exec"),
// as the script itself says (`build-image-steps.sh packages STEP`, run in
// root).
func ImagePackages(root, step string) ([]string, error) {
	cmd := exec.Command("bash", ImageSteps, "packages", step)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("%s packages %s: %v: %s", ImageSteps, step, err, ee.Stderr)
		}
		return nil, fmt.Errorf("%s packages %s: %w", ImageSteps, step, err)
	}
	return strings.Fields(string(out)), nil
}

// checkCodeExec: what code execution depends on beyond privileges. Every
// replica: no --unsafe-no-sandbox. String-scoring replicas: no code_exec
// function (they cannot start the sandbox, so every code_exec rollout would
// be ERROR). code_exec replicas: at least one (else the privileges are for
// nothing), the image's Python, and memory for every slot.
func (s *set) checkCodeExec(d *appsv1.Deployment, pod *corev1.PodSpec, ct *corev1.Container, volumes map[string]*corev1.Volume, flags map[string]string) {
	const kind = "Deployment"
	where := "container " + ct.Name
	if flags == nil {
		return // checkRewarddArgs said why
	}
	if v, ok := flags["unsafe-no-sandbox"]; ok && v != "false" {
		s.errorf(d, kind, "%s: --unsafe-no-sandbox runs model-written programs with no isolation, as the container's user with its network: development only, never deployed", where)
	}
	cfg, err := s.servedConfig(ct, volumes, flags["config"])
	if err != nil {
		s.errorf(d, kind, "%s: --config=%s: %v", where, flags["config"], err)
		return
	}
	var code []configFunction
	for _, f := range cfg.Functions {
		if f.Kind == "code_exec" {
			code = append(code, f)
		}
	}
	if !s.CodeExec {
		if len(code) > 0 {
			s.errorf(d, kind, "%s: the config has code_exec functions (%s) but this replica is unprivileged: its sandbox cannot start and every code_exec rollout would be scored ERROR; serve them from deploy/kubernetes-code-exec", where, names(code))
		}
		return
	}
	if len(code) == 0 {
		s.errorf(d, kind, "%s: the config has no code_exec function: the sandbox never starts, and this replica holds root and SYS_ADMIN for nothing", where)
	}
	python, ok := flags["sandbox-python"]
	if !ok {
		python = s.Serve.Defaults["sandbox-python"]
	}
	if python != SandboxPython {
		s.errorf(d, kind, "%s: --sandbox-python %q: the code-exec image (deploy/Dockerfile, target code-exec) has Debian's python3 at %s", where, python, SandboxPython)
	}
	s.checkSandboxMemory(d, ct, flags, code)
}

// checkSandboxMemory: the memory limit holds Go's heap (GOMEMLIMIT) and per
// sandbox slot a fork server, one submission's address space (the largest
// memory_mb of the code functions) and its private /tmp.
func (s *set) checkSandboxMemory(d *appsv1.Deployment, ct *corev1.Container, flags map[string]string, code []configFunction) {
	const kind = "Deployment"
	where := "container " + ct.Name
	slots, why, ok := s.sandboxSlots(d, ct, flags)
	if !ok {
		return
	}
	memMB := s.Sandbox.DefaultMemoryMB
	for i, f := range code {
		m := s.Sandbox.DefaultMemoryMB
		if f.Limits != nil && f.Limits.MemoryMB != nil {
			m = *f.Limits.MemoryMB
		}
		if i == 0 || m > memMB {
			memMB = m
		}
	}
	var goMem int64 = -1
	for _, e := range ct.Env {
		if e.Name == "GOMEMLIMIT" {
			goMem, _ = parseGoMemLimit(e.Value)
		}
	}
	if goMem < 0 {
		s.errorf(d, kind, "%s: no GOMEMLIMIT: without it Go's heap may grow into the memory the sandbox's programs need", where)
		return
	}
	lim, ok := ct.Resources.Limits[corev1.ResourceMemory]
	if !ok {
		return
	}
	perSlot := int64(SlotServersMiB+memMB+s.Sandbox.TmpfsMiB) << 20
	need := goMem + int64(slots)*perSlot
	if lim.Value() < need {
		s.errorf(d, kind, "%s: limits.memory %s (%d MiB) < %d MiB = GOMEMLIMIT %d MiB + %d slots (%s) × (slot servers %d + memory_mb %d + /tmp tmpfs %d) MiB: a busy replica would be OOM-killed",
			where, lim.String(), lim.Value()>>20, need>>20, goMem>>20, slots, why, SlotServersMiB, memMB, s.Sandbox.TmpfsMiB)
	}
}

// sandboxSlots is how many sandbox slots serve runs, and what sets it:
// --sandbox-slots, --workers, or the CPU limit; ok false when it cannot be
// told (the error reported here or by checkContainer).
func (s *set) sandboxSlots(d *appsv1.Deployment, ct *corev1.Container, flags map[string]string) (slots int, why string, ok bool) {
	const kind = "Deployment"
	where := "container " + ct.Name
	for _, f := range []string{"sandbox-slots", "workers"} {
		if v, ok := flags[f]; ok && slots == 0 {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				s.errorf(d, kind, "%s: --%s=%s: not a count", where, f, v)
				return 0, "", false
			}
			slots, why = n, "--"+f
		}
	}
	if slots == 0 {
		cpu, ok := ct.Resources.Limits[corev1.ResourceCPU]
		if !ok {
			return 0, "", false // checkContainer said so
		}
		// Go sets GOMAXPROCS (--workers' default, and so the slots') to the
		// CPU limit rounded up, at least 2 (runtime/cgroup_linux.go).
		slots, why = max(2, int((cpu.MilliValue()+999)/1000)), "the CPU limit "+cpu.String()
	}
	return slots, why, true
}

// servedConfig is what checkCodeExec reads of a served config.
type servedConfig struct {
	Functions []configFunction `json:"functions"`
}

// configFunction is what checkCodeExec reads of a served config's function.
type configFunction struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Limits *struct {
		MemoryMB *int `json:"memory_mb"`
	} `json:"limits"`
}

func names(fs []configFunction) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return strings.Join(out, ", ")
}

// servedConfig decodes the config file p as the container sees it: the
// ConfigMap key projected at that path of a mounted configMap volume.
func (s *set) servedConfig(ct *corev1.Container, volumes map[string]*corev1.Volume, p string) (*servedConfig, error) {
	for _, m := range ct.VolumeMounts {
		rel, ok := strings.CutPrefix(p, strings.TrimSuffix(m.MountPath, "/")+"/")
		if !ok {
			continue
		}
		v := volumes[m.Name]
		if v == nil || v.ConfigMap == nil {
			return nil, fmt.Errorf("not on a configMap volume")
		}
		key := rel
		if len(v.ConfigMap.Items) > 0 {
			key = ""
			for _, it := range v.ConfigMap.Items {
				if it.Path == rel {
					key = it.Key
				}
			}
		}
		cm := s.configMaps[v.ConfigMap.Name]
		if cm == nil {
			return nil, fmt.Errorf("ConfigMap %s is not among the objects", v.ConfigMap.Name)
		}
		text, ok := cm.Data[key]
		if !ok {
			return nil, fmt.Errorf("ConfigMap %s has no key %q", cm.Name, key)
		}
		var cfg servedConfig
		if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
			return nil, fmt.Errorf("ConfigMap %s key %s: %w", cm.Name, key, err)
		}
		return &cfg, nil
	}
	return nil, fmt.Errorf("no volume is mounted there")
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
