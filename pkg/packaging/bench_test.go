package packaging

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func BenchmarkPackageSample(b *testing.B) {
	out := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Package(context.Background(), sampleDir, PackageOptions{Out: out}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPackageLarge packages a synthetic project of 50 CRDs and a
// ClusterRole of 5,000 rules.
func BenchmarkPackageLarge(b *testing.B) {
	dir := largeProject(b, 50, 5000)
	out := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Package(context.Background(), dir, PackageOptions{Out: out}); err != nil {
			b.Fatal(err)
		}
	}
}

// largeProject writes a project with crds CRDs and rules RBAC rules.
func largeProject(tb testing.TB, crds, rules int) string {
	tb.Helper()
	dir := tb.TempDir()
	write := func(rel, content string) { mustWrite(tb, filepath.Join(dir, rel), content) }
	write("opctl.yaml", "name: large-operator\nversion: 2.0.0\nprovider: {name: Example}\nminKubeVersion: 1.30.0\n")
	var crdList, roleRules strings.Builder
	for i := range crds {
		name := fmt.Sprintf("thing%02ds", i)
		crdList.WriteString("- bases/" + name + ".yaml\n")
		write("config/crd/bases/"+name+".yaml", fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s.large.example.com
spec:
  group: large.example.com
  names: {kind: Thing%02[2]d, listKind: Thing%02[2]dList, plural: %[1]s, singular: thing%02[2]d}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        description: Thing %[2]d.
        type: object
        properties:
          spec:
            description: Spec.
            type: object
            properties:
              size: {description: Size., type: integer}
              mode: {description: Mode., type: string, enum: [a, b]}
          status:
            description: Status.
            type: object
            properties:
              conditions: {description: Conditions., type: array, items: {type: object}}
`, name, i))
	}
	for i := range rules {
		group := "large.example.com"
		res := fmt.Sprintf("thing%02ds", i%crds)
		if i%10 == 0 {
			group, res = "", []string{"configmaps", "nodes", "secrets", "persistentvolumes"}[i/10%4]
		}
		fmt.Fprintf(&roleRules, "- apiGroups: [%q]\n  resources: [%s]\n  resourceNames: [r%d]\n  verbs: [get, list]\n", group, res, i)
	}
	write("config/crd/kustomization.yaml", "resources:\n"+crdList.String())
	writeManagerRBAC(write, "role.yaml", roleRules.String())
	write("config/manager/kustomization.yaml", "resources:\n- manager.yaml\n")
	write("config/manager/manager.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: controller-manager, namespace: system}
spec:
  selector: {matchLabels: {control-plane: controller-manager}}
  template:
    metadata: {labels: {control-plane: controller-manager}}
    spec:
      serviceAccountName: controller-manager
      containers: [{name: manager, image: example.com/large:2.0.0}]
`)
	write("config/default/kustomization.yaml", "namespace: large-system\nnamePrefix: large-\nresources:\n- ../crd\n- ../rbac\n- ../manager\n")
	if _, err := os.Stat(filepath.Join(dir, "config/default")); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// writeManagerRBAC writes config/rbac as file: the manager's
// ServiceAccount, a ClusterRole with rules (YAML list items) and its
// binding.
func writeManagerRBAC(write func(rel, content string), file, rules string) {
	write("config/rbac/kustomization.yaml", "resources:\n- "+file+"\n")
	write("config/rbac/"+file, `apiVersion: v1
kind: ServiceAccount
metadata: {name: controller-manager, namespace: system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: manager-role}
rules:
`+rules+`---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: manager-rolebinding}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: manager-role}
subjects: [{kind: ServiceAccount, name: controller-manager, namespace: system}]
`)
}

// The synthetic project packages and validates like a real one.
func TestLargeProjectPackages(t *testing.T) {
	dir := largeProject(t, 50, 5000)
	out, res := packageTo(t, dir, PackageOptions{})
	if len(res.Files) < 100 {
		t.Errorf("%d files for 50 CRDs", len(res.Files))
	}
	if errs := validateBundle(t, filepath.Join(out, "bundle", "large-operator")); len(errs) > 0 {
		t.Errorf("bundle errors: %v", errs[:min(3, len(errs))])
	}
}

// largeCRDProject is a project whose overlay carries about 1.7 MB of CRD
// YAML.
func largeCRDProject(tb testing.TB) string {
	dir := tb.TempDir()
	writeManyCRDs(tb, dir, 60, 16, 2)
	return dir
}

// BenchmarkPackageLargeCRDs packages a project with about 1.7 MB of CRDs
// beside the kustomize build of the same overlay in the same process, the
// floor any packager of the overlay pays. Compare the two ns/op.
func BenchmarkPackageLargeCRDs(b *testing.B) {
	dir := largeCRDProject(b)
	var size int64
	files, _ := filepath.Glob(filepath.Join(dir, "config", "crd", "bases", "*.yaml"))
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			size += fi.Size()
		}
	}
	b.Logf("%d CRDs, %.2f MB of YAML", len(files), float64(size)/1e6)
	b.Run("kustomize", func(b *testing.B) {
		for b.Loop() { // what kubectl kustomize does: build, then print YAML
			rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(dir, "config", "default"))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := rm.AsYaml(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("package", func(b *testing.B) {
		out := b.TempDir()
		for b.Loop() {
			if _, err := Package(context.Background(), dir, PackageOptions{Out: out}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
