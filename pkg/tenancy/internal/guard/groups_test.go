package guard

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy/baseline"
)

func TestReservedGroups(t *testing.T) {
	for _, tc := range []struct {
		group    string
		reserved bool
	}{
		{"tenancy.opctl.dev", true},
		{"sharding.opctl.dev", true},
		{"operators.coreos.com", true},
		{"discovery.k8s.io", true},
		{"k8s.io", true},
		{"x.kubernetes.io", true},
		{"kv.opctl.dev", false},
		{"tenancy.opctl.dev.example.com", false},
		{"mytenancy.opctl.dev", false},
	} {
		crd := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: tc.group}}
		crd.Name = "things." + tc.group
		// No discovery: the reserved names alone; a fake reader holds no CRD.
		err := GroupsReserved(context.Background(), fake.NewClientBuilder().Build(), nil, []*apiextensionsv1.CustomResourceDefinition{crd})
		if got := err != nil; got != tc.reserved {
			t.Errorf("group %s: refused %v (%v), want %v", tc.group, got, err, tc.reserved)
		}
		if err != nil && !operatorkit.IsTerminal(err) {
			t.Errorf("group %s: %v is not terminal", tc.group, err)
		}
	}
}

// Rules an aggregated ClusterRole adds to admin, edit and view may name
// the operator's own kinds with the standard verbs only.
func TestOwnCustomResourcesVerbs(t *testing.T) {
	g := GrantPolicy{Kinds: func(context.Context) ([]string, error) { return []string{"widgets.example.com"}, nil }}
	for _, tc := range []struct {
		verbs []string
		own   bool
	}{
		{[]string{"get", "list", "watch"}, true},
		{baseline.OwnKindVerbs, true},
		{[]string{"*"}, false},
		{[]string{"get", "bypass"}, false},
		{[]string{"escalate"}, false},
	} {
		own, err := g.ownCustomResources(context.Background(), []rbacv1.PolicyRule{{APIGroups: []string{"example.com"}, Resources: []string{"widgets"}, Verbs: tc.verbs}})
		if err != nil || own != tc.own {
			t.Errorf("verbs %v: own %v (%v), want %v", tc.verbs, own, err, tc.own)
		}
	}
}
