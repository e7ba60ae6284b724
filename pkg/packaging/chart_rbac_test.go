package packaging

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A project that keeps a Role named as the manager's generated RBAC (a
// go/v3 operator-sdk project's Role beside its ClusterRole of one name)
// gets a chart whose objects have distinct names, in both RBAC scopes:
// Helm refuses to install two objects of one kind and name.
func TestManagerRBACNamesAvoidTheProjects(t *testing.T) {
	dir := copyProject(t, sdkDir)
	role := `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: manager
  namespace: system
rules:
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: manager
  namespace: system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: manager
subjects:
- kind: ServiceAccount
  name: controller-manager
  namespace: system
`
	if err := os.WriteFile(filepath.Join(dir, "config", "rbac", "own_role.yaml"), []byte(role), 0o644); err != nil {
		t.Fatal(err)
	}
	appendTo(t, filepath.Join(dir, "config", "rbac", "kustomization.yaml"), "- own_role.yaml\n")
	out, _ := packageTo(t, dir, PackageOptions{})
	chart := filepath.Join(out, chartsDir, "memcache-operator")
	for _, scope := range []string{"namespace", "cluster"} {
		t.Run(scope, func(t *testing.T) {
			seen := map[string]bool{}
			kept := false
			for _, d := range renderedDocs(t, render(t, chart, "ops", map[string]any{"rbac": map[string]any{"scope": scope}})) {
				md, _ := d["metadata"].(map[string]any)
				key := d["kind"].(string) + " " + str(md["namespace"]) + "/" + str(md["name"])
				if seen[key] {
					t.Errorf("two objects %s", key)
				}
				seen[key] = true
				kept = kept || key == "Role ops/kv-memcache-operator-manager"
			}
			if !kept {
				t.Errorf("the project's Role is not rendered as kv-memcache-operator-manager: %v", seen)
			}
		})
	}
}

// The manager's own ClusterRole named manager (cloudnative-pg's) is the
// manager's RBAC itself, folded into the chart's: it takes no other name
// for the generated RBAC, which keeps "manager".
func TestManagerRBACNamedManager(t *testing.T) {
	dir := copyProject(t, sdkDir)
	for _, f := range []string{"role.yaml", "role_binding.yaml"} {
		path := filepath.Join(dir, "config", "rbac", f)
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(readFile(t, path)), "name: manager-role\n", "name: manager\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, _ := packageTo(t, dir, PackageOptions{})
	chart := filepath.Join(out, chartsDir, "memcache-operator")
	for _, d := range renderedDocs(t, render(t, chart, "ops", map[string]any{"rbac": map[string]any{"scope": "cluster"}})) {
		md, _ := d["metadata"].(map[string]any)
		if d["kind"] == "ClusterRole" && strings.Contains(str(md["name"]), "manager-rules") {
			t.Errorf("the manager's ClusterRole is named %s, want kv-memcache-operator-ops-manager", str(md["name"]))
		}
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
