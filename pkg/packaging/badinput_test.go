package packaging

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBadInputGivesClearErrors(t *testing.T) {
	big := strings.Repeat("x", MaxObjectBytes)
	tests := []struct {
		name   string
		opts   Options
		mutate func(t *testing.T, dir string)
		want   []string
	}{
		{"missing overlay", Options{Overlay: "config/nope"}, nil, []string{"config/nope not found", "--overlay"}},
		{"broken YAML", Options{}, func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "config/manager/manager.yaml"), "apiVersion: v1\nkind: [Namespace\n")
		}, []string{"building kustomize overlay", "config/default"}},
		{"kustomize error", Options{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/rbac/kustomization.yaml"), "- missing.yaml\n")
		}, []string{"building kustomize overlay", "missing.yaml"}},
		{"no manager", Options{}, func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, "config/manager/manager.yaml"), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: system\n")
		}, []string{"no Deployment in the overlay", "config/manager"}},
		{"unknown manager", Options{Manager: "ghost"}, nil, []string{`manager Deployment "ghost" not found`}},
		{"CRD without schema", Options{}, func(t *testing.T, dir string) {
			p := filepath.Join(dir, "config/crd/bases/kv.opctl.dev_kvstores.yaml")
			mustWrite(t, p, strings.Replace(string(readFile(t, p)), "openAPIV3Schema:", "openAPIV3SchemaX:", 1))
		}, []string{"kvstores.kv.opctl.dev", "spec.versions[0] (v1alpha1) has no schema.openAPIV3Schema"}},
		{"object over 1 MiB", Options{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/manager/manager.yaml"), "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: huge\n  namespace: system\ndata:\n  blob: "+big+"\n")
			appendTo(t, filepath.Join(dir, "config/manager/kustomization.yaml"), "")
		}, []string{"ConfigMap kvstore-huge", "bytes the API server can store"}},
		{"unknown opctl.yaml field", Options{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, ConfigFile), "colour: blue\n")
		}, []string{"opctl.yaml", `unknown field "colour"`}},
		{"unprintable opctl.yaml text", Options{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, ConfigFile), "keywords: [ok, \"bell\\u0007\"]\n")
		}, []string{"opctl.yaml", `keywords[1] holds the unprintable character "\a"`}},
		{"minKubeVersion not SemVer", Options{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, ConfigFile), "minKubeVersion: \"1.30.x\"\n")
		}, []string{"opctl.yaml", `minKubeVersion "1.30.x" is not SemVer`}},
		{"bad operand quantity", Options{}, func(t *testing.T, dir string) {
			p := filepath.Join(dir, ConfigFile)
			mustWrite(t, p, strings.Replace(string(readFile(t, p)), "cpu: 110m", "cpu: lots", 1))
		}, []string{"operands.kvstores.kv.opctl.dev.resources.requests.cpu", `"lots": not a quantity`}},
		{"a kind that cannot be per release", Options{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/manager/manager.yaml"), "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: worker-1\n")
		}, []string{"Node kvstore-worker-1", "cannot install a Node per release", "nodes are the cluster's"}},
		{"a remote base that cannot be fetched", Options{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/default/kustomization.yaml"), "- https://example.invalid/op//config/extra?ref=v1.0.0\n")
		}, []string{"the remote base https://example.invalid/op//config/extra?ref=v1.0.0 could not be fetched", "vendor the base"}},
		{"helmCharts", Options{}, func(t *testing.T, dir string) {
			appendTo(t, filepath.Join(dir, "config/default/kustomization.yaml"), "helmCharts:\n- name: redis\n  repo: https://charts.example.invalid\n  version: 1.0.0\n")
		}, []string{"uses helmCharts", "--enable-helm", "helm template"}},
		{"bad version", Options{Version: "one"}, nil, []string{`version "one" is not SemVer`}},
		// The CSV validator refuses version 0.0.0 (csv.Spec.Version must be set).
		{"version 0.0.0", Options{Version: "0.0.0"}, nil, []string{"version 0.0.0: OLM reads a CSV of version 0.0.0 as having none"}},
		{"bad name", Options{Name: "Bad_Name"}, nil, []string{`"Bad_Name" is not a DNS label`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyProject(t, sampleDir)
			if tt.mutate != nil {
				tt.mutate(t, dir)
			}
			out := t.TempDir()
			_, err := Package(context.Background(), dir, PackageOptions{Load: tt.opts, Out: out})
			if err == nil {
				t.Fatal("Package succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Count(err.Error(), "\n") > 2 {
				t.Errorf("error is not short: %q", err)
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("a failed run wrote %d entries to --out", len(entries))
			}
		})
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	mustWrite(t, path, string(readFile(t, path))+s)
}
