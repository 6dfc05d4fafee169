package validate

import (
	"errors"
	"fmt"
	"net"
	"path"
	"regexp"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Checker holds what the manifests must agree with outside themselves.
type Checker struct {
	Serve   *ServeFacts
	Metrics []Metric
	// ExternalSecrets are Secrets the manifests use but do not define (the
	// operator creates them by hand), with the keys they must hold.
	ExternalSecrets map[string][]string
	// Container is the name of the rewardd container in the Deployment.
	Container string
	// CodeExec says the objects are replicas that serve code_exec
	// (deploy/kubernetes-code-exec): root with exactly the sandbox's
	// capabilities (CodeExecCapabilities), the Python image, a config with
	// code_exec functions, memory for the slots. Otherwise they serve string
	// scorers only: no privilege at all, and no code_exec function.
	CodeExec bool
	// Sandbox are the facts of scorers/codeexec/sandbox; needed with CodeExec.
	Sandbox *SandboxFacts
}

// Check runs the semantic checks over a complete set of objects, as
// `kubectl apply -k` would create them, and returns every problem found.
func (c *Checker) Check(objs []Object) []error {
	s := &set{Checker: c, objs: objs}
	if c.CodeExec && c.Sandbox == nil {
		return []error{errors.New("Checker.CodeExec without Sandbox facts to check the code_exec replicas against")}
	}
	s.index()
	s.checkNamespaces()
	for _, d := range s.deployments {
		s.checkDeployment(d)
	}
	for _, svc := range s.services {
		s.checkService(svc)
	}
	s.checkServiceShapes()
	for _, h := range s.hpas {
		s.checkHPA(h)
	}
	for _, p := range s.pdbs {
		s.checkPDB(p)
	}
	for _, np := range s.netpols {
		s.checkNetworkPolicy(np)
	}
	return s.errs
}

type set struct {
	*Checker
	objs        []Object
	errs        []error
	deployments []*appsv1.Deployment
	services    []*corev1.Service
	configMaps  map[string]*corev1.ConfigMap
	secrets     map[string]*corev1.Secret
	hpas        []*autoscalingv2.HorizontalPodAutoscaler
	pdbs        []*policyv1.PodDisruptionBudget
	netpols     []*networkingv1.NetworkPolicy
}

func (s *set) errorf(obj metav1.Object, kind, format string, args ...any) {
	s.errs = append(s.errs, fmt.Errorf("%s %s: %s", kind, obj.GetName(), fmt.Sprintf(format, args...)))
}

func (s *set) index() {
	s.configMaps = map[string]*corev1.ConfigMap{}
	s.secrets = map[string]*corev1.Secret{}
	seen := map[string]string{}
	for _, o := range s.objs {
		key := o.GVK.Kind + "/" + o.Name
		if prev, ok := seen[key]; ok {
			s.errs = append(s.errs, fmt.Errorf("%s defined twice: %s and %s", key, prev, o.Source))
		}
		seen[key] = o.Source
		m := o.Value.(metav1.Object)
		if errs := validation.IsDNS1123Subdomain(m.GetName()); len(errs) > 0 {
			s.errs = append(s.errs, fmt.Errorf("%s: name %q: %s", key, m.GetName(), strings.Join(errs, "; ")))
		}
		s.checkLabels(key+" metadata.labels", m.GetLabels())
		switch v := o.Value.(type) {
		case *appsv1.Deployment:
			s.deployments = append(s.deployments, v)
		case *corev1.Service:
			s.services = append(s.services, v)
		case *corev1.ConfigMap:
			s.configMaps[v.Name] = v
		case *corev1.Secret:
			s.secrets[v.Name] = v
		case *autoscalingv2.HorizontalPodAutoscaler:
			s.hpas = append(s.hpas, v)
		case *policyv1.PodDisruptionBudget:
			s.pdbs = append(s.pdbs, v)
		case *networkingv1.NetworkPolicy:
			s.netpols = append(s.netpols, v)
		}
	}
	if len(s.deployments) == 0 {
		s.errs = append(s.errs, errors.New("no Deployment"))
	}
}

func (s *set) checkLabels(where string, l map[string]string) {
	for k, v := range l {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			s.errs = append(s.errs, fmt.Errorf("%s: key %q: %s", where, k, strings.Join(errs, "; ")))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			s.errs = append(s.errs, fmt.Errorf("%s: value %q: %s", where, v, strings.Join(errs, "; ")))
		}
	}
}

// checkNamespaces: selectors and references only work within one namespace.
func (s *set) checkNamespaces() {
	ns := map[string]bool{}
	for _, o := range s.objs {
		ns[o.Value.(metav1.Object).GetNamespace()] = true
	}
	if len(ns) > 1 {
		s.errs = append(s.errs, fmt.Errorf("objects in several namespaces %v: Services, HPA and PDB only reach pods of their own", ns))
	}
}

// podsOf returns the Deployments whose pods a selector selects.
func (s *set) podsOf(sel labels.Selector) []*appsv1.Deployment {
	var out []*appsv1.Deployment
	for _, d := range s.deployments {
		if sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			out = append(out, d)
		}
	}
	return out
}

func (s *set) hpaFor(d *appsv1.Deployment) *autoscalingv2.HorizontalPodAutoscaler {
	for _, h := range s.hpas {
		if h.Spec.ScaleTargetRef.Kind == "Deployment" && h.Spec.ScaleTargetRef.Name == d.Name {
			return h
		}
	}
	return nil
}

func (s *set) checkDeployment(d *appsv1.Deployment) {
	const kind = "Deployment"
	pod := &d.Spec.Template.Spec
	if d.Spec.Selector == nil || (len(d.Spec.Selector.MatchLabels) == 0 && len(d.Spec.Selector.MatchExpressions) == 0) {
		s.errorf(d, kind, "spec.selector is empty")
	} else if sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err != nil {
		s.errorf(d, kind, "spec.selector: %v", err)
	} else if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		s.errorf(d, kind, "spec.selector %s does not match the pod template's labels %v", sel, d.Spec.Template.Labels)
	}
	s.checkLabels("Deployment "+d.Name+" pod template labels", d.Spec.Template.Labels)
	if h := s.hpaFor(d); h != nil && d.Spec.Replicas != nil {
		s.errorf(d, kind, "spec.replicas is set while HorizontalPodAutoscaler %s scales it: every apply would reset the HPA's count", h.Name)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		s.errorf(d, kind, "automountServiceAccountToken must be false: rewardd never calls the Kubernetes API")
	}
	for _, tsc := range pod.TopologySpreadConstraints {
		if sel, err := metav1.LabelSelectorAsSelector(tsc.LabelSelector); err != nil || tsc.LabelSelector == nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			s.errorf(d, kind, "topologySpreadConstraints on %s: labelSelector does not select the Deployment's own pods", tsc.TopologyKey)
		}
	}

	volumes := map[string]*corev1.Volume{}
	for i := range pod.Volumes {
		v := &pod.Volumes[i]
		if volumes[v.Name] != nil {
			s.errorf(d, kind, "volume %q defined twice", v.Name)
		}
		volumes[v.Name] = v
		s.checkVolume(d, pod, v)
	}

	if len(pod.Containers) == 0 {
		s.errorf(d, kind, "no containers")
	}
	var main *corev1.Container
	var preStop int64
	for i := range pod.Containers {
		ct := &pod.Containers[i]
		s.checkContainer(d, pod, ct, volumes)
		if ct.Name == s.Container {
			main = ct
		}
		if ct.Lifecycle != nil && ct.Lifecycle.PreStop != nil && ct.Lifecycle.PreStop.Sleep != nil {
			preStop = max(preStop, ct.Lifecycle.PreStop.Sleep.Seconds)
		}
	}
	untrusted := d.Spec.Template.Labels[UntrustedCodeLabel] == "true"
	_, annotated := d.Spec.Template.Annotations[UntrustedCodeLabel]
	switch {
	case s.CodeExec && (!untrusted || !annotated || d.Labels[UntrustedCodeLabel] != "true"):
		s.errorf(d, kind, "runs model-written code: label %s=\"true\" on the Deployment and its pods, and an annotation %s on the pods saying so", UntrustedCodeLabel, UntrustedCodeLabel)
	case !s.CodeExec && (untrusted || annotated || d.Labels[UntrustedCodeLabel] != ""):
		s.errorf(d, kind, "label or annotation %s on an unprivileged Deployment: it runs no code (code_exec replicas are deploy/kubernetes-code-exec)", UntrustedCodeLabel)
	}
	s.checkHostIsolation(d, pod)

	if main == nil {
		s.errorf(d, kind, "no container named %q", s.Container)
	} else {
		flags := s.checkRewarddArgs(d, main, volumes)
		s.checkCodeExec(d, pod, main, volumes, flags)
		if port, ok := d.Spec.Template.Annotations["prometheus.io/port"]; ok {
			if cp := findPort(main, intstr.Parse(port)); cp == nil || cp.Name != "http" {
				s.errorf(d, kind, "annotation prometheus.io/port %q is not the http port, where /metrics is served", port)
			}
		}
	}

	// Kubernetes counts preStop inside the grace period, before SIGTERM.
	need := int64(s.Serve.GracePeriod.Seconds()) + preStop
	if pod.TerminationGracePeriodSeconds == nil {
		s.errorf(d, kind, "terminationGracePeriodSeconds unset (Kubernetes' default 30 s): need at least %d s = preStop %d s + the server's %s drain", need, preStop, s.Serve.GracePeriod)
	} else if *pod.TerminationGracePeriodSeconds < need {
		s.errorf(d, kind, "terminationGracePeriodSeconds %d < %d s = preStop %d s + the server's %s drain (cmd/rewardd/serve.go gracePeriod)",
			*pod.TerminationGracePeriodSeconds, need, preStop, s.Serve.GracePeriod)
	}
}

func (s *set) checkVolume(d *appsv1.Deployment, pod *corev1.PodSpec, v *corev1.Volume) {
	const kind = "Deployment"
	switch {
	case v.ConfigMap != nil:
		cm := s.configMaps[v.ConfigMap.Name]
		if cm == nil {
			s.errorf(d, kind, "volume %q: ConfigMap %q is not among the objects", v.Name, v.ConfigMap.Name)
			return
		}
		for _, it := range v.ConfigMap.Items {
			if _, ok := cm.Data[it.Key]; !ok {
				s.errorf(d, kind, "volume %q: ConfigMap %s has no key %q", v.Name, cm.Name, it.Key)
			}
		}
	case v.Secret != nil:
		var keys []string
		if sec := s.secrets[v.Secret.SecretName]; sec != nil {
			for k := range sec.Data {
				keys = append(keys, k)
			}
			for k := range sec.StringData {
				keys = append(keys, k)
			}
		} else if ext, ok := s.ExternalSecrets[v.Secret.SecretName]; ok {
			keys = ext
		} else {
			s.errorf(d, kind, "volume %q: Secret %q is neither among the objects nor a documented external Secret", v.Name, v.Secret.SecretName)
			return
		}
		for _, it := range v.Secret.Items {
			if !contains(keys, it.Key) {
				s.errorf(d, kind, "volume %q: Secret %s has no key %q (keys: %v)", v.Name, v.Secret.SecretName, it.Key, keys)
			}
		}
		s.checkReadable(d, pod, v.Name, v.Secret.DefaultMode)
	}
}

// checkReadable: a non-root process must be able to read the secret files
// (by their group, fsGroup, or by everyone).
func (s *set) checkReadable(d *appsv1.Deployment, pod *corev1.PodSpec, volume string, mode *int32) {
	m := int32(0o644) // Kubernetes' default
	if mode != nil {
		m = *mode
	}
	if m < 0 || m > 0o777 {
		s.errorf(d, "Deployment", "volume %q: defaultMode %#o out of range (a YAML octal read as decimal?)", volume, m)
		return
	}
	byGroup := m&0o040 != 0 && pod.SecurityContext != nil && pod.SecurityContext.FSGroup != nil
	if m&0o004 == 0 && !byGroup {
		s.errorf(d, "Deployment", "volume %q: defaultMode %#o leaves the files unreadable by the non-root user: make them group-readable with fsGroup set", volume, m)
	}
}

func (s *set) checkContainer(d *appsv1.Deployment, pod *corev1.PodSpec, ct *corev1.Container, volumes map[string]*corev1.Volume) {
	const kind = "Deployment"
	where := "container " + ct.Name
	if ct.Image == "" {
		s.errorf(d, kind, "%s: no image", where)
	} else if img := ct.Image[strings.LastIndex(ct.Image, "/")+1:]; !strings.Contains(img, ":") && !strings.Contains(img, "@") || strings.HasSuffix(img, ":latest") {
		s.errorf(d, kind, "%s: image %q: name a tag or digest other than latest", where, ct.Image)
	}

	s.checkPorts(d, ct)
	s.checkResources(d, ct)
	s.checkSecurityContext(d, pod, ct)
	s.checkProbes(d, ct)
	for _, m := range ct.VolumeMounts {
		if volumes[m.Name] == nil {
			s.errorf(d, kind, "%s: volumeMount %q: no such volume", where, m.Name)
		}
		if !m.ReadOnly {
			s.errorf(d, kind, "%s: volumeMount %q is writable: config and secrets are mounted read-only", where, m.Name)
		}
	}
}

// checkPorts: the container's ports are named, unique and valid.
func (s *set) checkPorts(d *appsv1.Deployment, ct *corev1.Container) {
	const kind = "Deployment"
	where := "container " + ct.Name
	names := map[string]bool{}
	for _, p := range ct.Ports {
		if p.Name == "" {
			s.errorf(d, kind, "%s: containerPort %d has no name (Services and probes refer to ports by name)", where, p.ContainerPort)
			continue
		}
		if errs := validation.IsValidPortName(p.Name); len(errs) > 0 {
			s.errorf(d, kind, "%s: port name %q: %s", where, p.Name, strings.Join(errs, "; "))
		}
		if names[p.Name] {
			s.errorf(d, kind, "%s: port name %q used twice", where, p.Name)
		}
		names[p.Name] = true
		if errs := validation.IsValidPortNum(int(p.ContainerPort)); len(errs) > 0 {
			s.errorf(d, kind, "%s: port %s: %s", where, p.Name, strings.Join(errs, "; "))
		}
	}
}

// checkResources: requests and limits for CPU and memory, limits ≥
// requests, and a GOMEMLIMIT, if set, below the memory limit.
func (s *set) checkResources(d *appsv1.Deployment, ct *corev1.Container) {
	const kind = "Deployment"
	where := "container " + ct.Name
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okReq := ct.Resources.Requests[r]
		lim, okLim := ct.Resources.Limits[r]
		if !okReq {
			s.errorf(d, kind, "%s: resources.requests.%s unset", where, r)
		}
		if !okLim {
			s.errorf(d, kind, "%s: resources.limits.%s unset", where, r)
		}
		if okReq && okLim && lim.Cmp(req) < 0 {
			s.errorf(d, kind, "%s: resources.limits.%s %s < requests %s", where, r, lim.String(), req.String())
		}
	}
	for _, e := range ct.Env {
		if e.Name == "GOMEMLIMIT" {
			lim, ok := ct.Resources.Limits[corev1.ResourceMemory]
			n, err := parseGoMemLimit(e.Value)
			switch {
			case err != nil:
				s.errorf(d, kind, "%s: GOMEMLIMIT=%q: %v", where, e.Value, err)
			case ok && n >= lim.Value():
				s.errorf(d, kind, "%s: GOMEMLIMIT=%s (%d B) is not below limits.memory %s (%d B): the GC would not act before the OOM kill", where, e.Value, n, lim.String(), lim.Value())
			}
		}
	}
}

// checkProbes: readiness and liveness probes both present, each probe on a
// port the container declares.
func (s *set) checkProbes(d *appsv1.Deployment, ct *corev1.Container) {
	const kind = "Deployment"
	where := "container " + ct.Name
	if ct.ReadinessProbe == nil {
		s.errorf(d, kind, "%s: no readinessProbe", where)
	}
	if ct.LivenessProbe == nil {
		s.errorf(d, kind, "%s: no livenessProbe", where)
	}
	for name, p := range map[string]*corev1.Probe{"readinessProbe": ct.ReadinessProbe, "livenessProbe": ct.LivenessProbe, "startupProbe": ct.StartupProbe} {
		if p == nil {
			continue
		}
		var port intstr.IntOrString
		switch {
		case p.HTTPGet != nil:
			port = p.HTTPGet.Port
		case p.GRPC != nil:
			port = intstr.FromInt32(p.GRPC.Port)
		case p.TCPSocket != nil:
			port = p.TCPSocket.Port
		case p.Exec != nil:
			continue
		default:
			s.errorf(d, kind, "%s: %s has no handler", where, name)
			continue
		}
		if findPort(ct, port) == nil {
			s.errorf(d, kind, "%s: %s on port %s, which the container does not declare", where, name, port.String())
		}
	}
}

// checkSecurityContext enforces the container's privileges: none at all for
// the string-scoring replicas; for code_exec replicas root with exactly
// CodeExecCapabilities and nothing else of privilege (deploy/README.md,
// "Security").
func (s *set) checkSecurityContext(d *appsv1.Deployment, pod *corev1.PodSpec, ct *corev1.Container) {
	const kind = "Deployment"
	where := "container " + ct.Name
	sc := ct.SecurityContext
	psc := pod.SecurityContext
	if sc == nil {
		s.errorf(d, kind, "%s: no securityContext", where)
		return
	}
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	s.checkNoPrivilege(d, ct)
	e := effectiveSecurity{nonRoot: sc.RunAsNonRoot, uid: sc.RunAsUser, seccomp: sc.SeccompProfile, apparmor: sc.AppArmorProfile}
	if e.nonRoot == nil {
		e.nonRoot = psc.RunAsNonRoot
	}
	if e.uid == nil {
		e.uid = psc.RunAsUser
	}
	if sc.Capabilities != nil {
		e.add = sc.Capabilities.Add
	}
	if e.seccomp == nil {
		e.seccomp = psc.SeccompProfile
	}
	if e.apparmor == nil {
		e.apparmor = psc.AppArmorProfile
	}
	if s.CodeExec {
		s.checkCodeExecSecurity(d, pod, ct, e)
	} else {
		s.checkStringScorerSecurity(d, ct, e)
	}
}

// effectiveSecurity is a container's security settings, the pod's where the
// container sets none.
type effectiveSecurity struct {
	nonRoot  *bool
	uid      *int64
	add      []corev1.Capability
	seccomp  *corev1.SeccompProfile
	apparmor *corev1.AppArmorProfile
}

// checkNoPrivilege: what no replica may have: privileged mode, privilege
// escalation, a writable root, an unmasked /proc, capabilities not dropped.
func (s *set) checkNoPrivilege(d *appsv1.Deployment, ct *corev1.Container) {
	const kind = "Deployment"
	where := "container " + ct.Name
	sc := ct.SecurityContext
	if sc.Privileged != nil && *sc.Privileged {
		s.errorf(d, kind, "%s: privileged", where)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		s.errorf(d, kind, "%s: allowPrivilegeEscalation must be false", where)
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		s.errorf(d, kind, "%s: readOnlyRootFilesystem must be true", where)
	}
	if sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
		s.errorf(d, kind, "%s: procMount %s: keep the runtime's masked /proc", where, *sc.ProcMount)
	}
	if sc.Capabilities == nil || !containsCap(sc.Capabilities.Drop, "ALL") {
		s.errorf(d, kind, "%s: capabilities.drop must hold ALL", where)
	}
}

// checkStringScorerSecurity: a string-scoring replica runs as non-root with
// no capabilities and the runtime's default seccomp and AppArmor profiles.
func (s *set) checkStringScorerSecurity(d *appsv1.Deployment, ct *corev1.Container, e effectiveSecurity) {
	const kind = "Deployment"
	where := "container " + ct.Name
	if e.nonRoot == nil || !*e.nonRoot {
		s.errorf(d, kind, "%s: runAsNonRoot must be true", where)
	}
	if e.uid != nil && *e.uid == 0 {
		s.errorf(d, kind, "%s: runAsUser 0", where)
	}
	if len(e.add) > 0 {
		s.errorf(d, kind, "%s: capabilities.add %v: the string scorers need none (code_exec replicas are deploy/kubernetes-code-exec)", where, e.add)
	}
	if e.seccomp == nil || e.seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		s.errorf(d, kind, "%s: seccompProfile must be RuntimeDefault (container or pod)", where)
	}
	if e.apparmor != nil && e.apparmor.Type != corev1.AppArmorProfileTypeRuntimeDefault {
		s.errorf(d, kind, "%s: appArmorProfile %s: the string scorers need the runtime's default", where, e.apparmor.Type)
	}
}

// checkCodeExecSecurity: a code_exec replica runs as root, for the sandbox
// to make namespaces and mounts and drop its programs to uids of their own,
// with exactly CodeExecCapabilities, on the sandbox's architecture.
func (s *set) checkCodeExecSecurity(d *appsv1.Deployment, pod *corev1.PodSpec, ct *corev1.Container, e effectiveSecurity) {
	const kind = "Deployment"
	where := "container " + ct.Name
	if e.uid == nil || *e.uid != 0 {
		s.errorf(d, kind, "%s: runAsUser must be 0 (container or pod): the sandbox needs root", where)
	}
	if e.nonRoot != nil && *e.nonRoot {
		s.errorf(d, kind, "%s: runAsNonRoot true: the sandbox needs root, the kubelet would refuse to start it", where)
	}
	s.checkCodeExecCapabilities(d, ct, e.add)
	switch {
	case e.seccomp == nil:
		s.errorf(d, kind, "%s: no seccompProfile: set RuntimeDefault (it allows the sandbox's calls to a holder of SYS_ADMIN) or a Localhost profile", where)
	case e.seccomp.Type == corev1.SeccompProfileTypeUnconfined:
		s.errorf(d, kind, "%s: seccompProfile Unconfined: RuntimeDefault allows what the sandbox needs to a holder of SYS_ADMIN and keeps the runtime's filter around its programs; on an old runtime, a Localhost profile", where)
	}
	if e.apparmor == nil || e.apparmor.Type == corev1.AppArmorProfileTypeRuntimeDefault {
		s.errorf(d, kind, "%s: appArmorProfile must be Unconfined or Localhost: the runtime's default AppArmor profile denies the sandbox's mounts", where)
	}
	if pod.HostUsers != nil && !*pod.HostUsers {
		s.errorf(d, kind, "hostUsers: false: a pod user namespace maps 65,536 ids, and the sandbox's per-slot uids (1,000,000 and up) lie outside it")
	}
	if arch := pod.NodeSelector["kubernetes.io/arch"]; arch != s.Sandbox.Arch {
		s.errorf(d, kind, "nodeSelector kubernetes.io/arch %q, want %q: the sandbox's seccomp filter admits %s syscalls only (scorers/codeexec/sandbox/confine_linux.go)", arch, s.Sandbox.Arch, s.Sandbox.Arch)
	}
}

// checkCodeExecCapabilities: add holds exactly CodeExecCapabilities, each
// once and spelt as the API accepts it.
func (s *set) checkCodeExecCapabilities(d *appsv1.Deployment, ct *corev1.Container, add []corev1.Capability) {
	const kind = "Deployment"
	where := "container " + ct.Name
	seen := map[string]bool{}
	for _, c := range add {
		name := string(c)
		switch {
		case strings.HasPrefix(strings.ToUpper(name), "CAP_"):
			s.errorf(d, kind, "%s: capabilities.add %q: spell it without CAP_ (the API refuses CAP_SYS_ADMIN beside allowPrivilegeEscalation: false)", where, name)
		case CodeExecCapabilities[name] == "":
			s.errorf(d, kind, "%s: capabilities.add %s: not one the sandbox needs (it needs exactly %v)", where, name, sortedKeys(CodeExecCapabilities))
		case seen[name]:
			s.errorf(d, kind, "%s: capabilities.add %s twice", where, name)
		}
		seen[name] = true
	}
	for _, c := range sortedKeys(CodeExecCapabilities) {
		if !seen[c] {
			s.errorf(d, kind, "%s: capabilities.add lacks %s, which the sandbox needs for %s", where, c, CodeExecCapabilities[c])
		}
	}
}

// checkHostIsolation: no replica shares the node's namespaces or files.
func (s *set) checkHostIsolation(d *appsv1.Deployment, pod *corev1.PodSpec) {
	const kind = "Deployment"
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		s.errorf(d, kind, "hostNetwork, hostPID and hostIPC must be false")
	}
	if pod.ShareProcessNamespace != nil && *pod.ShareProcessNamespace {
		s.errorf(d, kind, "shareProcessNamespace: containers keep their own process namespace")
	}
	for _, v := range pod.Volumes {
		if v.HostPath != nil {
			s.errorf(d, kind, "volume %q is a hostPath", v.Name)
		}
	}
}

// checkRewarddArgs: `rewardd serve` with flags it knows, listening on the
// declared ports on a non-loopback address, with its config and token files
// on the mounted volumes, and probes on the right paths.
func (s *set) checkRewarddArgs(d *appsv1.Deployment, ct *corev1.Container, volumes map[string]*corev1.Volume) map[string]string {
	const kind = "Deployment"
	where := "container " + ct.Name
	args := append(append([]string{}, ct.Command...), ct.Args...)
	if len(args) > 0 && path.Base(args[0]) == "rewardd" {
		args = args[1:]
	}
	if len(args) == 0 || args[0] != "serve" {
		s.errorf(d, kind, "%s: args must start with `serve`, got %q", where, args)
		return nil
	}
	flags := s.serveFlags(d, ct, args[1:])
	s.checkListenAddrs(d, ct, flags)
	s.checkServeFiles(d, ct, volumes, flags)
	s.checkProbePaths(d, ct, flags)
	return flags
}

// serveFlags reads the flags of `rewardd serve` in args into a map from
// name to value, refusing what serve does not take.
func (s *set) serveFlags(d *appsv1.Deployment, ct *corev1.Container, args []string) map[string]string {
	const kind = "Deployment"
	where := "container " + ct.Name
	flags := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			s.errorf(d, kind, "%s: argument %q is not a flag (rewardd serve takes no positional arguments)", where, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		typ, ok := s.Serve.Flags[name]
		if !ok {
			s.errorf(d, kind, "%s: flag --%s: `rewardd serve` has no such flag (cmd/rewardd/serve.go)", where, name)
			continue
		}
		if !hasValue && typ != "Bool" {
			if i+1 >= len(args) {
				s.errorf(d, kind, "%s: flag --%s without a value", where, name)
				continue
			}
			i++
			value = args[i]
		}
		flags[name] = value
	}
	return flags
}

// checkListenAddrs: serve listens on the declared grpc and http ports, on
// an address other pods can reach.
func (s *set) checkListenAddrs(d *appsv1.Deployment, ct *corev1.Container, flags map[string]string) {
	const kind = "Deployment"
	where := "container " + ct.Name
	ports := map[string]string{"grpc-addr": "grpc", "http-addr": "http"}
	for flag, portName := range ports {
		addr, ok := flags[flag]
		if !ok {
			s.errorf(d, kind, "%s: --%s unset: the default listens on loopback, unreachable from other pods", where, flag)
			continue
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			s.errorf(d, kind, "%s: --%s=%s: %v", where, flag, addr, err)
			continue
		}
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			s.errorf(d, kind, "%s: --%s=%s listens on loopback: kubelet probes and other pods cannot reach it", where, flag, addr)
		}
		cp := findPort(ct, intstr.FromString(portName))
		if cp == nil {
			s.errorf(d, kind, "%s: no containerPort named %q for --%s", where, portName, flag)
		} else if strconv.Itoa(int(cp.ContainerPort)) != port {
			s.errorf(d, kind, "%s: --%s=%s but containerPort %s is %d", where, flag, addr, portName, cp.ContainerPort)
		}
	}
}

// checkServeFiles: the config, token and TLS files serve reads lie on the
// mounted volumes of the right type.
func (s *set) checkServeFiles(d *appsv1.Deployment, ct *corev1.Container, volumes map[string]*corev1.Volume, flags map[string]string) {
	const kind = "Deployment"
	where := "container " + ct.Name
	files := []struct{ flag, want string }{{"config", "configMap"}, {"auth-token-file", "secret"}}
	if _, ok := flags["tls-cert"]; ok {
		files = append(files, struct{ flag, want string }{"tls-cert", "secret"}, struct{ flag, want string }{"tls-key", "secret"})
	}
	for _, f := range files {
		p, ok := flags[f.flag]
		if !ok {
			s.errorf(d, kind, "%s: --%s unset", where, f.flag)
			continue
		}
		if err := fileOnVolume(ct, volumes, p, f.want); err != nil {
			s.errorf(d, kind, "%s: --%s=%s: %v", where, f.flag, p, err)
		}
	}
}

// checkProbePaths: the HTTP probes ask /readyz and /healthz on the http
// port in the scheme serve speaks; gRPC probes go to the grpc port, without
// TLS.
func (s *set) checkProbePaths(d *appsv1.Deployment, ct *corev1.Container, flags map[string]string) {
	const kind = "Deployment"
	where := "container " + ct.Name
	probes := []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"readinessProbe", ct.ReadinessProbe, "/readyz"}, {"livenessProbe", ct.LivenessProbe, "/healthz"}}
	for _, p := range probes {
		if p.probe == nil {
			continue
		}
		switch {
		case p.probe.HTTPGet != nil:
			h := p.probe.HTTPGet
			if h.Path != p.path {
				s.errorf(d, kind, "%s: %s path %q, want %s", where, p.name, h.Path, p.path)
			}
			if cp := findPort(ct, h.Port); cp != nil && cp.Name != "http" {
				s.errorf(d, kind, "%s: %s on port %s: /healthz and /readyz are on the http port", where, p.name, h.Port.String())
			}
			_, tls := flags["tls-cert"]
			if tls != (h.Scheme == corev1.URISchemeHTTPS) {
				s.errorf(d, kind, "%s: %s scheme %q does not match --tls-cert being set (%v)", where, p.name, h.Scheme, tls)
			}
		case p.probe.GRPC != nil:
			if cp := findPort(ct, intstr.FromInt32(p.probe.GRPC.Port)); cp != nil && cp.Name != "grpc" {
				s.errorf(d, kind, "%s: %s: gRPC health is served on the grpc port", where, p.name)
			}
			if _, tls := flags["tls-cert"]; tls {
				s.errorf(d, kind, "%s: %s: native gRPC probes cannot use TLS", where, p.name)
			}
		}
	}
}

// fileOnVolume: the file p must lie on a volume of the wanted type mounted
// in the container, and (when the volume lists items) be one of them.
func fileOnVolume(ct *corev1.Container, volumes map[string]*corev1.Volume, p, want string) error {
	for _, m := range ct.VolumeMounts {
		rel, ok := strings.CutPrefix(p, strings.TrimSuffix(m.MountPath, "/")+"/")
		if !ok {
			continue
		}
		v := volumes[m.Name]
		if v == nil {
			return fmt.Errorf("mount %q has no volume", m.Name)
		}
		var items []corev1.KeyToPath
		switch {
		case want == "configMap" && v.ConfigMap != nil:
			items = v.ConfigMap.Items
		case want == "secret" && v.Secret != nil:
			items = v.Secret.Items
		default:
			return fmt.Errorf("on volume %q, which is not a %s volume", m.Name, want)
		}
		if len(items) == 0 {
			return nil // every key becomes a file; checkVolume checked the object exists
		}
		for _, it := range items {
			if it.Path == rel {
				return nil
			}
		}
		return fmt.Errorf("volume %q projects no item at path %q", m.Name, rel)
	}
	return errors.New("no volume is mounted there")
}

func (s *set) checkService(svc *corev1.Service) {
	const kind = "Service"
	if len(svc.Spec.Selector) == 0 {
		s.errorf(svc, kind, "no selector")
		return
	}
	pods := s.podsOf(labels.SelectorFromSet(svc.Spec.Selector))
	if len(pods) == 0 {
		s.errorf(svc, kind, "selector %v selects the pods of no Deployment", svc.Spec.Selector)
		return
	}
	names := map[string]bool{}
	for _, p := range svc.Spec.Ports {
		if p.Name == "" {
			s.errorf(svc, kind, "port %d has no name", p.Port)
		} else if errs := validation.IsDNS1123Label(p.Name); len(errs) > 0 {
			s.errorf(svc, kind, "port name %q: %s", p.Name, strings.Join(errs, "; "))
		}
		if names[p.Name] {
			s.errorf(svc, kind, "port name %q used twice", p.Name)
		}
		names[p.Name] = true
		target := p.TargetPort
		if target.Type == intstr.Int && target.IntVal == 0 {
			target = intstr.FromInt32(p.Port)
		}
		for _, d := range pods {
			cp, ct := findPortInPod(&d.Spec.Template.Spec, target)
			if cp == nil {
				s.errorf(svc, kind, "port %s: targetPort %s is no container port of Deployment %s", p.Name, target.String(), d.Name)
				continue
			}
			if cp.Name != p.Name || cp.ContainerPort != p.Port {
				s.errorf(svc, kind, "port %s/%d targets container %s port %s/%d: keep names and numbers the same on both sides", p.Name, p.Port, ct.Name, cp.Name, cp.ContainerPort)
			}
			if protocol(p.Protocol) != protocol(cp.Protocol) {
				s.errorf(svc, kind, "port %s: protocol %s, container port %s", p.Name, protocol(p.Protocol), protocol(cp.Protocol))
			}
		}
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone && svc.Spec.PublishNotReadyAddresses {
		s.errorf(svc, kind, "headless with publishNotReadyAddresses: clients would dial replicas that are starting or draining")
	}
}

// checkServiceShapes: one ClusterIP Service with grpc and http, one headless
// Service with grpc (the dns:/// target of client-side balancing).
func (s *set) checkServiceShapes() {
	var clusterIP, headless bool
	for _, svc := range s.services {
		has := map[string]bool{}
		for _, p := range svc.Spec.Ports {
			has[p.Name] = true
		}
		if svc.Spec.ClusterIP == corev1.ClusterIPNone {
			headless = headless || has["grpc"]
		} else if svc.Spec.Type == "" || svc.Spec.Type == corev1.ServiceTypeClusterIP {
			clusterIP = clusterIP || (has["grpc"] && has["http"])
		}
	}
	if !clusterIP {
		s.errs = append(s.errs, errors.New("no ClusterIP Service with ports grpc and http"))
	}
	if !headless {
		s.errs = append(s.errs, errors.New("no headless Service (clusterIP: None) with port grpc for client-side balancing"))
	}
}

func (s *set) checkHPA(h *autoscalingv2.HorizontalPodAutoscaler) {
	const kind = "HorizontalPodAutoscaler"
	ref := h.Spec.ScaleTargetRef
	var target *appsv1.Deployment
	for _, d := range s.deployments {
		if ref.Kind == "Deployment" && ref.Name == d.Name && ref.APIVersion == appsv1.SchemeGroupVersion.String() {
			target = d
		}
	}
	if target == nil {
		s.errorf(h, kind, "scaleTargetRef %s %s/%s is no Deployment here", ref.APIVersion, ref.Kind, ref.Name)
		return
	}
	minReplicas := int32(1)
	if h.Spec.MinReplicas != nil {
		minReplicas = *h.Spec.MinReplicas
	}
	if minReplicas < 2 {
		s.errorf(h, kind, "minReplicas %d: with one replica, a restart or a drain is an outage", minReplicas)
	}
	if h.Spec.MaxReplicas < minReplicas {
		s.errorf(h, kind, "maxReplicas %d < minReplicas %d", h.Spec.MaxReplicas, minReplicas)
	}
	if len(h.Spec.Metrics) == 0 {
		s.errorf(h, kind, "no metrics")
	}
	for _, m := range h.Spec.Metrics {
		switch m.Type {
		case autoscalingv2.ResourceMetricSourceType:
			if m.Resource == nil {
				s.errorf(h, kind, "Resource metric without resource")
				continue
			}
			if m.Resource.Target.Type == autoscalingv2.UtilizationMetricType {
				for _, ct := range target.Spec.Template.Spec.Containers {
					if _, ok := ct.Resources.Requests[m.Resource.Name]; !ok {
						s.errorf(h, kind, "%s utilization needs resources.requests.%s on container %s", m.Resource.Name, m.Resource.Name, ct.Name)
					}
				}
			}
		case autoscalingv2.PodsMetricSourceType:
			if m.Pods == nil {
				s.errorf(h, kind, "Pods metric without pods")
				continue
			}
			if !s.hasSeries(m.Pods.Metric.Name) {
				s.errorf(h, kind, "Pods metric %q: rewardd exports no such series (%s)", m.Pods.Metric.Name, strings.Join(MetricFiles, ", "))
			}
		}
	}
}

func (s *set) hasSeries(name string) bool {
	for _, m := range s.Metrics {
		if _, ok := m.Series()[name]; ok {
			return true
		}
	}
	return false
}

func (s *set) checkPDB(p *policyv1.PodDisruptionBudget) {
	const kind = "PodDisruptionBudget"
	if p.Spec.Selector == nil || (len(p.Spec.Selector.MatchLabels) == 0 && len(p.Spec.Selector.MatchExpressions) == 0) {
		s.errorf(p, kind, "empty selector (it would cover every pod of the namespace)")
		return
	}
	sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
	if err != nil {
		s.errorf(p, kind, "selector: %v", err)
		return
	}
	pods := s.podsOf(sel)
	if len(pods) == 0 {
		s.errorf(p, kind, "selector %s selects the pods of no Deployment", sel)
		return
	}
	if (p.Spec.MinAvailable == nil) == (p.Spec.MaxUnavailable == nil) {
		s.errorf(p, kind, "set exactly one of minAvailable and maxUnavailable")
		return
	}
	if mu := p.Spec.MaxUnavailable; mu != nil && mu.Type == intstr.Int && mu.IntVal < 1 {
		s.errorf(p, kind, "maxUnavailable %d blocks every drain", mu.IntVal)
	}
	for _, d := range pods {
		h := s.hpaFor(d)
		if h == nil || h.Spec.MinReplicas == nil {
			continue
		}
		if ma := p.Spec.MinAvailable; ma != nil && ma.Type == intstr.Int && ma.IntVal >= *h.Spec.MinReplicas {
			s.errorf(p, kind, "minAvailable %d >= HPA %s minReplicas %d: at the minimum, no drain can proceed", ma.IntVal, h.Name, *h.Spec.MinReplicas)
		}
	}
}

func (s *set) checkNetworkPolicy(np *networkingv1.NetworkPolicy) {
	const kind = "NetworkPolicy"
	if len(np.Spec.PodSelector.MatchLabels) == 0 && len(np.Spec.PodSelector.MatchExpressions) == 0 {
		s.errorf(np, kind, "empty podSelector: it would apply to every pod of the namespace")
		return
	}
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		s.errorf(np, kind, "podSelector: %v", err)
		return
	}
	if len(s.podsOf(sel)) == 0 {
		s.errorf(np, kind, "podSelector %s selects the pods of no Deployment", sel)
	}
}

func findPort(ct *corev1.Container, port intstr.IntOrString) *corev1.ContainerPort {
	for i := range ct.Ports {
		p := &ct.Ports[i]
		if (port.Type == intstr.String && p.Name == port.StrVal) || (port.Type == intstr.Int && p.ContainerPort == port.IntVal) {
			return p
		}
	}
	return nil
}

func findPortInPod(pod *corev1.PodSpec, port intstr.IntOrString) (*corev1.ContainerPort, *corev1.Container) {
	for i := range pod.Containers {
		if p := findPort(&pod.Containers[i], port); p != nil {
			return p, &pod.Containers[i]
		}
	}
	return nil, nil
}

func protocol(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsCap(list []corev1.Capability, c corev1.Capability) bool {
	for _, x := range list {
		if x == c {
			return true
		}
	}
	return false
}

var goMemLimit = regexp.MustCompile(`^([0-9]+)(B|KiB|MiB|GiB|TiB)?$`)

// parseGoMemLimit reads GOMEMLIMIT's syntax (runtime/debug.SetMemoryLimit):
// a byte count with an optional B, KiB, MiB, GiB or TiB suffix.
func parseGoMemLimit(v string) (int64, error) {
	m := goMemLimit.FindStringSubmatch(v)
	if m == nil {
		return 0, errors.New("want a number of bytes with an optional B, KiB, MiB, GiB or TiB suffix")
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, err
	}
	shift := map[string]uint{"": 0, "B": 0, "KiB": 10, "MiB": 20, "GiB": 30, "TiB": 40}[m[2]]
	return n << shift, nil
}
