package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

const chartYAML = "apiVersion: v2\nname: hostile\nversion: 0.1.0\n"

// The red-team review of the grant policy found charts that got out of
// the tenant through what the render guard does not see: hooks (Helm runs
// them past the post-renderer), `lookup` (templates read the cluster with
// the controller's rights), objects without a namespace (Helm put them in
// default), and a CRD of someone else's claimed as the operator's own so
// that an aggregated role passed. Each is a chart here; none may act
// outside the tenant.
func TestHostileCharts(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	victim := "hostile-victim-" + suffix()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: victim}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), victim, metav1.DeleteOptions{})
	})
	if _, err := c.Client.CoreV1().Secrets(victim).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "data"}, StringData: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := func(name, owner string) string {
		return adminBinding(name, owner, "    helm.sh/hook: pre-install,pre-upgrade,post-install\n")
	}
	cases := []struct {
		name  string
		files func(id, owner string) map[string]string
		// check runs once the release is installed or refused.
		check func(t *testing.T, id, owner string)
		// refused is the reason a refusal reports, or "" for an install.
		refused string
	}{
		{"hooks", func(id, owner string) map[string]string {
			return map[string]string{"Chart.yaml": chartYAML, "templates/hook.yaml": crb("hook-"+id, owner) +
				"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hook-" + id + "\n  namespace: kube-system\n  annotations:\n    helm.sh/hook: pre-install\n",
				"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n"}
		}, func(t *testing.T, id, owner string) {
			if _, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, "hook-"+id, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the hook's ClusterRoleBinding: %v, want none", err)
			}
			if _, err := c.Client.CoreV1().ConfigMaps("kube-system").Get(ctx, "hook-"+id, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the hook's ConfigMap in kube-system: %v, want none", err)
			}
			testcluster.Eventually(t, 30*time.Second, "a HooksNotRun Event", func(ctx context.Context) error {
				events, err := c.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=hostile-hooks-" + id + ",reason=" + tenancyv1.ReasonHooksNotRun})
				if err != nil || len(events.Items) == 0 || !strings.Contains(events.Items[0].Message, "ClusterRoleBinding hook-"+id) {
					return fmt.Errorf("events %v, %v", events, err)
				}
				return nil
			})
		}, ""},
		{"lookup", func(id, owner string) map[string]string {
			return map[string]string{"Chart.yaml": chartYAML, "templates/loot.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: loot\ndata:\n  victim: {{ (lookup \"v1\" \"Secret\" \"" + victim + "\" \"data\") | toJson | quote }}\n"}
		}, func(t *testing.T, id, owner string) {
			cm, err := c.Client.CoreV1().ConfigMaps("hostile-lookup-"+id).Get(ctx, "loot", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(cm.Data["victim"], "aHVudGVyMg") || strings.Contains(cm.Data["victim"], "password") {
				t.Errorf("the template read another namespace's Secret: %q", cm.Data["victim"])
			}
		}, ""},
		{"no namespace", func(id, owner string) map[string]string {
			// A binding of view, which a release may grant; in default it
			// would let the owner read another namespace.
			return map[string]string{"Chart.yaml": chartYAML, "templates/rb.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: owner-admin-" + id +
				"\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: view\nsubjects:\n- apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: " + owner + "\n"}
		}, func(t *testing.T, id, owner string) {
			if _, err := c.Client.RbacV1().RoleBindings("default").Get(ctx, "owner-admin-"+id, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("RoleBinding in default: %v, want none", err)
			}
			if _, err := c.Client.RbacV1().RoleBindings("hostile-no-namespace-"+id).Get(ctx, "owner-admin-"+id, metav1.GetOptions{}); err != nil {
				t.Errorf("RoleBinding in the release namespace: %v", err)
			}
		}, ""},
		{"items", func(id, owner string) map[string]string {
			return map[string]string{"Chart.yaml": chartYAML, "templates/x.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: wrapper\nitems:\n" +
				"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: items-" + id + "\n    namespace: kube-system\n"}
		}, func(t *testing.T, id, owner string) {
			if _, err := c.Client.CoreV1().ConfigMaps("kube-system").Get(ctx, "items-"+id, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the list item in kube-system: %v, want none", err)
			}
		}, tenancyv1.ReasonReleaseTampered},
		{"namespace admin", func(id, owner string) map[string]string {
			return map[string]string{"Chart.yaml": chartYAML, "templates/rb.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: ns-admin\n" +
				"roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\nsubjects:\n- apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: " + owner + "\n"}
		}, func(t *testing.T, id, owner string) {
			if _, err := c.Client.RbacV1().RoleBindings("hostile-namespace-admin-"+id).Get(ctx, "ns-admin", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the RoleBinding of cluster-admin: %v, want none", err)
			}
		}, tenancyv1.ReasonClusterRightsRefused},
		{"external ips", func(id, owner string) map[string]string {
			return map[string]string{"Chart.yaml": chartYAML, "templates/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: mitm\nspec:\n  externalIPs: [8.8.8.8]\n  ports:\n  - port: 53\n"}
		}, func(t *testing.T, id, owner string) {
			if _, err := c.Client.CoreV1().Services("hostile-external-ips-"+id).Get(ctx, "mitm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the Service with externalIPs: %v, want none", err)
			}
		}, tenancyv1.ReasonClusterRightsRefused},
		{"claimed crd", func(id, owner string) map[string]string {
			return map[string]string{"Chart.yaml": chartYAML,
				"crds/subscriptions.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: subscriptions.operators.coreos.com\nspec:\n  group: operators.coreos.com\n  names:\n    kind: Subscription\n    plural: subscriptions\n  scope: Namespaced\n  versions:\n  - name: v1alpha1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n",
				"templates/role.yaml":     "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: subscribers\n  labels:\n    rbac.authorization.k8s.io/aggregate-to-view: \"true\"\nrules:\n- apiGroups: [operators.coreos.com]\n  resources: [subscriptions]\n  verbs: [create, update, patch]\n"}
		}, func(t *testing.T, id, owner string) {
			name := "opctl.hostile-claimed-crd-" + id + ".kv.subscribers"
			if _, err := c.Client.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the aggregated ClusterRole: %v, want none", err)
			}
			// OLM's group is the platform's: nothing of the release exists.
			if _, err := c.Client.RbacV1().Roles("hostile-claimed-crd-"+id).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the Role made of the ClusterRole: %v, want none", err)
			}
		}, tenancyv1.ReasonCRDGroupReserved},
		{"platform group crd", func(id, owner string) map[string]string {
			// The red team's: a kind in the controller's own group, whose
			// resource guardrails carries the guardrails' bypass verb, made
			// the tenant's own kind with every verb and aggregated into
			// admin, which an owner-made ServiceAccount then held.
			return map[string]string{"Chart.yaml": chartYAML,
				"crds/guardrails.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: guardrails.tenancy.opctl.dev\nspec:\n  group: tenancy.opctl.dev\n  names:\n    kind: Guardrail\n    plural: guardrails\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n",
				"templates/role.yaml":  "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: guardrail-editor\n  labels:\n    rbac.authorization.k8s.io/aggregate-to-admin: \"true\"\nrules:\n- apiGroups: [tenancy.opctl.dev]\n  resources: [guardrails]\n  verbs: [\"*\"]\n"}
		}, func(t *testing.T, id, owner string) {
			if err := cl.Get(ctx, client.ObjectKey{Name: "guardrails.tenancy.opctl.dev"}, &apiextensionsv1.CustomResourceDefinition{}); !apierrors.IsNotFound(err) {
				t.Errorf("the CRD guardrails.tenancy.opctl.dev: %v, want none", err)
			}
			if can(t, c, owner, authzv1.ResourceAttributes{Namespace: "hostile-platform-group-crd-" + id, Verb: "bypass", Group: "tenancy.opctl.dev", Resource: "guardrails"}) {
				t.Error("the owner holds the guardrails' bypass")
			}
		}, tenancyv1.ReasonCRDGroupReserved},
		{"served group crd", func(id, owner string) map[string]string {
			// A new kind in a group the API server serves with CRDs the
			// platform installed (the monitoring stack's): refused.
			return map[string]string{"Chart.yaml": chartYAML, "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n",
				"crds/widgets.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets" + id + ".monitoring.coreos.com\nspec:\n  group: monitoring.coreos.com\n  names:\n    kind: Widget" + id + "\n    plural: widgets" + id + "\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n"}
		}, func(t *testing.T, id, owner string) {
			if err := cl.Get(ctx, client.ObjectKey{Name: "widgets" + id + ".monitoring.coreos.com"}, &apiextensionsv1.CustomResourceDefinition{}); !apierrors.IsNotFound(err) {
				t.Errorf("the CRD widgets%s.monitoring.coreos.com: %v, want none", id, err)
			}
		}, tenancyv1.ReasonCRDGroupReserved},
		{"shadowing crd", func(id, owner string) map[string]string {
			// The red team's: a CRD named after a built-in resource would
			// have made EndpointSlices the operator's own kind, which its
			// owners may write (CVE-2021-25740's traffic redirection).
			return map[string]string{"Chart.yaml": chartYAML, "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n",
				"crds/slices.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: endpointslices.discovery.k8s.io\n  annotations:\n    api-approved.kubernetes.io: \"unapproved, red team\"\nspec:\n  group: discovery.k8s.io\n  names:\n    kind: EndpointSlice\n    plural: endpointslices\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n"}
		}, func(t *testing.T, id, owner string) {
			if can(t, c, owner, authzv1.ResourceAttributes{Namespace: "hostile-shadowing-crd-" + id, Verb: "create", Group: "discovery.k8s.io", Resource: "endpointslices"}) {
				t.Error("the owner may create EndpointSlices")
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := cl.Get(ctx, client.ObjectKey{Name: "endpointslices.discovery.k8s.io"}, crd); !apierrors.IsNotFound(err) {
				t.Errorf("the CRD endpointslices.discovery.k8s.io: %v, want none", err)
			}
		}, tenancyv1.ReasonCRDGroupReserved},
		{"copied crd", func(id, owner string) map[string]string {
			// The red team's: an exact copy of the monitoring stack's CRD
			// would have made ServiceMonitors the operator's own kind.
			live := &apiextensionsv1.CustomResourceDefinition{}
			if err := cl.Get(ctx, client.ObjectKey{Name: "servicemonitors.monitoring.coreos.com"}, live); err != nil {
				t.Fatal(err)
			}
			copied, err := yaml.Marshal(map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
				"metadata": map[string]any{"name": live.Name}, "spec": live.Spec})
			if err != nil {
				t.Fatal(err)
			}
			return map[string]string{"Chart.yaml": chartYAML, "crds/copy.yaml": string(copied), "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n"}
		}, func(t *testing.T, id, owner string) {
			// The group is the platform's: refused, the live CRD untouched.
			live := &apiextensionsv1.CustomResourceDefinition{}
			if err := cl.Get(ctx, client.ObjectKey{Name: "servicemonitors.monitoring.coreos.com"}, live); err != nil || live.Labels[tenancyv1.LabelSharedCRD] == "true" {
				t.Errorf("the monitoring stack's CRD became the tenants' (%v): %v", live.Labels, err)
			}
		}, tenancyv1.ReasonCRDGroupReserved},
		{"actor role", func(id, owner string) map[string]string {
			// The red team's: the actor holds the guardrails' bypass in the
			// tenant's namespaces, and could bind its Role to the owner.
			return map[string]string{"Chart.yaml": chartYAML, "templates/rb.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: grab\n" +
				"roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: " + tenancy.ActorRole + "\nsubjects:\n- apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: " + owner + "\n"}
		}, func(t *testing.T, id, owner string) {
			if _, err := c.Client.RbacV1().RoleBindings("hostile-actor-role-"+id).Get(ctx, "grab", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the RoleBinding of the actor's Role: %v, want none", err)
			}
		}, tenancyv1.ReasonClusterRightsRefused},
		{"beyond the owners", func(id, owner string) map[string]string {
			// Owners (admin) may read a namespace's quota, not write one:
			// neither may their releases, whatever the controller holds.
			return map[string]string{"Chart.yaml": chartYAML, "templates/quota.yaml": "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: boost\nspec:\n  hard:\n    pods: \"1\"\n"}
		}, func(t *testing.T, id, owner string) {
			name := "hostile-beyond-the-owners-" + id
			if _, err := c.Client.CoreV1().ResourceQuotas(name).Get(ctx, "boost", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the release's ResourceQuota: %v, want none", err)
			}
			actor := "system:serviceaccount:" + tenancy.DefaultStorageNamespace + ":" + tenancy.ActorName(name)
			waitTenant(t, name, time.Minute, "the actor named", func(tn *tenancyv1.Tenant) error {
				if len(tn.Status.Operators) == 0 || tn.Status.Operators[0].Reason != tenancyv1.ReasonInstallFailed || !strings.Contains(tn.Status.Operators[0].LastError, actor) {
					return fmt.Errorf("operators %s, want %s naming %s", dump(tn.Status.Operators), tenancyv1.ReasonInstallFailed, actor)
				}
				return nil
			})
		}, tenancyv1.ReasonInstallFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id := suffix()
			name := "hostile-" + strings.ReplaceAll(tc.name, " ", "-") + "-" + id
			owner := "owner-" + name
			createTenant(t, newTenant(name, []string{name}, writeChart(t, tc.files(id, owner)), 1, owner))
			switch {
			case tc.refused == tenancyv1.ReasonInstallFailed:
				// Refused by the API server and retried: check reads the
				// operator's status.
			case tc.refused != "":
				waitCondition(t, name, "Degraded", tc.refused, "")
			default:
				waitTenant(t, name, 2*time.Minute, "release installed", func(tn *tenancyv1.Tenant) error {
					if len(tn.Status.Operators) == 0 || tn.Status.Operators[0].Revision < 1 {
						return fmt.Errorf("operators %s", dump(tn.Status.Operators))
					}
					return nil
				})
			}
			tc.check(t, id, owner)
			if clusterAdmin(t, c, owner) {
				t.Errorf("%s is cluster-admin", owner)
			}
		})
	}
}
