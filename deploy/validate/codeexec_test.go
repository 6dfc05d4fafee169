package validate

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// What `kubectl apply -k deploy/kubernetes-code-exec` would create passes
// every check, code_exec's included, and is the base made to run code: its
// own names and selectors, the code-exec image, the overlay's config.
func TestCodeExecBuildPassesChecks(t *testing.T) {
	objs := buildCode(t)
	for _, o := range objs {
		t.Logf("rendered %s/%s %s", o.GVK.GroupVersion(), o.GVK.Kind, o.Name)
	}
	c := codeChecker(t)
	t.Logf("sandbox: %+v", *c.Sandbox)
	for _, err := range c.Check(objs) {
		t.Error(err)
	}

	base := build(t)
	checkBesideBase(t, base, objs)

	// The image is the code-exec one (Python inside), not the base's.
	d := find[*appsv1.Deployment](t, objs, "rewardd-code-exec")
	baseD := find[*appsv1.Deployment](t, base, "rewardd")
	k, err := ReadKustomization(codeDir)
	if err != nil {
		t.Fatal(err)
	}
	img := d.Spec.Template.Spec.Containers[0].Image
	if len(k.Images) != 1 || k.Images[0].Name != "rewardd-code-exec" {
		t.Fatalf("kustomization.yaml images %+v, want one, for rewardd-code-exec", k.Images)
	}
	if want := k.Images[0].NewName + ":" + k.Images[0].NewTag; img != want {
		t.Errorf("image %q, want %q: the patch's image or kustomization.yaml's images: did not apply", img, want)
	}
	if img == baseD.Spec.Template.Spec.Containers[0].Image {
		t.Errorf("image %q is the base's, which has no Python: point it at deploy/Dockerfile's code-exec target", img)
	}

	// The config served is the overlay's, whole.
	want, err := os.ReadFile(filepath.Join(codeDir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cm := configMap(t, objs)
	if !strings.HasPrefix(cm.Name, "rewardd-config-code-exec-") {
		t.Errorf("ConfigMap %s: want the generated, hash-suffixed rewardd-config-code-exec-…", cm.Name)
	}
	if cm.Data["config.yaml"] != string(want) {
		t.Errorf("ConfigMap %s config.yaml is not deploy/kubernetes-code-exec/config.yaml", cm.Name)
	}
}

// checkBesideBase: with the string-scoring replicas (base) in one
// namespace, the code-exec ones (objs) collide in no name, and neither's
// selectors reach the other's pods.
func checkBesideBase(t *testing.T, base, objs []Object) {
	t.Helper()
	names := map[string]bool{}
	for _, o := range base {
		names[o.GVK.Kind+"/"+o.Name] = true
	}
	for _, o := range objs {
		if names[o.GVK.Kind+"/"+o.Name] {
			t.Errorf("%s %s is also a name of deploy/kubernetes: applying both to one namespace would overwrite it", o.GVK.Kind, o.Name)
		}
	}
	together := append(slices.Clone(base), objs...)
	both := checker(t) // only the selector checks matter here
	s := &set{Checker: both, objs: together}
	s.index()
	for _, o := range together {
		var sel map[string]string
		switch v := o.Value.(type) {
		case *corev1.Service:
			sel = v.Spec.Selector
		default:
			continue
		}
		n := 0
		for _, d := range s.deployments {
			match := true
			for k, want := range sel {
				match = match && d.Spec.Template.Labels[k] == want
			}
			if match {
				n++
			}
		}
		if n != 1 {
			t.Errorf("Service %s selects the pods of %d Deployments of the two directories, want 1", o.Name, n)
		}
	}
}

// The overlay directory holds its kustomization, the files it reads and
// nothing else, and builds on the base.
func TestCodeExecKustomizationFiles(t *testing.T) {
	k, err := ReadKustomization(codeDir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(k.Resources, []string{"../kubernetes"}) {
		t.Errorf("resources %v, want [../kubernetes]: the code-exec replicas are the base with a patch", k.Resources)
	}
	used := map[string]bool{"kustomization.yaml": true}
	for _, g := range k.ConfigMapGenerator {
		for _, f := range g.FileSources {
			used[f] = true
		}
	}
	for _, p := range k.Patches {
		if p.Path == "" {
			t.Errorf("inline patch: keep patches in files, which the comments there explain")
		}
		used[p.Path] = true
		data, err := os.ReadFile(filepath.Join(codeDir, p.Path))
		if err != nil {
			t.Fatal(err)
		}
		// A patch is a partial Deployment: it must decode as one, strictly.
		if _, err := Decode(p.Path, data); err != nil {
			t.Error(err)
		}
	}
	entries, err := os.ReadDir(codeDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !used[e.Name()] {
			t.Errorf("%s: not used by kustomization.yaml", e.Name())
		}
	}
}

// The code_exec checks have teeth: each privilege too many or too few, and
// each broken dependency of the sandbox, is caught by the check meant.
func TestCodeExecChecksCatchMistakes(t *testing.T) {
	c := codeChecker(t)
	if errs := c.Check(buildCode(t)); len(errs) > 0 {
		t.Fatalf("the unchanged manifests fail: %v", errs)
	}
	dep := func(objs []Object) *appsv1.Deployment { return find[*appsv1.Deployment](t, objs, "rewardd-code-exec") }
	rewardd := func(objs []Object) *corev1.Container { return &dep(objs).Spec.Template.Spec.Containers[0] }
	sc := func(objs []Object) *corev1.SecurityContext { return rewardd(objs).SecurityContext }
	cases := []mistake{
		{"privileged", func(o []Object) { sc(o).Privileged = ptr(true) }, "privileged"},
		{"a capability too many", func(o []Object) {
			sc(o).Capabilities.Add = append(sc(o).Capabilities.Add, "NET_ADMIN")
		}, "capabilities.add NET_ADMIN: not one the sandbox needs"},
		{"a capability too few", func(o []Object) {
			sc(o).Capabilities.Add = slices.DeleteFunc(sc(o).Capabilities.Add, func(c corev1.Capability) bool { return c == "KILL" })
		}, "capabilities.add lacks KILL"},
		{"CAP_ spelling", func(o []Object) { sc(o).Capabilities.Add[0] = "CAP_SYS_ADMIN" }, "without CAP_"},
		{"capabilities not dropped", func(o []Object) { sc(o).Capabilities.Drop = nil }, "capabilities.drop must hold ALL"},
		{"privilege escalation", func(o []Object) { sc(o).AllowPrivilegeEscalation = ptr(true) }, "allowPrivilegeEscalation"},
		{"writable root filesystem", func(o []Object) { sc(o).ReadOnlyRootFilesystem = ptr(false) }, "readOnlyRootFilesystem"},
		{"seccomp unconfined", func(o []Object) {
			sc(o).SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}, "seccompProfile Unconfined"},
		{"default AppArmor profile", func(o []Object) { sc(o).AppArmorProfile = nil }, "appArmorProfile must be Unconfined or Localhost"},
		{"unmasked /proc", func(o []Object) { sc(o).ProcMount = ptr(corev1.UnmaskedProcMount) }, "procMount"},
		{"not root", func(o []Object) {
			sc(o).RunAsUser, sc(o).RunAsNonRoot = ptr(int64(65532)), ptr(true)
		}, "runAsUser must be 0"},
		{"pod user namespace", func(o []Object) { dep(o).Spec.Template.Spec.HostUsers = ptr(false) }, "hostUsers: false"},
		{"host network", func(o []Object) { dep(o).Spec.Template.Spec.HostNetwork = true }, "hostNetwork"},
		{"arm64 nodes", func(o []Object) { dep(o).Spec.Template.Spec.NodeSelector["kubernetes.io/arch"] = "arm64" }, "kubernetes.io/arch"},
		{"no untrusted-code label", func(o []Object) { delete(dep(o).Spec.Template.Labels, UntrustedCodeLabel) }, UntrustedCodeLabel},
		{"unsandboxed code execution", func(o []Object) { rewardd(o).Args = append(rewardd(o).Args, "--unsafe-no-sandbox") }, "--unsafe-no-sandbox"},
		{"a Python the image lacks", func(o []Object) {
			rewardd(o).Args = append(rewardd(o).Args, "--sandbox-python=/usr/local/bin/python3.12")
		}, "--sandbox-python"},
		{"more slots than memory", func(o []Object) { rewardd(o).Args = append(rewardd(o).Args, "--sandbox-slots=8") }, "8 slots (--sandbox-slots)"},
		{"more CPU than memory", func(o []Object) {
			rewardd(o).Resources.Limits[corev1.ResourceCPU] = resource.MustParse("6")
			rewardd(o).Resources.Requests[corev1.ResourceCPU] = resource.MustParse("6")
		}, "6 slots (the CPU limit 6)"},
		{"bigger submissions than memory", func(o []Object) {
			cm := configMap(t, o)
			cm.Data["config.yaml"] = strings.Replace(cm.Data["config.yaml"], "memory_mb: 512", "memory_mb: 2048", 1)
		}, "memory_mb 2048"},
		{"no GOMEMLIMIT", func(o []Object) { rewardd(o).Env = nil }, "no GOMEMLIMIT"},
		{"a config without code_exec", func(o []Object) {
			cm := configMap(t, o)
			cm.Data["config.yaml"] = "functions:\n  - name: format\n    kind: format\n"
		}, "no code_exec function"},
	}
	checkCatches(t, c, buildCode, cases)
}

// The code-exec replicas pass only the code_exec checks, and the base only
// the unprivileged ones: neither set of manifests passes for the other.
func TestEachReplicaKindFailsTheOthersChecks(t *testing.T) {
	if errs := checker(t).Check(buildCode(t)); !slices.ContainsFunc(errs, func(e error) bool {
		return strings.Contains(e.Error(), "runAsNonRoot must be true")
	}) {
		t.Errorf("the code-exec replicas pass as unprivileged ones: %v", errs)
	}
	if errs := codeChecker(t).Check(build(t)); !slices.ContainsFunc(errs, func(e error) bool {
		return strings.Contains(e.Error(), "runAsUser must be 0")
	}) {
		t.Errorf("the string-scoring replicas pass as code_exec ones: %v", errs)
	}
}

// The sandbox facts are read, and the dashboard's list of result values is
// the sandbox's.
func TestSandboxFacts(t *testing.T) {
	sb, err := ReadSandboxFacts(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *sb)
	if !slices.Equal(sb.Results, sandboxResults) {
		t.Errorf("scorers/codeexec/sandbox/metrics.go executionResults %v, dashboard.go sandboxResults %v: keep them equal", sb.Results, sandboxResults)
	}
	serve, err := ReadServeFacts(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"sandbox-slots", "sandbox-python", "unsafe-no-sandbox"} {
		if serve.Flags[f] == "" {
			t.Errorf("rewardd serve has no --%s: the code_exec checks read it (internal/cli/sandbox.go)", f)
		}
	}
	if serve.Defaults["sandbox-python"] != SandboxPython {
		t.Errorf("--sandbox-python defaults to %q, the code-exec image has %s", serve.Defaults["sandbox-python"], SandboxPython)
	}
}

// MetricFiles lists every file of the repository that registers Prometheus
// metrics: a new one joins the list (and so the dashboard's checks).
func TestMetricFilesAreAll(t *testing.T) {
	var found []string
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if e.IsDir() {
			if base := e.Name(); rel != "." && (strings.HasPrefix(base, ".") || base == "deploy" || base == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, c := range []string{"prometheus.NewCounter", "prometheus.NewGauge", "prometheus.NewHistogram", "prometheus.NewSummary"} {
			if strings.Contains(string(data), c) {
				found = append(found, rel)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(found)
	want := slices.Sorted(slices.Values(MetricFiles))
	if !slices.Equal(found, want) {
		t.Errorf("files registering metrics %v, MetricFiles %v: list every one", found, want)
	}
}

// deploy/Dockerfile builds both images: the default (last) stage is the
// distroless one the base runs as its user, and the code-exec stage has
// Debian's python3 and runs as root, as the overlay does. Every package and
// build step comes from deploy/build-image-steps.sh, which make
// check-deploy also runs outside Docker.
func TestDockerfileTargets(t *testing.T) {
	stages, err := ReadDockerfile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	if len(stages) < 2 {
		t.Fatalf("%d stages", len(stages))
	}
	podUser := func(d *appsv1.Deployment) string {
		ct := d.Spec.Template.Spec.Containers[0]
		uid := d.Spec.Template.Spec.SecurityContext.RunAsUser
		if ct.SecurityContext != nil && ct.SecurityContext.RunAsUser != nil {
			uid = ct.SecurityContext.RunAsUser
		}
		if uid == nil {
			return ""
		}
		return strconv.FormatInt(*uid, 10)
	}
	last := stages[len(stages)-1]
	if !strings.HasPrefix(last.From, "gcr.io/distroless/static") || last.Name == "code-exec" {
		t.Errorf("the last stage (what a build without --target makes) is %s %q: keep the distroless image last", last.From, last.Name)
	}
	if u, want := strings.Split(last.User(), ":")[0], podUser(find[*appsv1.Deployment](t, build(t), "rewardd")); u != want {
		t.Errorf("the default image runs as %q, deployment.yaml as %q", u, want)
	}
	var code *Stage
	for i := range stages {
		if stages[i].Name == "code-exec" {
			code = &stages[i]
		}
	}
	if code == nil {
		t.Fatal("no stage named code-exec (docker build --target code-exec)")
	}
	if !code.Runs("code-exec-runtime") {
		t.Errorf("the code-exec stage does not RUN %s code-exec-runtime, which installs python3 and the toolchains", ImageSteps)
	}
	pkgs, err := ImagePackages(root, "code-exec")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pkgs, "python3") {
		t.Errorf("%s code-exec-runtime installs %q, not python3 (%s; python3-minimal lacks the standard library the sandbox and the programs use)", ImageSteps, pkgs, SandboxPython)
	}
	buildStage := slices.IndexFunc(stages, func(st Stage) bool { return st.Name == "build" })
	if buildStage < 0 || !stages[buildStage].Runs("build-deps") || !stages[buildStage].Runs("build") {
		t.Errorf("no stage named build that RUNs %s build-deps and build: the binary must be the one make check-deploy builds and checks (RE2, static)", ImageSteps)
	}
	for _, st := range stages {
		for _, in := range st.BuildsOrInstalls() {
			t.Errorf("stage %q (%s) builds or installs by itself, not through %s: %s", st.Name, st.From, ImageSteps, in)
		}
	}
	if u := strings.Split(code.User(), ":")[0]; u != "0" && u != "root" && u != "" {
		t.Errorf("the code-exec image runs as %q: the sandbox needs root", u)
	}
	if u := podUser(find[*appsv1.Deployment](t, buildCode(t), "rewardd-code-exec")); u != "0" {
		t.Errorf("the code-exec Deployment runs as %q", u)
	}
	for _, st := range []Stage{last, *code} {
		copied := slices.ContainsFunc(st.Instructions, func(in string) bool {
			return strings.HasPrefix(in, "COPY --from=build ") && strings.HasSuffix(in, " /usr/local/bin/rewardd")
		})
		entry := slices.Contains(st.Instructions, `ENTRYPOINT ["/usr/local/bin/rewardd"]`)
		if !copied || !entry {
			t.Errorf("stage %q (%s): want the built binary at /usr/local/bin/rewardd as the entrypoint", st.Name, st.From)
		}
		health := slices.ContainsFunc(st.Instructions, func(in string) bool {
			return strings.HasPrefix(in, "HEALTHCHECK ") && strings.HasSuffix(in, `CMD ["/usr/local/bin/rewardd-healthcheck"]`)
		})
		checker := slices.Contains(st.Instructions, "COPY --from=build /out/rewardd-healthcheck /usr/local/bin/rewardd-healthcheck")
		if !health || !checker {
			t.Errorf("stage %q (%s): want a HEALTHCHECK running /usr/local/bin/rewardd-healthcheck, copied from the build stage (no shell or curl in distroless)", st.Name, st.From)
		}
	}
}
