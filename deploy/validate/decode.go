// Package validate checks rewardd's deployment files offline: the Kubernetes
// manifests in deploy/kubernetes (string scorers, unprivileged) and the
// overlay deploy/kubernetes-code-exec (code_exec, with exactly the sandbox's
// privileges) against the typed API of k8s.io/api (the schema the API server
// decodes into), each kustomization as kustomize builds it, the wiring
// between the objects and the rewardd binary (flags, ports, probes, grace
// period, the sandbox's needs), deploy/Dockerfile's two images, and the
// Grafana dashboard against the metrics the server registers.
//
// It is its own Go module so that the service's go.mod does not carry the
// Kubernetes libraries. Run it with `make check-deploy`, or
// `cd deploy/validate && go test ./...`.
package validate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Object is one decoded manifest: a typed k8s.io/api value and where it
// came from.
type Object struct {
	Source string // file name, with the document's index when a file holds several
	GVK    schema.GroupVersionKind
	Name   string
	Value  any // *appsv1.Deployment, *corev1.Service, …
}

// kinds are the API types the manifests may use. A kind not listed here is
// an error: add it (with its checks) rather than let it through unchecked.
var kinds = map[schema.GroupVersionKind]func() any{
	appsv1.SchemeGroupVersion.WithKind("Deployment"):                     func() any { return new(appsv1.Deployment) },
	corev1.SchemeGroupVersion.WithKind("Service"):                        func() any { return new(corev1.Service) },
	corev1.SchemeGroupVersion.WithKind("ConfigMap"):                      func() any { return new(corev1.ConfigMap) },
	corev1.SchemeGroupVersion.WithKind("Secret"):                         func() any { return new(corev1.Secret) },
	autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"): func() any { return new(autoscalingv2.HorizontalPodAutoscaler) },
	policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"):          func() any { return new(policyv1.PodDisruptionBudget) },
	networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy"):            func() any { return new(networkingv1.NetworkPolicy) },
}

// Decode splits a multi-document YAML stream and decodes each document
// strictly into its typed API object: an unknown or misspelt field, a
// duplicate key, a value of the wrong type (a string where the API wants a
// number, a malformed quantity) or an unknown apiVersion/kind is an error.
func Decode(source string, data []byte) ([]Object, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []Object
	var errs []error
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		where := source
		if i > 0 {
			where = fmt.Sprintf("%s (document %d)", source, i+1)
		}
		obj, err := decodeOne(where, doc)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		objs = append(objs, obj)
	}
	return objs, errors.Join(errs...)
}

func decodeOne(where string, doc []byte) (Object, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return Object{}, fmt.Errorf("%s: %w", where, err)
	}
	gvk := schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind)
	newObj, ok := kinds[gvk]
	if !ok {
		return Object{}, fmt.Errorf("%s: apiVersion %q kind %q: not a kind this validator knows (known: %v)", where, tm.APIVersion, tm.Kind, knownKinds())
	}
	v := newObj()
	if err := yaml.UnmarshalStrict(doc, v); err != nil {
		return Object{}, fmt.Errorf("%s: %s: %w", where, gvk.Kind, err)
	}
	name := v.(metav1.Object).GetName()
	if name == "" {
		return Object{}, fmt.Errorf("%s: %s without metadata.name", where, gvk.Kind)
	}
	return Object{Source: where, GVK: gvk, Name: name, Value: v}, nil
}

func knownKinds() []string {
	var out []string
	for gvk := range kinds {
		out = append(out, gvk.GroupVersion().String()+"/"+gvk.Kind)
	}
	return sortedStrings(out)
}

// stripComments drops comment-only lines, so that a document of comments
// alone counts as empty.
func stripComments(doc []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			out = append(out, line...)
			out = append(out, '\n')
		}
	}
	return out
}
