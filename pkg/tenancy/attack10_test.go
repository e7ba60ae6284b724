package tenancy_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// modeChart renders what many operators do: watching several namespaces
// it binds a ClusterRole (delegate, whose subjects are op of each watched
// namespace) and validates Secret creates there (a webhook calling
// Service hook in serviceNS); watching one it needs neither and writes a
// ConfigMap in its own namespace instead.
func modeChart(host, serviceNS string) map[string]string {
	return map[string]string{
		"Chart.yaml": chartYAML,
		"templates/roles.yaml": "{{- range .Values.watchNamespaces }}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\n  namespace: {{ . }}\n" +
			"rules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get]\n{{- end }}\n",
		"templates/crb.yaml": "{{- if gt (len .Values.watchNamespaces) 1 }}\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: delegate\n" +
			"roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: system:auth-delegator\n" +
			"subjects:\n{{- range .Values.watchNamespaces }}\n- kind: ServiceAccount\n  name: op\n  namespace: {{ . }}\n{{- end }}\n{{- end }}\n",
		"templates/vwc.yaml": "{{- if gt (len .Values.watchNamespaces) 1 }}\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: hook\n" +
			"webhooks:\n- name: " + host + "\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  failurePolicy: Ignore\n" +
			"  clientConfig:\n    service:\n      namespace: " + serviceNS + "\n      name: hook\n      path: /validate\n" +
			"  rules:\n  - apiGroups: [\"\"]\n    apiVersions: [v1]\n    operations: [CREATE]\n    resources: [secrets]\n{{- end }}\n",
		"templates/single.yaml": "{{- if eq (len .Values.watchNamespaces) 1 }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: single-namespace\ndata:\n  watch: {{ first .Values.watchNamespaces }}\n{{- end }}\n",
	}
}

// fillConfigMaps has owner create ConfigMaps in ns until the tenant's
// quota refuses the next one.
func fillConfigMaps(t *testing.T, c *testcluster.Cluster, owner, ns string) int {
	t.Helper()
	oc := kubernetes.NewForConfigOrDie(c.As(owner))
	for i := 0; ; i++ {
		_, err := oc.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("filler-%d", i)}}, metav1.CreateOptions{})
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota") {
			return i
		}
		if err != nil {
			t.Fatalf("owner %s creating ConfigMap %d in %s: %v", owner, i, ns, err)
		}
		if i > 1000 {
			t.Fatalf("owner %s created 1000 ConfigMaps in %s without reaching a quota", owner, ns)
		}
	}
}

// quotaFullTenant creates Tenant name (deletion policy policy) on
// namespaces name-a and name-b with modeChart, waits for its binding and
// webhook, and has its owner fill count/configmaps in name-a. It returns
// the namespaces and the binding's name.
func quotaFullTenant(t *testing.T, c *testcluster.Cluster, name string, policy operatorkit.DeletionPolicy) (a, b, crb string) {
	t.Helper()
	a, b = name+"-a", name+"-b"
	owner := "owner-" + name
	tn := newTenant(name, []string{a, b}, writeChart(t, modeChart("hook."+name+".example.com", a)), 1, owner)
	tn.Spec.DeletionPolicy = policy
	createTenant(t, tn)
	crb = releaseBinding(t, c, name, true)
	t.Cleanup(func() {
		unfinalize(name)
		for _, ns := range []string{a, b} {
			_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	})
	t.Logf("owner created %d ConfigMaps in %s", fillConfigMaps(t, c, owner, a), a)
	return a, b, crb
}

// Red team 10. A release holds a leaving namespace only by its last
// revision (Holds, lastRecorded), and Helm uninstalls only what the last
// revision names; but a failed upgrade is the last revision while the
// deployed one is still what runs. The platform takes namespace b from
// Tenant A, whose chart binds op of every watched namespace cluster-wide
// while it watches more than one. The upgrade to a alone creates a
// ConfigMap, which the tenant's quota refuses (its owner filled
// count/configmaps with ConfigMaps of its own): Helm stops before deleting the old
// ClusterRoleBinding and records the upgrade as failed. The rollback to
// the deployed revision is refused (it names objects in b, now leaving),
// so the failed revision stays last: it names nothing in b, b is handed
// back, and the binding of b's ServiceAccount op stays for whoever gets
// b next. Deleting the Tenant uninstalls the failed revision only: the
// ClusterRoleBinding and the webhook configuration (which sends Secret
// creates in a and b to Service hook of a, for whoever holds those names
// next) outlive the Tenant.
func TestAttack10FailedUpgradeHandsBackHeldNamespace(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "failhb-" + suffix()
	a, b, crb := quotaFullTenant(t, c, name, "")

	// The platform takes namespace b away from the tenant.
	setNamespaces(t, name, a)
	handedBack := func() bool {
		live := &corev1.Namespace{}
		return cl.Get(ctx, client.ObjectKey{Name: b}, live) == nil && live.Labels[tenancyv1.LabelTenant] == ""
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !handedBack() && time.Now().Before(deadline) {
		time.Sleep(time.Second)
	}
	tn := &tenancyv1.Tenant{}
	_ = cl.Get(ctx, client.ObjectKey{Name: name}, tn)
	t.Logf("namespace %s handed back: %v; operators %s", b, handedBack(), dump(tn.Status.Operators))
	if handedBack() {
		if ok, why := reviewServiceAccount(t, c, b, "op", delegation); ok {
			t.Errorf("namespace %s handed back while the release's %s still binds its ServiceAccount op (%s)", b, crb, why)
		}
	}

	if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	if err := gone(ctx, name, 2*time.Minute); err != nil {
		t.Fatalf("Tenant %s not deleted: %v", name, err)
	}
	if live, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crb, metav1.GetOptions{}); err == nil {
		t.Errorf("Tenant %s deleted, its release's ClusterRoleBinding %s is left: subjects %v", name, crb, live.Subjects)
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	for _, w := range tenantWebhooks(t, name) {
		for _, h := range w.Webhooks {
			t.Errorf("Tenant %s deleted, its release's webhook configuration %s is left: webhook %s calls Service %s/%s for namespaces %v",
				name, w.Name, h.Name, h.ClientConfig.Service.Namespace, h.ClientConfig.Service.Name, h.NamespaceSelector)
		}
	}
}

// Red team 10. TestAttack10FailedUpgradeHandsBackHeldNamespace through an
// Orphan deletion: settleLeaving brings the operators to the spec
// before it hands the leaving namespace back, and its fallback
// (settleGrace) uninstalls what still holds one. The upgrade fails on the
// owner's full quota and its rollback is refused, which Repair reports as
// the release's status, not as an error: settleLeaving takes the failed
// revision, which names nothing in b, for the release, hands b back and
// leaves the release running with its ClusterRoleBinding still binding
// b's ServiceAccount op, and its webhook still sending the Secret creates
// made in b to Service hook of a, which the former owners keep.
func TestAttack10OrphanFailedUpgradeHandsBack(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	stop := startController(t, tenancy.Options{})
	name := "orphfail-" + suffix()
	a, b, crb := quotaFullTenant(t, c, name, operatorkit.DeletionOrphan)

	// The platform takes b and deletes the Tenant (Orphan) while the
	// controller is down.
	stop()
	setNamespaces(t, name, a)
	if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	startController(t, tenancy.Options{})
	if err := gone(ctx, name, 3*time.Minute); err != nil {
		t.Fatalf("Tenant %s (Orphan) not deleted: %v", name, err)
	}
	live := &corev1.Namespace{}
	if err := cl.Get(ctx, client.ObjectKey{Name: b}, live); err != nil {
		t.Fatal(err)
	}
	if live.Labels[tenancyv1.LabelTenant] != "" {
		t.Fatalf("namespace %s not handed back: labels %v", b, live.Labels)
	}
	if ok, why := reviewServiceAccount(t, c, b, "op", delegation); ok {
		t.Errorf("namespace %s handed back while the release's %s still binds its ServiceAccount op (%s)", b, crb, why)
	}
	// The release's webhook, left running with the Tenant's former
	// owners, who keep namespace a and its Service hook.
	w, err := c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "opctl."+name+".kv.hook", metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if err == nil {
		for _, h := range w.Webhooks {
			for _, e := range h.NamespaceSelector.MatchExpressions {
				if slices.Contains(e.Values, b) {
					t.Errorf("namespace %s handed back while the release's webhook %s still sends its Secret creates to Service %s/%s: selector %v",
						b, h.Name, h.ClientConfig.Service.Namespace, h.ClientConfig.Service.Name, e)
				}
			}
		}
	}
}
