package tenancy_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// Helpers of the tests of a Tenant's namespace list changing (red teams 5
// to 8): a chart that holds something in every watched namespace, and the
// questions they ask of what it leaves.

// perNamespaceChart is a chart with a Role in each watched namespace and
// a ClusterRoleBinding of each one's ServiceAccount op, as multi-namespace
// charts have.
func perNamespaceChart() map[string]string {
	return map[string]string{
		"Chart.yaml": chartYAML,
		"templates/roles.yaml": "{{- range .Values.watchNamespaces }}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\n  namespace: {{ . }}\n" +
			"rules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get]\n{{- end }}\n",
		"templates/crb.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: delegate\n" +
			"roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: system:auth-delegator\n" +
			"subjects:\n{{- range .Values.watchNamespaces }}\n- kind: ServiceAccount\n  name: op\n  namespace: {{ . }}\n{{- end }}\n",
	}
}

// hookedChart is perNamespaceChart with a validating webhook on ConfigMap
// creates, named host, calling Service hook in serviceNS.
func hookedChart(host, serviceNS string) map[string]string {
	files := perNamespaceChart()
	maps.Copy(files, map[string]string{
		"templates/vwc.yaml": "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: hook\n" +
			"webhooks:\n- name: " + host + "\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  failurePolicy: Fail\n" +
			"  clientConfig:\n    service:\n      namespace: " + serviceNS + "\n      name: hook\n      path: /validate\n" +
			"  rules:\n  - apiGroups: [\"\"]\n    apiVersions: [v1]\n    operations: [CREATE]\n    resources: [configmaps]\n",
	})
	return files
}

// tenantWebhooks are the validating webhook configurations of Tenant name.
func tenantWebhooks(t *testing.T, name string) []admissionregistrationv1.ValidatingWebhookConfiguration {
	t.Helper()
	var wl admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := cl.List(context.Background(), &wl, client.MatchingLabels{tenancyv1.LabelTenant: name}); err != nil {
		t.Fatal(err)
	}
	return wl.Items
}

// releaseBinding waits until release kv of Tenant name has installed its
// ClusterRoleBinding delegate (and, with hooks, its one webhook
// configuration), deletes both when the test ends, and returns the
// binding's name.
func releaseBinding(t *testing.T, c *testcluster.Cluster, name string, hooks bool) string {
	t.Helper()
	crb := "opctl." + name + ".kv.delegate"
	testcluster.Eventually(t, 2*time.Minute, "the release's ClusterRoleBinding installed", func(ctx context.Context) error {
		if n := len(tenantWebhooks(t, name)); hooks && n != 1 {
			return fmt.Errorf("%d webhook configurations", n)
		}
		_, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crb, metav1.GetOptions{})
		return err
	})
	t.Cleanup(func() {
		for _, w := range tenantWebhooks(t, name) {
			_ = c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), w.Name, metav1.DeleteOptions{})
		}
		_ = c.Client.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb, metav1.DeleteOptions{})
	})
	return crb
}

// delegation is what the release's binding grants: system:auth-delegator's
// SubjectAccessReviews.
var delegation = authzv1.ResourceAttributes{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}

// review asks the API server whether user, of groups, may do attrs, and
// why.
func review(t *testing.T, c *testcluster.Cluster, user string, groups []string, attrs authzv1.ResourceAttributes) (bool, string) {
	t.Helper()
	sar, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: user, Groups: groups, ResourceAttributes: &attrs}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sar.Status.Allowed, sar.Status.Reason
}

// reviewServiceAccount is review of ServiceAccount sa of namespace ns.
func reviewServiceAccount(t *testing.T, c *testcluster.Cluster, ns, sa string, attrs authzv1.ResourceAttributes) (bool, string) {
	t.Helper()
	return review(t, c, "system:serviceaccount:"+ns+":"+sa, []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}, attrs)
}

// setNamespaces sets Tenant name's spec.namespaces, as the platform does,
// retrying when the controller's status writes got there first.
func setNamespaces(t *testing.T, name string, namespaces ...string) *tenancyv1.Tenant {
	t.Helper()
	tn := &tenancyv1.Tenant{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cl.Get(context.Background(), client.ObjectKey{Name: name}, tn); err != nil {
			return err
		}
		tn.Spec.Namespaces = namespaces
		return cl.Update(context.Background(), tn)
	})
	if err != nil {
		t.Fatal(err)
	}
	return tn
}

// waitHandedBack waits until namespace ns carries no tenant label, actor
// annotation or ownerReference: handed back to the platform.
func waitHandedBack(t *testing.T, ns string, within time.Duration) {
	t.Helper()
	testcluster.Eventually(t, within, "namespace "+ns+" handed back", func(ctx context.Context) error {
		live := &corev1.Namespace{}
		if err := cl.Get(ctx, client.ObjectKey{Name: ns}, live); err != nil {
			return err
		}
		if live.Labels[tenancyv1.LabelTenant] != "" || live.Annotations[tenancyv1.AnnotationActor] != "" || len(live.OwnerReferences) > 0 {
			return fmt.Errorf("labels %v, annotations %v, owners %v", live.Labels, live.Annotations, live.OwnerReferences)
		}
		return nil
	})
}

// takeWhileDown stops the controller (stop), then, as the platform does
// while it is down, gives Tenant name the namespace kept alone and deletes
// the namespace taken, waiting until it is gone.
func takeWhileDown(t *testing.T, stop func(), name, kept, taken string) {
	t.Helper()
	stop()
	setNamespaces(t, name, kept)
	if err := cl.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: taken}}); err != nil {
		t.Fatal(err)
	}
	nsGone(t, taken)
}
