package tenancy_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/operatorkit/kstatustest"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

var kvstores = schema.GroupVersionResource{Group: "kv.opctl.dev", Version: "v1alpha1", Resource: "kvstores"}

const operatorSA = "kv-sample-operator-controller-manager"

// Three tenants get namespaces with quota, limits, isolation and owners,
// and their own sample operator, which serves a KVStore in each.
func TestThreeTenants(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	chart := sampleChart(t, "", "0.1.0")
	id := suffix()
	var names, nss, owners []string
	for i := range 3 {
		name := fmt.Sprintf("three-%s-%d", id, i)
		names, nss, owners = append(names, name), append(nss, name), append(owners, "owner-"+name)
		createTenant(t, newTenant(name, []string{name}, chart, 3, owners[i]))
	}
	for _, name := range names {
		tn := waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)
		if st := kstatustest.AssertConformance(t, tn); st != "Current" {
			t.Errorf("Tenant %s kstatus %s, want Current", name, st)
		}
		op := tn.Status.Operators[0]
		if op.ChartVersion != "0.1.0" || op.Revision != 1 || op.Health != tenancyv1.HealthReady {
			t.Errorf("%s operator status %s", name, dump(op))
		}
	}

	t.Run("steady state makes no writes", func(t *testing.T) {
		checkNoSteadyStateWrites(t, c, names)
	})

	for i, ns := range nss {
		// Quota: (10m operator + 3 instances × (110m KVStore + 10m KVBackup))
		// + 20% headroom; pods 1 + 3 + 3; plus the shipped default quota
		// (requests 2 CPU and 4Gi, limits 4 CPU, 30 pods).
		q := &corev1.ResourceQuota{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: tenancy.QuotaName}, q); err != nil {
			t.Fatal(err)
		}
		want := map[corev1.ResourceName]string{"requests.cpu": "2444m", "limits.cpu": "7480m", "pods": "37", "count/kvstores.kv.opctl.dev": "3", "requests.memory": "4807Mi"}
		for name, w := range want {
			if got := q.Spec.Hard[name]; got.Cmp(resource.MustParse(w)) != 0 {
				t.Errorf("%s quota %s = %s, want %s", ns, name, got.String(), w)
			}
		}
		lr := &corev1.LimitRange{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: tenancy.LimitRangeName}, lr); err != nil {
			t.Error(err)
		} else if d := lr.Spec.Limits[0].Default[corev1.ResourceCPU]; d.String() != "600m" { // the operand pod's limit
			t.Errorf("%s LimitRange default cpu %s", ns, d.String())
		}
		var pols networkingv1.NetworkPolicyList
		if err := cl.List(ctx, &pols, client.InNamespace(ns)); err != nil || len(pols.Items) != 2 {
			t.Errorf("%s NetworkPolicies: %d, %v", ns, len(pols.Items), err)
		}
		allow := &networkingv1.NetworkPolicy{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: tenancy.PolicyAllow}, allow); err != nil {
			t.Error(err)
		} else if from := allow.Spec.Ingress[0].From[0].NamespaceSelector.MatchLabels[tenancyv1.LabelTenant]; from != names[i] || len(allow.Spec.Egress) != 4 {
			t.Errorf("%s allow policy: ingress from tenant %q, %d egress rules (same tenant, DNS, the API server's Service and endpoint)", ns, from, len(allow.Spec.Egress))
		}
		rb := &rbacv1.RoleBinding{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: tenancy.OwnersBinding}, rb); err != nil || rb.RoleRef.Name != "admin" || rb.Subjects[0].Name != owners[i] {
			t.Errorf("%s owner RoleBinding %v: %v", ns, rb, err)
		}
		nsObj := &corev1.Namespace{}
		if err := cl.Get(ctx, client.ObjectKey{Name: ns}, nsObj); err != nil || nsObj.Labels["pod-security.kubernetes.io/enforce"] != "restricted" || nsObj.Labels[tenancyv1.LabelTenant] != names[i] {
			t.Errorf("namespace %s labels %v: %v", ns, nsObj.Labels, err)
		}
	}

	// Each tenant's operator, its release's Deployment run with its pod's
	// identity, all three at once, brings a KVStore in its namespace to
	// Ready.
	dc := dynamic.NewForConfigOrDie(c.Config)
	pods := map[string]*testcluster.Pod{}
	for _, ns := range nss {
		pods[ns] = runRelease(t, c, managerBin, ns)
		store := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kv.opctl.dev/v1alpha1", "kind": "KVStore", "metadata": map[string]any{"name": "cache"},
			"spec": map[string]any{"replicas": int64(1)},
		}}
		if _, err := dc.Resource(kvstores).Namespace(ns).Create(ctx, store, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range nss {
		testcluster.WaitReady(t, dc, kvstores, ns, "cache", 90*time.Second)
		if log := pods[ns].Log(); strings.Contains(strings.ToLower(log), "forbidden") {
			t.Errorf("the manager in %s logged forbidden:\n%s", ns, log)
		}
	}

	t.Run("isolation", func(t *testing.T) {
		checkIsolation(t, c, nss[0], nss[1], owners[0], operatorSA, kvstores)
	})

	t.Run("release records hold no CRDs", func(t *testing.T) {
		// The controller applies the shared CRD; Helm never sees it.
		rel := storedRelease(t, names[0], nss[0], "kv", 1)
		for _, f := range append(rel.Chart.Templates, rel.Chart.Files...) {
			if strings.Contains(string(f.Data), "kind: CustomResourceDefinition") {
				t.Errorf("release chart keeps %s, a CRD", f.Name)
			}
		}
		if len(rel.Chart.Templates) == 0 || strings.Contains(rel.Manifest, "CustomResourceDefinition") {
			t.Errorf("release chart has %d templates; manifest with CRDs: %t", len(rel.Chart.Templates), strings.Contains(rel.Manifest, "CustomResourceDefinition"))
		}
	})

	t.Run("status explains the quota", func(t *testing.T) {
		tn := &tenancyv1.Tenant{}
		if err := cl.Get(ctx, client.ObjectKey{Name: names[0]}, tn); err != nil {
			t.Fatal(err)
		}
		ns := tn.Status.Namespaces[0]
		if !strings.Contains(strings.Join(ns.Derivation, "\n"), "requests.cpu = Deployment/kv-sample-operator-controller-manager 1×10m + kvbackups.kv.opctl.dev 3×10m + kvstores.kv.opctl.dev 3×110m = 370m, +20% headroom = 444m") {
			t.Errorf("derivation:\n%s", strings.Join(ns.Derivation, "\n"))
		}
		if used := ns.Used[corev1.ResourcePods]; used.Value() < 1 {
			t.Errorf("quota used pods %v, want the operator's pod counted", ns.Used)
		}
	})
}

// checkNoSteadyStateWrites waits until the tenants (one namespace each,
// named as the tenant) have settled, touches each to make the controller
// resync it, and checks from the audit log that the controller wrote
// nothing about them.
func checkNoSteadyStateWrites(t *testing.T, c *testcluster.Cluster, names []string) {
	t.Helper()
	ctx := context.Background()
	// The controller's writes about these tenants (other tests' tenants
	// may still be going away).
	mine := func(e testcluster.AuditEvent) bool {
		if e.UserAgent != "opctl-tenancy" {
			return false
		}
		for _, name := range names {
			if e.ObjectRef.Namespace == name || e.ObjectRef.Name == name || strings.HasPrefix(e.ObjectRef.Name, name+".") {
				return true
			}
		}
		return false
	}
	for _, name := range names {
		// Settled: Running, and the status shows the quota usage the
		// quota controller has counted by now.
		waitTenant(t, name, time.Minute, "Tenant Running with its quota usage", func(tn *tenancyv1.Tenant) error {
			if tn.Status.Phase != "Running" {
				return fmt.Errorf("phase %s", tn.Status.Phase)
			}
			q := &corev1.ResourceQuota{}
			if err := cl.Get(ctx, client.ObjectKey{Namespace: name, Name: tenancy.QuotaName}, q); err != nil {
				return err
			}
			if used := tn.Status.Namespaces[0].Used; !quotaEqual(used, q.Status.Used) || q.Status.Used.Pods().Value() < 1 {
				return fmt.Errorf("status shows used %v, the quota %v", used, q.Status.Used)
			}
			return ready(tn)
		})
	}
	// Settled also means the controller has stopped writing: under the
	// load of other test packages, an event can still be in flight.
	var off int64
	testcluster.Eventually(t, time.Minute, "3 s without controller writes", func(context.Context) error {
		var err error
		if off, err = c.AuditOffset(); err != nil {
			return err
		}
		time.Sleep(3 * time.Second)
		w, err := c.AuditWritesSince(off, mine)
		if err != nil || len(w) > 0 {
			return fmt.Errorf("%d writes: %s (%v)", len(w), testcluster.Describe(w), err)
		}
		return nil
	})
	// A resync must write nothing. The quota controller may still count a
	// kind it has just begun to watch, which the status mirrors (a real
	// change): then the window is measured again.
	used := func() map[string]corev1.ResourceList {
		out := map[string]corev1.ResourceList{}
		for _, name := range names {
			q := &corev1.ResourceQuota{}
			if err := cl.Get(ctx, client.ObjectKey{Namespace: name, Name: tenancy.QuotaName}, q); err == nil {
				out[name] = q.Status.Used
			}
		}
		return out
	}
	// What the status shows of each namespace's usage: a quota counted
	// anew since (a pod finishing going away) is a real change too, which
	// the status catches up with at its own pace (QuotaUsageInterval).
	shown := func() map[string]corev1.ResourceList {
		out := map[string]corev1.ResourceList{}
		for _, name := range names {
			tn := &tenancyv1.Tenant{}
			if err := cl.Get(ctx, client.ObjectKey{Name: name}, tn); err == nil && len(tn.Status.Namespaces) > 0 {
				out[name] = tn.Status.Namespaces[0].Used
			}
		}
		return out
	}
	for attempt := 1; ; attempt++ {
		usedBefore, shownBefore := used(), shown()
		off, err := c.AuditOffset()
		if err != nil {
			t.Fatal(err)
		}
		before := reconciles(t)
		for _, name := range names {
			testcluster.UpdateObject(t, cl, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}, func(tn *tenancyv1.Tenant) {
				metav1.SetMetaDataAnnotation(&tn.ObjectMeta, "test.opctl.dev/touched", time.Now().Format(time.RFC3339Nano))
			})
		}
		testcluster.Eventually(t, 30*time.Second, "a reconcile of each tenant", func(context.Context) error {
			if n := reconciles(t); n < before+float64(len(names)) {
				return fmt.Errorf("%v reconciles since, want %d", n-before, len(names))
			}
			return nil
		})
		time.Sleep(2 * time.Second)
		writes, err := c.AuditWritesSince(off, mine)
		if err != nil {
			t.Fatal(err)
		}
		if len(writes) == 0 {
			return
		}
		statusOnly := !slices.ContainsFunc(writes, func(e testcluster.AuditEvent) bool {
			return e.ObjectRef.Resource != "tenants" || e.ObjectRef.Subresource != "status"
		})
		usedAfter := used()
		changed := !maps.EqualFunc(usedBefore, usedAfter, quotaEqual) || !maps.EqualFunc(shownBefore, usedBefore, quotaEqual)
		if statusOnly && changed && attempt < 3 {
			t.Logf("the quota usage changed during the window (%v, then %v): measuring again", usedBefore, usedAfter)
			continue
		}
		t.Errorf("resyncs of unchanged tenants wrote %d times: %s", len(writes), testcluster.Describe(writes))
		return
	}
}

// checkIsolation runs the multi-tenancy benchmark's Level-1 checks:
// tenant a's owner cannot read b's Secrets, a's operator ServiceAccount sa
// cannot list b's custom resources (gvr) nor ConfigMaps, a pod over a's
// quota and a privileged pod are refused.
func checkIsolation(t *testing.T, c *testcluster.Cluster, a, b, ownerName, sa string, gvr schema.GroupVersionResource) {
	t.Helper()
	ctx := context.Background()
	owner := kubernetes.NewForConfigOrDie(c.As(ownerName))
	if _, err := owner.CoreV1().Secrets(a).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("owner of %s cannot list its own Secrets: %v", a, err)
	}
	if _, err := owner.CoreV1().Secrets(b).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("owner of %s listing Secrets of %s: %v, want Forbidden", a, b, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.ServiceAccountKubeconfig(t, a, sa))
	if err != nil {
		t.Fatal(err)
	}
	op := dynamic.NewForConfigOrDie(cfg)
	if _, err := op.Resource(gvr).Namespace(b).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("operator of %s listing KVStores of %s: %v, want Forbidden", a, b, err)
	}
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(b).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("operator of %s listing ConfigMaps of %s: %v, want Forbidden", a, b, err)
	}
	big := restrictedPod("too-big", "64")
	if _, err := owner.CoreV1().Pods(a).Create(ctx, big, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "exceeded quota") {
		t.Errorf("a pod over quota: %v, want exceeded quota", err)
	}
	priv := restrictedPod("privileged", "10m")
	yes := true
	priv.Spec.Containers[0].SecurityContext.Privileged = &yes
	priv.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = &yes
	if _, err := owner.CoreV1().Pods(a).Create(ctx, priv, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "violates PodSecurity") {
		t.Errorf("a privileged pod: %v, want a PodSecurity violation", err)
	}
}

func restrictedPod(name, cpu string) *corev1.Pod {
	no, yes := false, true
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("16Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("16Mi")},
			},
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
		}},
	}}
}

// reconciles is controller-runtime's count of Tenant reconciles in this
// process.
func reconciles(t *testing.T) float64 {
	t.Helper()
	return counter(t, "controller_runtime_reconcile_total", "controller", tenancy.FieldManager)
}

// counter sums the series of a counter in this process's registry whose
// label has value; an empty label sums them all.
func counter(t *testing.T, name, label, value string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if label == "" || slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == label && l.GetValue() == value }) {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

func quotaEqual(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}
