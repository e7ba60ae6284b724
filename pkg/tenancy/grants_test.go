package tenancy

import (
	"context"
	"slices"
	"strings"
	"testing"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/baseline"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestGrantPolicy: a release's ClusterRoleBindings grant only what the
// platform's named ClusterRoles cover (and get on the operator's own
// CRDs), only to the tenant's ServiceAccounts, and its ClusterRoles add
// nothing to other roles.
func TestGrantPolicy(t *testing.T) {
	reader := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "storage-reader"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"get", "list", "watch"}}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "admin"}, AggregationRule: &rbacv1.AggregationRule{
			ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-admin": "true"}}}},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: []string{"*"}}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cluster-admin"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}},
		// What the controller puts in a tenant namespace (actor.go).
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: ActorRole, Namespace: "ns-a"}, Rules: []rbacv1.PolicyRule{guardrailBypass}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: KindsRole, Namespace: "ns-a"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"kv.opctl.dev"}, Resources: []string{"kvstores"}, Verbs: baseline.OwnKindVerbs}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "platform-monitoring"}, AggregationRule: &rbacv1.AggregationRule{
			ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"example.com/monitoring": "true"}}}}},
	).Build()
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, k := range []string{"ClusterRole", "ClusterRoleBinding"} {
		mapper.Add(rbacv1.SchemeGroupVersion.WithKind(k), meta.RESTScopeRoot)
	}
	mapper.Add(rbacv1.SchemeGroupVersion.WithKind("RoleBinding"), meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolume"}, meta.RESTScopeRoot)
	mapper.Add(schema.GroupVersionKind{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"}, meta.RESTScopeRoot)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	mapper.Add(schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}, meta.RESTScopeRoot)
	role := func(name, labels, rules string) string {
		return "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: " + name + "\n" + labels + "rules:\n" + rules
	}
	binding := func(name, role, subject string) string {
		return "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: " + name +
			"\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: " + role + "\nsubjects:\n" + subject
	}
	nsBindingTo := func(kind, name, subject string) string {
		return "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: b\n  namespace: ns-a\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: " + kind + "\n  name: " + name + "\nsubjects:\n" + subject
	}
	nsBinding := func(kind, name string) string {
		return nsBindingTo(kind, name, "- kind: ServiceAccount\n  name: op\n  namespace: ns-a\n")
	}
	nsRole := func(rules string) string {
		return "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: r\n  namespace: ns-a\nrules:\n" + rules
	}
	netpol := func(peer string) string {
		return "---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: p\n  namespace: ns-a\nspec:\n  podSelector: {}\n  ingress:\n  - from:\n    - " + peer + "\n"
	}
	service := func(spec string) string {
		return "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  namespace: ns-a\nspec:\n  " + strings.ReplaceAll(strings.TrimSuffix(spec, "\n"), "\n", "\n  ") + "\n  ports:\n  - port: 80\n"
	}
	const (
		sa           = "- kind: ServiceAccount\n  name: op\n  namespace: ns-a\n"
		storage      = "- apiGroups: [storage.k8s.io]\n  resources: [storageclasses]\n  verbs: [get]\n"
		secrets      = "- apiGroups: ['']\n  resources: [secrets]\n  verbs: [get, list]\n"
		ownCRD       = "- apiGroups: [apiextensions.k8s.io]\n  resources: [customresourcedefinitions]\n  verbs: [get]\n  resourceNames: [kvstores.kv.opctl.dev]\n"
		everyCRD     = "- apiGroups: [apiextensions.k8s.io]\n  resources: [customresourcedefinitions]\n  verbs: [get]\n"
		aggregatable = "  labels:\n    rbac.authorization.k8s.io/aggregate-to-admin: \"true\"\n"
	)
	cases := []struct {
		name     string
		roles    []string
		manifest string
		want     string // a substring of the one finding, or ""
	}{
		{"allowed by a named role", []string{"storage-reader"}, role("r", "", storage) + binding("b", "r", sa), ""},
		{"not allowed", nil, role("r", "", "- apiGroups: ['']\n  resources: [nodes]\n  verbs: [get]\n") + binding("b", "r", sa), "grants get nodes cluster-wide"},
		{"the shipped baseline", nil, role("r", "", storage+"- apiGroups: [authentication.k8s.io]\n  resources: [tokenreviews]\n  verbs: [create]\n- apiGroups: [authorization.k8s.io]\n  resources: [subjectaccessreviews]\n  verbs: [create]\n") + binding("b", "r", sa), ""},
		{"namespaced rules cluster-wide", []string{"storage-reader"}, role("r", "", secrets) + binding("b", "r", sa), "grants get,list secrets cluster-wide"},
		{"a named role bound as is", []string{"storage-reader"}, binding("b", "storage-reader", sa), ""},
		{"cluster-admin", []string{"storage-reader"}, binding("b", "cluster-admin", sa), "binds ClusterRole cluster-admin, which the release does not define"},
		{"system:auth-delegator, the baseline's reviews", nil, binding("b", "system:auth-delegator", sa), ""},
		{"system:auth-delegator to a user", nil, binding("b", "system:auth-delegator", "- apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: owner\n"), "to User owner"},
		{"system:kube-controller-manager", nil, binding("b", "system:kube-controller-manager", sa), "binds ClusterRole system:kube-controller-manager, which the release does not define"},
		{"an APIService", nil, "---\napiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: v1beta1.metrics.example.com\nspec:\n  group: metrics.example.com\n  version: v1beta1\n  groupPriorityMinimum: 100\n  versionPriority: 100\n  service:\n    name: s\n    namespace: ns-a\n", "APIService v1beta1.metrics.example.com is cluster-scoped: an APIService serves the API group metrics.example.com to the whole cluster"},
		{"a Namespace", nil, "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: extra\n", "Namespace extra is cluster-scoped: a tenant's release may create only ClusterRoles"},
		{"an APIService its template gates", nil, "---\n# Source: kv/templates/apiservice.yaml\napiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: v1beta1.metrics.example.com\nspec:\n  group: metrics.example.com\n  version: v1beta1\n  groupPriorityMinimum: 100\n  versionPriority: 100\n  service:\n    name: s\n    namespace: ns-a\n", "APIService v1beta1.metrics.example.com is cluster-scoped: an APIService serves the API group metrics.example.com to the whole cluster (the API server sends every namespace's requests for it to the Service it names), so a tenant cannot own one: install the operator that serves it once for the cluster; apiService.enabled=false leaves it out"},
		{"to a user", []string{"storage-reader"}, role("r", "", storage) + binding("b", "r", "- apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: owner\n"), "to User owner"},
		{"to a group", []string{"storage-reader"}, binding("b", "storage-reader", "- apiGroup: rbac.authorization.k8s.io\n  kind: Group\n  name: system:authenticated\n"), "to Group system:authenticated"},
		{"to another namespace's account", []string{"storage-reader"}, role("r", "", storage) + binding("b", "r", "- kind: ServiceAccount\n  name: op\n  namespace: kube-system\n"), "ServiceAccount kube-system/op"},
		{"the operator's own CRD", nil, role("r", "", ownCRD) + binding("b", "r", sa), ""},
		{"every CRD", nil, role("r", "", everyCRD) + binding("b", "r", sa), "grants get apiextensions.k8s.io/customresourcedefinitions cluster-wide"},
		{"aggregated into admin", nil, role("r", aggregatable, storage), "label rbac.authorization.k8s.io/aggregate-to-admin"},
		{"the operator's kinds aggregated into admin", nil, role("r", aggregatable, "- apiGroups: [kv.opctl.dev]\n  resources: [kvstores, kvstores/status]\n  verbs: [get, list, watch, create, update, patch, delete]\n"), ""},
		{"every verb on the operator's kinds aggregated into admin", nil, role("r", aggregatable, "- apiGroups: [kv.opctl.dev]\n  resources: [kvstores]\n  verbs: ['*']\n"), "label rbac.authorization.k8s.io/aggregate-to-admin"},
		{"another kind aggregated into admin", nil, role("r", aggregatable, "- apiGroups: [kv.opctl.dev]\n  resources: [kvstores, kvbackups]\n  verbs: [get]\n"), "label rbac.authorization.k8s.io/aggregate-to-admin"},
		{"aggregated by the platform's label", nil, role("r", "  labels:\n    example.com/monitoring: \"true\"\n", storage), "its labels match example.com/monitoring=true"},
		{"other labels", nil, role("r", "  labels:\n    app.kubernetes.io/name: kv\n", storage), ""},
		{"an aggregating role", nil, "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\naggregationRule:\n  clusterRoleSelectors:\n  - matchLabels:\n      rbac.authorization.k8s.io/aggregate-to-edit: \"true\"\n", "aggregates other roles"},
		{"a PersistentVolume", nil, "---\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: pv\nspec:\n  hostPath:\n    path: /\n", "PersistentVolume pv is cluster-scoped"},
		{"a PriorityClass", nil, "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: p\nvalue: 1000000000\nglobalDefault: true\n", "PriorityClass p is cluster-scoped"},
		{"a webhook calling a URL", nil, "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: w\nwebhooks:\n- name: a.example.com\n  clientConfig:\n    url: https://collector.example.com/\n", "calls the URL https://collector.example.com/"},
		{"a webhook calling another namespace", nil, "---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata:\n  name: w\nwebhooks:\n- name: a.example.com\n  clientConfig:\n    service:\n      name: s\n      namespace: other\n", "in namespace other"},
		{"a webhook calling the tenant", nil, "---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata:\n  name: w\nwebhooks:\n- name: a.example.com\n  clientConfig:\n    service:\n      name: s\n      namespace: ns-a2\n", ""},
		{"a webhook with matchConditions of its own", nil, "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: w\nwebhooks:\n- name: a.example.com\n  clientConfig:\n    service:\n      name: s\n      namespace: ns-a\n  matchConditions:\n  - name: spend\n    expression: 'true'\n", "webhook a.example.com has matchConditions of its own (spend)"},
		{"a webhook with only the narrowing's matchCondition", nil, "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: w\nwebhooks:\n- name: a.example.com\n  clientConfig:\n    service:\n      name: s\n      namespace: ns-a\n  matchConditions:\n  - name: opctl-tenant-requests\n    expression: 'true'\n", ""},
		{"a RoleBinding of cluster-admin in the tenant", nil, nsBinding("ClusterRole", "cluster-admin"), "RoleBinding ns-a/b of ClusterRole cluster-admin grants *"},
		{"a RoleBinding of admin in the tenant", nil, nsBinding("ClusterRole", "admin"), ""},
		{"a RoleBinding to kubebuilder's placeholder namespace", nil, nsBindingTo("ClusterRole", "view", "- kind: ServiceAccount\n  name: controller-manager\n  namespace: system\n"), "RoleBinding ns-a/b grants its role to ServiceAccount system/controller-manager, which is not the tenant's"},
		{"a RoleBinding to another tenant namespace's account", nil, nsBindingTo("ClusterRole", "view", "- kind: ServiceAccount\n  name: op\n  namespace: ns-a2\n"), ""},
		{"a RoleBinding to its namespace's account, implicitly", nil, nsBindingTo("ClusterRole", "view", "- kind: ServiceAccount\n  name: op\n"), ""},
		{"a RoleBinding to an account by user name", nil, nsBindingTo("ClusterRole", "view", "- apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: system:serviceaccount:kube-system:op\n"), "grants its role to User system:serviceaccount:kube-system:op"},
		{"a RoleBinding to every account of a namespace", nil, nsBindingTo("ClusterRole", "view", "- apiGroup: rbac.authorization.k8s.io\n  kind: Group\n  name: system:serviceaccounts:kube-system\n"), "grants its role to Group system:serviceaccounts:kube-system"},
		{"a RoleBinding to the tenant's accounts as a group", nil, nsBindingTo("ClusterRole", "view", "- apiGroup: rbac.authorization.k8s.io\n  kind: Group\n  name: system:serviceaccounts:ns-a\n"), ""},
		{"a RoleBinding to every account", nil, nsBindingTo("ClusterRole", "view", "- apiGroup: rbac.authorization.k8s.io\n  kind: Group\n  name: system:serviceaccounts\n"), "grants its role to Group system:serviceaccounts"},
		{"a RoleBinding to every user", nil, nsBindingTo("ClusterRole", "view", "- apiGroup: rbac.authorization.k8s.io\n  kind: Group\n  name: system:authenticated\n"), "grants its role to Group system:authenticated"},
		{"a RoleBinding to a user", nil, nsBindingTo("ClusterRole", "view", "- apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: alice\n"), ""},
		{"a RoleBinding to a group", nil, nsBindingTo("ClusterRole", "view", "- apiGroup: rbac.authorization.k8s.io\n  kind: Group\n  name: team-a\n"), ""},
		{"a ClusterRoleBinding to kubebuilder's placeholder namespace", nil, binding("b", "system:auth-delegator", "- kind: ServiceAccount\n  name: controller-manager\n  namespace: system\n"), "ClusterRoleBinding b grants cluster-wide rights to ServiceAccount system/controller-manager, not a ServiceAccount of the tenant"},
		{"a RoleBinding of a role nobody wrote yet", nil, nsBinding("ClusterRole", "later"), "which does not exist"},
		{"a RoleBinding of the actor's Role", nil, nsBinding("Role", ActorRole), "RoleBinding ns-a/b of Role ns-a/tenant-actor grants bypass tenancy.opctl.dev/guardrails"},
		{"a RoleBinding of the operator's kinds", nil, nsBinding("Role", KindsRole), ""},
		{"a RoleBinding of a Role nobody wrote yet", nil, nsBinding("Role", "later"), "RoleBinding ns-a/b of Role ns-a/later, which does not exist"},
		{"a Role within admin", nil, nsRole("- apiGroups: ['']\n  resources: [configmaps]\n  verbs: [get, update]\n") + nsBinding("Role", "r"), ""},
		{"a Role on the operator's own kinds", nil, nsRole("- apiGroups: [kv.opctl.dev]\n  resources: [kvstores/status, kvstores/finalizers]\n  verbs: [update]\n"), ""},
		{"a Role on the namespace object", nil, nsRole("- apiGroups: ['']\n  resources: [namespaces, resourcequotas/status]\n  verbs: [update]\n"), "Role ns-a/r grants update namespaces, update resourcequotas/status"},
		{"a Role named by the platform", []string{"storage-reader"}, nsRole(storage), ""},
		{"a NodePort Service", nil, service("type: NodePort\n"), "is a NodePort Service"},
		{"a LoadBalancer Service", nil, service("type: LoadBalancer\n"), "is a LoadBalancer Service"},
		{"externalIPs", nil, service("externalIPs: [8.8.8.8]\n"), "sets externalIPs"},
		{"a ClusterIP Service", nil, service("type: ClusterIP\n"), ""},
		{"an ExternalName Service", nil, "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  namespace: ns-a\nspec:\n  type: ExternalName\n  externalName: db.example.com\n", "is an ExternalName Service"},
		{"an Ingress", nil, "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: i\n  namespace: ns-a\nspec:\n  defaultBackend:\n    service:\n      name: s\n      port:\n        number: 80\n", "the profile does not allow Ingresses"},
		{"a NetworkPolicy open to every namespace, locked", []string{"lock"}, netpol("namespaceSelector: {}"), "selects namespaces in ingress by other than tenancy.opctl.dev/tenant=a"},
		{"a NetworkPolicy open to the tenant, locked", []string{"lock"}, netpol("namespaceSelector:\n        matchLabels:\n          tenancy.opctl.dev/tenant: a"), ""},
		{"a NetworkPolicy open to every namespace, unlocked", nil, netpol("namespaceSelector: {}"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := guard.GrantPolicy{Roles: tc.roles, Tenant: "a", Gates: map[string]string{"kv/templates/apiservice.yaml": "apiService.enabled"}, LockNetworkPolicies: slices.Contains(tc.roles, "lock"), Crds: []string{"kvstores.kv.opctl.dev"}, Namespaces: []string{"ns-a", "ns-a2"}, Reader: reader, Mapper: mapper,
				Kinds: func(context.Context) ([]string, error) { return []string{"kvstores.kv.opctl.dev"}, nil }}
			got, err := g.Check(context.Background(), guard.ManifestDocs(tc.manifest))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(got) != 0 {
					t.Errorf("findings %v, want none", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Errorf("findings %v, want one with %q", got, tc.want)
			}
		})
	}
}

// A refusal names the commonest cause: the operator's CRD exists but
// nobody shared it with tenants, and says how to share it.
func TestUnsharedHint(t *testing.T) {
	manifest := "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\nrules:\n- apiGroups: [kv.opctl.dev]\n  resources: [kvstores]\n  verbs: [get]\n" +
		"---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: b\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: r\nsubjects:\n- kind: ServiceAccount\n  name: op\n  namespace: ns-a\n"
	for _, tc := range []struct {
		name   string
		labels map[string]string
		hint   bool
	}{
		{"unlabelled", nil, true},
		{"shared", map[string]string{tenancyv1.LabelSharedCRD: "true"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "kvstores.kv.opctl.dev", Labels: tc.labels}}
			reader := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(crd).Build()
			mapper := meta.NewDefaultRESTMapper(nil)
			for _, k := range []string{"ClusterRole", "ClusterRoleBinding"} {
				mapper.Add(rbacv1.SchemeGroupVersion.WithKind(k), meta.RESTScopeRoot)
			}
			g := guard.GrantPolicy{Crds: []string{crd.Name}, Namespaces: []string{"ns-a"}, Reader: reader, Mapper: mapper}
			got, err := g.Check(context.Background(), guard.ManifestDocs(manifest))
			if err != nil {
				t.Fatal(err)
			}
			hinted := slices.ContainsFunc(got, func(f string) bool {
				return strings.Contains(f, "kubectl label crd kvstores.kv.opctl.dev "+tenancyv1.LabelSharedCRD+"=true")
			})
			if len(got) == 0 || hinted != tc.hint {
				t.Errorf("findings %q: hint %v, want a refusal with hint %v", got, hinted, tc.hint)
			}
		})
	}
}
