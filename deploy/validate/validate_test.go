package validate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// The repository root, seen from deploy/validate.
var (
	root       = filepath.Join("..", "..")
	kubeDir    = filepath.Join(root, "deploy", "kubernetes")
	codeDir    = filepath.Join(root, "deploy", "kubernetes-code-exec")
	dashboard  = filepath.Join(root, "deploy", "grafana", "rewardd.json")
	dockerfile = filepath.Join(root, "deploy", "Dockerfile")
	defaultCfg = filepath.Join(root, "server", "config", "default.yaml")
)

// checker is the Checker for deploy/kubernetes, the string-scoring
// replicas: the facts come from cmd/rewardd and the MetricFiles, and the
// token Secret is created by hand (deploy/README.md).
func checker(t *testing.T) *Checker {
	t.Helper()
	serve, err := ReadServeFacts(root)
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := ReadMetrics(root)
	if err != nil {
		t.Fatal(err)
	}
	return &Checker{
		Serve:           serve,
		Metrics:         metrics,
		ExternalSecrets: map[string][]string{"rewardd-token": {"token"}},
		Container:       "rewardd",
	}
}

// codeChecker is the Checker for deploy/kubernetes-code-exec, the replicas
// that run code_exec: the same, plus the sandbox's facts.
func codeChecker(t *testing.T) *Checker {
	t.Helper()
	c := checker(t)
	sb, err := ReadSandboxFacts(root)
	if err != nil {
		t.Fatal(err)
	}
	c.CodeExec, c.Sandbox = true, sb
	return c
}

func build(t *testing.T) []Object { return buildDir(t, kubeDir) }

func buildCode(t *testing.T) []Object { return buildDir(t, codeDir) }

func buildDir(t *testing.T, dir string) []Object {
	t.Helper()
	objs, _, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// Every manifest file decodes strictly into its typed API object, and the
// kustomization lists exactly the manifest files there are.
func TestManifestFilesDecodeStrictly(t *testing.T) {
	k, err := ReadKustomization(kubeDir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := ManifestFiles(kubeDir, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no manifests in %s", kubeDir)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(kubeDir, f))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := Decode(f, data)
		if err != nil {
			t.Error(err)
			continue
		}
		if len(objs) == 0 {
			t.Errorf("%s: no object", f)
		}
		for _, o := range objs {
			t.Logf("%-22s %s/%s %s", f, o.GVK.GroupVersion(), o.GVK.Kind, o.Name)
		}
	}
	listed := slices.Sorted(slices.Values(k.Resources))
	if !slices.Equal(listed, files) {
		t.Errorf("kustomization.yaml resources %v, files %v: list every manifest, and only those", listed, files)
	}
}

// What `kubectl apply -k deploy/kubernetes` would create passes every check.
func TestKustomizeBuildPassesChecks(t *testing.T) {
	objs := build(t)
	for _, o := range objs {
		t.Logf("rendered %s/%s %s", o.GVK.GroupVersion(), o.GVK.Kind, o.Name)
	}
	c := checker(t)
	t.Logf("rewardd serve: %d flags, grace period %s; %d metrics", len(c.Serve.Flags), c.Serve.GracePeriod, len(c.Metrics))
	for _, err := range c.Check(objs) {
		t.Error(err)
	}

	// What kustomize does to the objects: the image, the config's hashed
	// name, and the secret's octal mode survive as meant.
	d := find[*appsv1.Deployment](t, objs, "rewardd")
	pod := d.Spec.Template.Spec
	k, err := ReadKustomization(kubeDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(k.Images) != 1 {
		t.Fatalf("kustomization.yaml: %d images, want 1 (rewardd)", len(k.Images))
	}
	if img, want := pod.Containers[0].Image, k.Images[0].NewName+":"+k.Images[0].NewTag; img != want {
		t.Errorf("image %q, want %q: kustomization.yaml's images: did not apply", img, want)
	}
	for _, v := range pod.Volumes {
		switch {
		case v.ConfigMap != nil && !strings.HasPrefix(v.ConfigMap.Name, "rewardd-config-"):
			t.Errorf("config volume refers to %q, not the generated (hash-suffixed) ConfigMap", v.ConfigMap.Name)
		case v.Secret != nil && (v.Secret.DefaultMode == nil || *v.Secret.DefaultMode != 0o440):
			t.Errorf("token volume defaultMode %v, want 0440", v.Secret.DefaultMode)
		}
	}
}

// The ConfigMap serves the embedded default config, byte for byte: the
// deployed server behaves as `rewardd serve` does with no --config.
func TestConfigMapIsDefaultConfig(t *testing.T) {
	want, err := os.ReadFile(defaultCfg)
	if err != nil {
		t.Fatal(err)
	}
	var cm *corev1.ConfigMap
	for _, o := range build(t) {
		if v, ok := o.Value.(*corev1.ConfigMap); ok && strings.HasPrefix(v.Name, "rewardd-config") {
			cm = v
		}
	}
	if cm == nil {
		t.Fatal("no rewardd-config ConfigMap rendered")
	}
	if got := cm.Data["config.yaml"]; got != string(want) {
		t.Errorf("ConfigMap %s config.yaml differs from %s: cp server/config/default.yaml deploy/kubernetes/config.yaml (your own config goes in an overlay: deploy/README.md)", cm.Name, defaultCfg)
	}
}

// Every series the dashboard queries is registered (MetricFiles), with the
// labels the queries use.
func TestDashboardMatchesMetrics(t *testing.T) {
	d, qs := readDashboard(t)
	metrics, err := ReadMetrics(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range CheckDashboard(d, qs, metrics) {
		t.Error(err)
	}
	t.Logf("%d queries checked against %d metrics", len(qs), len(metrics))

	// The go_ and process_ series come from collectors serve.go registers.
	serve, err := os.ReadFile(filepath.Join(root, "cmd", "rewardd", "serve.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"collectors.NewGoCollector(", "collectors.NewProcessCollector("} {
		if !bytes.Contains(serve, []byte(c)) {
			t.Errorf("cmd/rewardd/serve.go no longer registers %s…): the dashboard's go_/process_ panels would be empty", c)
		}
	}
}

// Every metric the server registers has a panel: a new metric gets one.
func TestDashboardCoversEveryMetric(t *testing.T) {
	_, qs := readDashboard(t)
	metrics, err := ReadMetrics(root)
	if err != nil {
		t.Fatal(err)
	}
	used, err := UsedSeries(qs)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range metrics {
		shown := false
		for name := range m.Series() {
			shown = shown || used[name]
		}
		if !shown {
			t.Errorf("%s (%s) has no panel in deploy/grafana/rewardd.json", m.Name, m.File)
		}
	}
}

func readDashboard(t *testing.T) (*Dashboard, []Query) {
	t.Helper()
	data, err := os.ReadFile(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	d, qs, err := ParseDashboard(data)
	if err != nil {
		t.Fatalf("%s: %v", dashboard, err)
	}
	return d, qs
}

// The checks have teeth: each mistake below, made to the rendered objects,
// is caught, by the check meant for it.
func TestChecksCatchMistakes(t *testing.T) {
	c := checker(t)
	if errs := c.Check(build(t)); len(errs) > 0 {
		t.Fatalf("the unchanged manifests fail: %v", errs)
	}
	rewardd := func(objs []Object) *corev1.Container {
		return &find[*appsv1.Deployment](t, objs, "rewardd").Spec.Template.Spec.Containers[0]
	}
	setArg := func(objs []Object, old, new string) {
		ct := rewardd(objs)
		i := slices.Index(ct.Args, old)
		if i < 0 {
			t.Fatalf("no argument %q in %q", old, ct.Args)
		}
		ct.Args[i] = new
	}
	cases := []mistake{
		{"selector does not match pods", func(o []Object) {
			find[*appsv1.Deployment](t, o, "rewardd").Spec.Template.Labels["app.kubernetes.io/component"] = "other"
		}, "does not match the pod template"},
		{"loopback listen address", func(o []Object) { setArg(o, "--grpc-addr=0.0.0.0:50051", "--grpc-addr=127.0.0.1:50051") }, "loopback"},
		{"listen port differs from containerPort", func(o []Object) { setArg(o, "--http-addr=0.0.0.0:8080", "--http-addr=0.0.0.0:8081") }, "containerPort http is 8080"},
		{"unknown flag", func(o []Object) {
			setArg(o, "--auth-token-file=/var/run/rewardd/token", "--auth-token=/var/run/rewardd/token")
		}, "no such flag"},
		{"token file on the config volume", func(o []Object) {
			setArg(o, "--auth-token-file=/var/run/rewardd/token", "--auth-token-file=/etc/rewardd/token")
		}, "not a secret volume"},
		{"token file the secret does not project", func(o []Object) {
			setArg(o, "--auth-token-file=/var/run/rewardd/token", "--auth-token-file=/var/run/rewardd/tokens")
		}, "projects no item"},
		{"config file nowhere mounted", func(o []Object) {
			setArg(o, "--config=/etc/rewardd/config.yaml", "--config=/config.yaml")
		}, "no volume is mounted there"},
		{"readiness on the wrong path", func(o []Object) { rewardd(o).ReadinessProbe.HTTPGet.Path = "/ready" }, "want /readyz"},
		{"probe on an undeclared port", func(o []Object) { rewardd(o).LivenessProbe.HTTPGet.Port = intstr.FromString("metrics") }, "does not declare"},
		{"metrics scraped on the gRPC port", func(o []Object) {
			find[*appsv1.Deployment](t, o, "rewardd").Spec.Template.Annotations["prometheus.io/port"] = "50051"
		}, "prometheus.io/port"},
		{"no liveness probe", func(o []Object) { rewardd(o).LivenessProbe = nil }, "no livenessProbe"},
		{"unnamed port", func(o []Object) { rewardd(o).Ports[0].Name = "" }, "has no name"},
		{"grace period below the server's drain", func(o []Object) {
			*find[*appsv1.Deployment](t, o, "rewardd").Spec.Template.Spec.TerminationGracePeriodSeconds = 30
		}, "terminationGracePeriodSeconds 30"},
		{"no memory limit", func(o []Object) { delete(rewardd(o).Resources.Limits, corev1.ResourceMemory) }, "limits.memory unset"},
		{"GOMEMLIMIT above the memory limit", func(o []Object) { rewardd(o).Env[0].Value = "2GiB" }, "not below limits.memory"},
		{"writable root filesystem", func(o []Object) { *rewardd(o).SecurityContext.ReadOnlyRootFilesystem = false }, "readOnlyRootFilesystem"},
		{"a capability added", func(o []Object) {
			rewardd(o).SecurityContext.Capabilities.Add = []corev1.Capability{"SYS_ADMIN"}
		}, "capabilities.add"},
		{"privilege escalation", func(o []Object) { *rewardd(o).SecurityContext.AllowPrivilegeEscalation = true }, "allowPrivilegeEscalation"},
		{"unconfined seccomp", func(o []Object) {
			rewardd(o).SecurityContext.SeccompProfile.Type = corev1.SeccompProfileTypeUnconfined
		}, "RuntimeDefault"},
		{"latest image", func(o []Object) { rewardd(o).Image = "rewardd:latest" }, "other than latest"},
		{"AppArmor unconfined", func(o []Object) {
			rewardd(o).SecurityContext.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		}, "appArmorProfile"},
		{"root", func(o []Object) { rewardd(o).SecurityContext.RunAsUser = ptr(int64(0)) }, "runAsUser 0"},
		{"host PID namespace", func(o []Object) { find[*appsv1.Deployment](t, o, "rewardd").Spec.Template.Spec.HostPID = true }, "hostPID"},
		{"code_exec served unprivileged", func(o []Object) {
			cm := configMap(t, o)
			cm.Data["config.yaml"] = strings.Replace(cm.Data["config.yaml"], "functions:\n", "functions:\n  - name: tests\n    kind: code_exec\n    test_style: assert\n", 1)
		}, "this replica is unprivileged"},
		{"unsandboxed code execution", func(o []Object) { rewardd(o).Args = append(rewardd(o).Args, "--unsafe-no-sandbox") }, "--unsafe-no-sandbox"},
		{"untrusted-code label on unprivileged pods", func(o []Object) {
			find[*appsv1.Deployment](t, o, "rewardd").Spec.Template.Labels[UntrustedCodeLabel] = "true"
		}, UntrustedCodeLabel},
		{"secret unreadable by the non-root user", func(o []Object) {
			for _, v := range find[*appsv1.Deployment](t, o, "rewardd").Spec.Template.Spec.Volumes {
				if v.Secret != nil {
					*v.Secret.DefaultMode = 0o400
				}
			}
		}, "unreadable"},
		{"replicas set under an HPA", func(o []Object) {
			n := int32(3)
			find[*appsv1.Deployment](t, o, "rewardd").Spec.Replicas = &n
		}, "spec.replicas is set"},
		{"service targets a missing port", func(o []Object) {
			find[*corev1.Service](t, o, "rewardd").Spec.Ports[0].TargetPort = intstr.FromString("grpcc")
		}, "is no container port"},
		{"service port number differs", func(o []Object) { find[*corev1.Service](t, o, "rewardd").Spec.Ports[1].Port = 80 }, "keep names and numbers the same"},
		{"headless service publishes not-ready pods", func(o []Object) {
			find[*corev1.Service](t, o, "rewardd-headless").Spec.PublishNotReadyAddresses = true
		}, "publishNotReadyAddresses"},
		{"headless service missing", func(o []Object) {
			find[*corev1.Service](t, o, "rewardd-headless").Spec.ClusterIP = ""
		}, "no headless Service"},
		{"service selects nothing", func(o []Object) {
			find[*corev1.Service](t, o, "rewardd").Spec.Selector["app.kubernetes.io/name"] = "rewarder"
		}, "selects the pods of no Deployment"},
		{"HPA targets another Deployment", func(o []Object) {
			find[*autoscalingv2.HorizontalPodAutoscaler](t, o, "rewardd").Spec.ScaleTargetRef.Name = "reward"
		}, "is no Deployment here"},
		{"HPA down to one replica", func(o []Object) {
			*find[*autoscalingv2.HorizontalPodAutoscaler](t, o, "rewardd").Spec.MinReplicas = 1
		}, "minReplicas 1"},
		{"HPA on a metric rewardd does not export", func(o []Object) {
			h := find[*autoscalingv2.HorizontalPodAutoscaler](t, o, "rewardd")
			h.Spec.Metrics = append(h.Spec.Metrics, autoscalingv2.MetricSpec{
				Type: autoscalingv2.PodsMetricSourceType,
				Pods: &autoscalingv2.PodsMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "rewardd_pool_in_flight"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr(resource.MustParse("1500m"))},
				},
			})
		}, "exports no such series"},
		{"PDB selects nothing", func(o []Object) {
			find[*policyv1.PodDisruptionBudget](t, o, "rewardd").Spec.Selector.MatchLabels["app.kubernetes.io/component"] = "worker"
		}, "selects the pods of no Deployment"},
		{"PDB blocks every drain", func(o []Object) {
			p := find[*policyv1.PodDisruptionBudget](t, o, "rewardd")
			p.Spec.MaxUnavailable = nil
			p.Spec.MinAvailable = ptr(intstr.FromInt32(2))
		}, "no drain can proceed"},
	}
	checkCatches(t, c, build, cases)
}

// Strict decoding refuses what a lax one would silently drop or misread.
func TestDecodeRefusesMalformedManifests(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(kubeDir, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, old, new, want string }{
		{"misspelt field", "readinessProbe:", "readinesProbe:", "unknown field"},
		{"field at the wrong level", "      automountServiceAccountToken: false", "      automountServiceAccountToken: false\n      containerPort: 1", "unknown field"},
		{"malformed quantity", "memory: 1Gi", "memory: 1Gx", "quantities must match"},
		{"string for a number", "terminationGracePeriodSeconds: 45", `terminationGracePeriodSeconds: "45s"`, "terminationGracePeriodSeconds"},
		{"duplicate key", "      enableServiceLinks: false", "      enableServiceLinks: false\n      enableServiceLinks: true", "already set"},
		{"unknown kind", "kind: Deployment", "kind: Deploymnet", "not a kind this validator knows"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !bytes.Contains(data, []byte(tc.old)) {
				t.Fatalf("deployment.yaml has no %q", tc.old)
			}
			_, err := Decode("deployment.yaml", bytes.Replace(data, []byte(tc.old), []byte(tc.new), 1))
			if err == nil {
				t.Fatal("decoded without error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
		})
	}
}

// The dashboard checks catch drift from the registered metrics.
func TestDashboardCheckCatchesDrift(t *testing.T) {
	data, err := os.ReadFile(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := ReadMetrics(root)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, old, new, want string }{
		{"renamed metric", "rewardd_pool_inflight{", "rewardd_pool_in_flight{", "registers no such metric"},
		{"histogram read without _bucket", "rewardd_request_duration_seconds_bucket{", "rewardd_request_duration_seconds{", "registers no such metric"},
		{"quantile without le", "sum by (le, method) (rate(rewardd_request_duration_seconds_bucket", "sum by (method) (rate(rewardd_request_duration_seconds_bucket", "drops le"},
		{"label the metric lacks", `rewardd_pool_rejected_total{job=~\"$job\", instance=~\"$instance\"}[$__rate_interval]))",` + "\n", `rewardd_pool_rejected_total{job=~\"$job\", instance=~\"$instance\", method=\"Score\"}[$__rate_interval]))",` + "\n", `has no label "method"`},
		{"code the server never emits", `code!=\"OK\"`, `code!=\"Ok\"`, "not a gRPC code name"},
		{"result the sandbox never counts", `result=\"sandbox_error\"`, `result=\"error\"`, "not a result the sandbox counts"},
		{"sandbox metric renamed", "rewardd_sandbox_slots_busy{", "rewardd_sandbox_busy_slots{", "registers no such metric"},
		{"legend of a label aggregated away", `"legendFormat": "{{method}} {{code}}"`, `"legendFormat": "{{method}} {{instance}}"`, "the result has only the labels [method code]"},
		{"PromQL syntax error", "sum by (instance) (rate(rewardd_pool_rejected_total{", "sum by (instance) (rate(rewardd_pool_rejected_total{{", "PromQL"},
		{"rate of a range that is not one", "(rate(rewardd_rollouts_scored_total{job=~\\\"$job\\\", instance=~\\\"$instance\\\"}[$__rate_interval]))", "(rate(rewardd_rollouts_scored_total{job=~\\\"$job\\\", instance=~\\\"$instance\\\"}))", "PromQL"},
		{"variable over a label the metric lacks", "label_values(rewardd_pool_capacity, job)", "label_values(rewardd_pool_capacity, pod)", "label_values(…, pod)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !bytes.Contains(data, []byte(tc.old)) {
				t.Fatalf("rewardd.json has no %s", tc.old)
			}
			d, qs, err := ParseDashboard(bytes.ReplaceAll(data, []byte(tc.old), []byte(tc.new)))
			if err != nil {
				t.Fatal(err)
			}
			errs := CheckDashboard(d, qs, metrics)
			if !slices.ContainsFunc(errs, func(e error) bool { return strings.Contains(e.Error(), tc.want) }) {
				t.Errorf("want an error saying %q, got %v", tc.want, errs)
			}
		})
	}
}

// configMap returns the generated rewardd-config ConfigMap.
func configMap(t *testing.T, objs []Object) *corev1.ConfigMap {
	t.Helper()
	for _, o := range objs {
		if v, ok := o.Value.(*corev1.ConfigMap); ok && strings.HasPrefix(v.Name, "rewardd-config") {
			return v
		}
	}
	t.Fatal("no rewardd-config ConfigMap rendered")
	return nil
}

// find returns the object of type T named name.
func find[T any](t *testing.T, objs []Object, name string) T {
	t.Helper()
	for _, o := range objs {
		if v, ok := o.Value.(T); ok && o.Name == name {
			return v
		}
	}
	var zero T
	t.Fatalf("no %T named %s", zero, name)
	return zero
}

func ptr[T any](v T) *T { return &v }

func Example() {
	objs, err := Decode("example.yaml", []byte(`
apiVersion: v1
kind: Service
metadata: {name: rewardd}
spec:
  selector: {app: rewardd}
  ports: [{name: grpc, port: 50051, targetPort: grpc}]
`))
	fmt.Println(len(objs), objs[0].GVK.Kind, objs[0].Name, err)
	_, err = Decode("typo.yaml", []byte("apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {selectr: {app: x}}\n"))
	fmt.Println(err != nil)
	// Output:
	// 1 Service rewardd <nil>
	// true
}

// The overlay deploy/README.md shows for your own config does what it says:
// built on a copy of deploy/kubernetes, it serves that config and the image
// it names.
func TestREADMEOverlayExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "deploy", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const marker = "# my-overlay/kustomization.yaml\n"
	_, rest, ok := strings.Cut(string(readme), marker)
	if !ok {
		t.Fatalf("deploy/README.md has no %q block", strings.TrimSpace(marker))
	}
	example, _, _ := strings.Cut(rest, "```")
	fs := filesys.MakeFsInMemory()
	entries, err := os.ReadDir(kubeDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(kubeDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := fs.WriteFile("/deploy/kubernetes/"+e.Name(), data); err != nil {
			t.Fatal(err)
		}
	}
	const cfg = "functions:\n  - name: f\n    kind: format\n"
	if err := fs.WriteFile("/my-overlay/kustomization.yaml", []byte(example)); err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteFile("/my-overlay/config.yaml", []byte(cfg)); err != nil {
		t.Fatal(err)
	}
	rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, "/my-overlay")
	if err != nil {
		t.Fatalf("the README's overlay does not build: %v", err)
	}
	out, err := rm.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Decode("README overlay", out)
	if err != nil {
		t.Fatal(err)
	}
	if img := find[*appsv1.Deployment](t, objs, "rewardd").Spec.Template.Spec.Containers[0].Image; img != "REGISTRY/rewardd:TAG" {
		t.Errorf("the README's overlay runs image %q, not the REGISTRY/rewardd:TAG it sets", img)
	}
	if got := configMap(t, objs).Data["config.yaml"]; got != cfg {
		t.Errorf("the README's overlay serves %q, not its config.yaml", got)
	}
}

// mistake is a change to the built manifests, and what the check meant to
// catch it says.
type mistake struct {
	name   string
	mutate func([]Object)
	want   string
}

// checkCatches applies each mistake to fresh manifests from build, and
// wants c to refuse them by the check meant.
func checkCatches(t *testing.T, c *Checker, build func(*testing.T) []Object, cases []mistake) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := build(t)
			tc.mutate(objs)
			errs := c.Check(objs)
			if len(errs) == 0 {
				t.Fatalf("not caught")
			}
			if !slices.ContainsFunc(errs, func(e error) bool { return strings.Contains(e.Error(), tc.want) }) {
				t.Errorf("caught, but not by the check meant (want %q): %v", tc.want, errs)
			}
		})
	}
}
