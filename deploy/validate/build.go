package validate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// Build renders the kustomization in dir as `kubectl apply -k dir` would
// (kustomize's own library, the one kubectl embeds) and decodes the result
// strictly.
func Build(dir string) ([]Object, []byte, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	out, err := rm.AsYaml()
	if err != nil {
		return nil, nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	objs, err := Decode("kustomize build "+dir, out)
	return objs, out, err
}

// ReadKustomization decodes dir/kustomization.yaml strictly into kustomize's
// Kustomization type.
func ReadKustomization(dir string) (*types.Kustomization, error) {
	path := filepath.Join(dir, "kustomization.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var k types.Kustomization
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &k, nil
}

// ManifestFiles lists the *.yaml files of dir that hold Kubernetes objects:
// all but kustomization.yaml and the files its generators read.
func ManifestFiles(dir string, k *types.Kustomization) ([]string, error) {
	generated := map[string]bool{"kustomization.yaml": true}
	for _, g := range k.ConfigMapGenerator {
		for _, f := range g.FileSources {
			generated[filepath.Base(f)] = true
		}
	}
	for _, g := range k.SecretGenerator {
		for _, f := range g.FileSources {
			generated[filepath.Base(f)] = true
		}
	}
	matches, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		if !generated[filepath.Base(m)] {
			out = append(out, filepath.Base(m))
		}
	}
	slices.Sort(out)
	return out, nil
}
