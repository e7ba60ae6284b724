package guard

import (
	"slices"
	"strings"
	"testing"
)

func TestLocalize(t *testing.T) {
	const (
		role = "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: %s\nrules:\n- apiGroups: ['']\n  resources: [configmaps]\n  verbs: [get]\n- nonResourceURLs: [/metrics]\n  verbs: [get]\n"
		crb  = "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: b\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: %s\nsubjects: []\n"
		rb   = "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: b\n  namespace: %s\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: %s\nsubjects: []\n"
		aggr = "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: %s\naggregationRule:\n  clusterRoleSelectors: []\n"
	)
	f := func(format string, args ...string) string {
		for _, a := range args {
			format = strings.Replace(format, "%s", a, 1)
		}
		return format
	}
	cases := []struct {
		name     string
		manifest string
		want     []string // kind namespace/name (roleRef kind) of each object, in order
	}{
		{"bound cluster-wide stays", f(role, "r") + f(crb, "r"), []string{"ClusterRole /r", "ClusterRoleBinding /b (ClusterRole)"}},
		{"bound in a namespace becomes a Role there", f(role, "r") + f(rb, "ns-b", "r"), []string{"Role ns-b/r", "RoleBinding ns-b/b.local (Role)"}},
		{"bound both ways stays", f(role, "r") + f(rb, "ns-a", "r") + f(crb, "r"), []string{"ClusterRole /r", "RoleBinding ns-a/b (ClusterRole)", "ClusterRoleBinding /b (ClusterRole)"}},
		{"unbound goes to every namespace", f(role, "r"), []string{"Role ns-a/r", "Role ns-b/r"}},
		{"a binding of another role is kept", f(rb, "ns-a", "admin"), []string{"RoleBinding ns-a/b (ClusterRole)"}},
		{"an aggregating role is left to the policy", f(aggr, "r"), []string{"ClusterRole /r"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, d := range localize(ManifestDocs(tc.manifest), []string{"ns-a", "ns-b"}) {
				s := d.Obj.GetKind() + " " + d.Obj.GetNamespace() + "/" + d.Obj.GetName()
				if kind, ok := d.Obj.Object["roleRef"].(map[string]any); ok {
					s += " (" + kind["kind"].(string) + ")"
				}
				if d.Obj.GetKind() == "Role" {
					rules := d.Obj.Object["rules"].([]any)
					if len(rules) != 1 || strings.Contains(manifestString(t, d), "nonResourceURLs") {
						t.Errorf("Role %s rules %v, want configmaps only", d.Obj.GetName(), rules)
					}
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func manifestString(t *testing.T, d ManifestDoc) string {
	b, err := manifestYAML(d.Obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
