package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// What real charts carry that a tenant cannot hold (issue 46, item 5),
// each refused before anything is installed, naming the object and why:
// an APIService (keda's and kueue's charts register one for the metrics
// or visibility API), gated by a value or not; and bindings whose
// subject is a ServiceAccount outside the tenant, as a kubebuilder
// project's RBAC leaves them when kustomize did not rewrite the
// namespace "system". A binding to the tenant's own account installs.
func TestClusterObjectsRefused(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	apiService := func(id string) string {
		return "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: v1beta1.metrics-" + id + ".example.com\nspec:\n" +
			"  group: metrics-" + id + ".example.com\n  version: v1beta1\n  groupPriorityMinimum: 100\n  versionPriority: 100\n" +
			"  insecureSkipTLSVerify: true\n  service:\n    name: metrics\n    namespace: {{ .Release.Namespace }}\n"
	}
	const service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: metrics\nspec:\n  ports:\n  - port: 443\n"
	const role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\nrules:\n- apiGroups: ['']\n  resources: [configmaps]\n  verbs: [get, list, watch]\n"
	const account = "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: controller-manager\n"
	roleBinding := func(subjectNamespace string) string {
		return "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: reader\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: reader\n" +
			"subjects:\n- kind: ServiceAccount\n  name: controller-manager\n" + subjectNamespace
	}
	cases := []struct {
		name  string
		files func(id string) map[string]string
		// refused: a substring of the Degraded condition's message, or ""
		// for an install.
		refused []string
	}{
		{"apiservice", func(id string) map[string]string {
			return map[string]string{"Chart.yaml": chartYAML, "templates/service.yaml": service, "templates/apiservice.yaml": apiService(id)}
		}, []string{"APIService v1beta1.metrics-ID.example.com", "serves the API group metrics-ID.example.com to the whole cluster"}},
		{"gated apiservice", func(id string) map[string]string {
			return map[string]string{"Chart.yaml": chartYAML, "values.yaml": "apiService:\n  enabled: true\n", "templates/service.yaml": service,
				"templates/apiservice.yaml": "{{- if .Values.apiService.enabled }}\n" + apiService(id) + "{{- end }}\n"}
		}, []string{"APIService v1beta1.metrics-ID.example.com", "apiService.enabled=false leaves it out"}},
		{"rolebinding to system", func(id string) map[string]string {
			return map[string]string{"Chart.yaml": chartYAML, "templates/sa.yaml": account, "templates/role.yaml": role, "templates/rb.yaml": roleBinding("  namespace: system\n")}
		}, []string{"RoleBinding NS/reader grants its role to ServiceAccount system/controller-manager, which is not the tenant's"}},
		{"clusterrolebinding to system", func(id string) map[string]string {
			return map[string]string{"Chart.yaml": chartYAML, "templates/sa.yaml": account,
				"templates/crb.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: auth\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: system:auth-delegator\n" +
					"subjects:\n- kind: ServiceAccount\n  name: controller-manager\n  namespace: system\n"}
		}, []string{"ClusterRoleBinding opctl.NS.kv.auth grants cluster-wide rights to ServiceAccount system/controller-manager"}},
		{"rolebinding to its own account", func(id string) map[string]string {
			return map[string]string{"Chart.yaml": chartYAML, "templates/sa.yaml": account, "templates/role.yaml": role,
				"templates/rb.yaml": roleBinding("  namespace: {{ .Release.Namespace }}\n") + "- kind: ServiceAccount\n  name: default\n"}
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id := suffix()
			name := "cluster-objects-" + strings.ReplaceAll(tc.name, " ", "-") + "-" + id
			createTenant(t, newTenant(name, []string{name}, writeChart(t, tc.files(id)), 1))
			if tc.refused == nil {
				waitTenant(t, name, 2*time.Minute, "release installed", func(tn *tenancyv1.Tenant) error {
					if len(tn.Status.Operators) == 0 || tn.Status.Operators[0].Revision < 1 {
						return fmt.Errorf("operators %s", dump(tn.Status.Operators))
					}
					return nil
				})
				if _, err := c.Client.RbacV1().RoleBindings(name).Get(ctx, "reader", metav1.GetOptions{}); err != nil {
					t.Errorf("the RoleBinding to the tenant's account: %v", err)
				}
				return
			}
			waitTenant(t, name, 2*time.Minute, "refused, naming the object", func(tn *tenancyv1.Tenant) error {
				for _, cond := range tn.Status.Conditions {
					if cond.Type != "Degraded" || cond.Reason != tenancyv1.ReasonClusterRightsRefused {
						continue
					}
					for _, want := range tc.refused {
						want = strings.ReplaceAll(strings.ReplaceAll(want, "ID", id), "NS", name)
						if !strings.Contains(cond.Message, want) {
							return fmt.Errorf("condition %s, want it to name %q", dump(cond), want)
						}
					}
					return nil
				}
				return fmt.Errorf("conditions %s, operators %s", dump(tn.Status.Conditions), dump(tn.Status.Operators))
			})
			// Refused before install: nothing of the release exists.
			for _, obj := range []struct {
				gvk       schema.GroupVersionKind
				namespace string
				name      string
			}{
				{schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}, "", "v1beta1.metrics-" + id + ".example.com"},
				{schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}, "", "opctl." + name + ".kv.v1beta1.metrics-" + id + ".example.com"},
				{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, name, "metrics"},
				{schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}, name, "controller-manager"},
				{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}, name, "reader"},
				{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}, "", "opctl." + name + ".kv.auth"},
			} {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(obj.gvk)
				if err := cl.Get(ctx, client.ObjectKey{Namespace: obj.namespace, Name: obj.name}, u); !apierrors.IsNotFound(err) {
					t.Errorf("%s %s/%s: %v, want none", obj.gvk.Kind, obj.namespace, obj.name, err)
				}
			}
		})
	}
}
