package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// The API server evaluates a webhook's matchConditions within one runtime
// cost budget shared by all of them (2.5M), and running out of it is an
// error that fails the request under failurePolicy Fail before any
// condition's false can skip the webhook. A chart's own matchConditions
// spending the budget (three that each run to the 1M per-expression limit)
// made opctl-tenant-requests moot: a cluster admin's write and kube-system's
// root CA publisher's in the tenant's namespace were refused by the
// tenant's configuration, and under failurePolicy Ignore sixteen such
// webhooks cost the API server 15 s of CPU a request (red team 4). A
// release webhook with matchConditions of its own is refused before
// install (ClusterRightsRefused), and platform writes pass.
func TestMatchConditionBudgetSparesPlatformWrites(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "budget-" + suffix()
	owner := "owner-" + name
	ten := "[0,1,2,3,4,5,6,7,8,9]"
	heavy := ten + ".all(a, " + ten + ".all(b, " + ten + ".all(c, " + ten + ".all(d, " + ten + ".all(e, " + ten + ".all(f, true))))))"
	var conds strings.Builder
	for i := range 3 {
		fmt.Fprintf(&conds, "  - name: spend-%d\n    expression: %q\n", i, heavy)
	}
	files := map[string]string{
		"Chart.yaml": chartYAML,
		"templates/vwc.yaml": "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: hook\n" +
			"webhooks:\n- name: hook.budget.example.com\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  failurePolicy: Fail\n" +
			"  clientConfig:\n    service:\n      namespace: " + name + "\n      name: hook\n      path: /validate\n" +
			"  rules:\n  - apiGroups: [\"\"]\n    apiVersions: [v1]\n    operations: [CREATE]\n    resources: [configmaps]\n" +
			"  matchConditions:\n" + conds.String(),
	}
	createTenant(t, newTenant(name, []string{name}, writeChart(t, files), 1, owner))
	waitCondition(t, name, "Degraded", tenancyv1.ReasonClusterRightsRefused, "has matchConditions of its own (spend-0, spend-1, spend-2)")
	var wl admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := cl.List(ctx, &wl, client.MatchingLabels{tenancyv1.LabelTenant: name}); err != nil {
		t.Fatal(err)
	}
	if len(wl.Items) != 0 {
		t.Fatalf("%d webhook configurations installed, want none", len(wl.Items))
	}
	// A cluster admin (system:masters) creates a ConfigMap in the tenant's
	// namespace, and kube-system's root CA publisher writes its own.
	if _, err := c.Client.CoreV1().ConfigMaps(name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "platform"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("a cluster admin's write in the tenant's namespace: %v", err)
	}
	if err := c.Client.CoreV1().ConfigMaps(name).Delete(ctx, "kube-root-ca.crt", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, time.Minute, "kube-system's root CA publisher recreating kube-root-ca.crt in the tenant's namespace", func(ctx context.Context) error {
		_, err := c.Client.CoreV1().ConfigMaps(name).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err
	})
}
