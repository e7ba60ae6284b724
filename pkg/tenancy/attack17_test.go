package tenancy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// groupBindingChart grants, for each namespace it watches, Role reader of
// the release's namespace to the group of that namespace's
// ServiceAccounts (RoleBinding delegate-<ns>, Group
// system:serviceaccounts:<ns>, which baseline.SubjectsOutside allows for
// a tenant namespace), with Service watch-<ns> in the release's
// namespace; watching one namespace it adds Service single. Its
// ValidatingWebhookConfiguration hook is narrowed by the render guard to
// the namespaces it was rendered for. No object of it is in a watched
// namespace but the release's own.
func groupBindingChart() map[string]string {
	return map[string]string{
		"Chart.yaml": chartYAML,
		"templates/role.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\n  namespace: {{ .Release.Namespace }}\n" +
			"rules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get]\n",
		"templates/each.yaml": "{{- range .Values.watchNamespaces }}\n---\n" +
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: delegate-{{ . }}\n  namespace: {{ $.Release.Namespace }}\n" +
			"roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: reader\n" +
			"subjects:\n- apiGroup: rbac.authorization.k8s.io\n  kind: Group\n  name: system:serviceaccounts:{{ . }}\n---\n" +
			"apiVersion: v1\nkind: Service\nmetadata:\n  name: watch-{{ . }}\nspec:\n  selector:\n    app: op\n  ports:\n  - port: 8080\n{{- end }}\n",
		"templates/single.yaml": "{{- if eq (len .Values.watchNamespaces) 1 }}\napiVersion: v1\nkind: Service\nmetadata:\n  name: single\nspec:\n  selector:\n    app: op\n  ports:\n  - port: 8080\n{{- end }}\n",
		"templates/vwc.yaml": "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: hook\n" +
			"webhooks:\n- name: hook.attack17.example.com\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  failurePolicy: Ignore\n" +
			"  clientConfig:\n    service:\n      namespace: {{ .Release.Namespace }}\n      name: hook\n      path: /validate\n" +
			"  rules:\n  - apiGroups: [\"\"]\n    apiVersions: [v1]\n    operations: [CREATE]\n    resources: [secrets]\n",
	}
}

// Red team 17. reaches counts a binding's ServiceAccount subjects by kind
// only; a RoleBinding may also name a tenant namespace's accounts as the
// group system:serviceaccounts:<ns> or the user
// system:serviceaccount:<ns>:<name> (baseline.SubjectsOutside allows
// both). Tenant A runs groupBindingChart on a and b; its owner fills
// count/services in a. The platform takes b: the upgrade to a alone fails
// on the quota (Service single) before Helm patches the webhook or
// deletes RoleBinding delegate-b; the rollback to revision 1 is refused
// (it grants to the ServiceAccounts of b, no longer the tenant's); and
// since reaches sees no ServiceAccount subject of b, the rollback is what
// runs (no forward retry) and Holds does not hold b. So b is handed back
// while A's release grants every ServiceAccount of b Role reader in a,
// and A's webhook still selects b and its accounts' requests, for as long
// as A's owner keeps its quota full.
func TestAttack17GroupBindingNamespaceHandedBack(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name, a, b := historyTenant(t, c, "grpbind-", groupBindingChart())
	owner := "owner-" + name
	vwc := "opctl." + name + ".kv.hook"
	t.Cleanup(func() {
		_ = c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), vwc, metav1.DeleteOptions{})
	})
	rbB := "delegate-" + b
	if _, err := c.Client.RbacV1().RoleBindings(a).Get(ctx, rbB, metav1.GetOptions{}); err != nil {
		t.Fatalf("the release's binding of the group of b's ServiceAccounts: %v", err)
	}
	readA := authzv1.ResourceAttributes{Namespace: a, Verb: "get", Resource: "configmaps", Name: "any"}
	if ok, why := reviewServiceAccount(t, c, b, "op", readA); !ok {
		t.Fatalf("ServiceAccount op of %s may not read ConfigMaps in %s through the release's binding: %s", b, a, why)
	}
	setNamespaces(t, name, a)

	// For three minutes, b may be handed back only without the grant.
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		live := &corev1.Namespace{}
		if err := cl.Get(ctx, client.ObjectKey{Name: b}, live); err != nil {
			t.Fatal(err)
		}
		if live.Labels[tenancyv1.LabelTenant] == "" && live.Annotations[tenancyv1.AnnotationActor] == "" {
			rb, err := c.Client.RbacV1().RoleBindings(a).Get(ctx, rbB, metav1.GetOptions{})
			if err == nil {
				ok, why := reviewServiceAccount(t, c, b, "op", readA)
				hook := "gone"
				if live, err := c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, vwc, metav1.GetOptions{}); err == nil {
					hook = fmt.Sprintf("namespaceSelector %v", live.Webhooks[0].NamespaceSelector.MatchExpressions)
				}
				logRevisions(t, c, name, a)
				t.Fatalf("namespace %s handed back while tenant %s's RoleBinding %s/%s grants Role reader to %v (ServiceAccount op of %s may read ConfigMaps in %s: %v, %s); webhook %s: %s: "+
					"reaches counts ServiceAccount subjects by kind only, so no revision held %s", b, name, a, rbB, rb.Subjects, b, a, ok, why, vwc, hook, b)
			}
			if !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
			return
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("namespace %s still held after 3 minutes", b)

	// The owner frees its quota: the upgrade deploys and deletes the
	// binding; b is handed back without it.
	freeServices(t, c, owner, a)
	waitHandedBack(t, b, 6*time.Minute)
	if _, err := c.Client.RbacV1().RoleBindings(a).Get(ctx, rbB, metav1.GetOptions{}); err == nil {
		t.Errorf("namespace %s handed back while RoleBinding %s/%s grants to the ServiceAccounts of %s", b, a, rbB, b)
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}
