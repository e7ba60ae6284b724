package tenancy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// forbidden fails unless err is a Forbidden answer that, when want is set,
// says it.
func forbidden(t *testing.T, what string, err error, want string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s: %v, want Forbidden", what, err)
		return
	}
	if want != "" && !strings.Contains(err.Error(), want) {
		t.Errorf("%s refused for another reason: %v; want %q", what, err, want)
	}
}

// mtbCheck is one check of the multi-tenancy benchmark's Level 1 profile,
// run as one tenant actor (owner or operator) in namespace ns, with other
// another tenant's namespace. owner is true for the tenant owner, whose
// refusals come from the policy under test rather than from missing RBAC.
type mtbCheck struct {
	name string
	run  func(t *testing.T, cs kubernetes.Interface, ns, other string, owner bool)
}

const labelPatch = `{"metadata":{"labels":{"mtb":"edit"}}}`

var mtbChecks = []mtbCheck{
	{"block access to cluster resources", func(t *testing.T, cs kubernetes.Interface, ns, other string, owner bool) {
		ctx := context.Background()
		_, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		forbidden(t, "listing nodes", err, "")
		_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns + "-extra"}}, metav1.CreateOptions{})
		forbidden(t, "creating a namespace", err, "")
		_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-admin"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{rbacSubject("someone")}}, metav1.CreateOptions{})
		forbidden(t, "binding cluster-admin", err, "")
	}},
	{"block access to other tenants resources", func(t *testing.T, cs kubernetes.Interface, ns, other string, owner bool) {
		ctx := context.Background()
		_, err := cs.CoreV1().Secrets(other).List(ctx, metav1.ListOptions{})
		forbidden(t, "listing another tenant's Secrets", err, "")
		_, err = cs.CoreV1().ConfigMaps(other).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mtb"}}, metav1.CreateOptions{})
		forbidden(t, "creating a ConfigMap in another tenant", err, "")
		_, err = cs.CoreV1().Secrets(tenancy.DefaultStorageNamespace).List(ctx, metav1.ListOptions{})
		forbidden(t, "listing the release records", err, "")
	}},
	{"block modification of multi-tenant resources", func(t *testing.T, cs kubernetes.Interface, ns, other string, owner bool) {
		ctx := context.Background()
		want := ""
		if owner { // admin may edit these kinds: a guardrail refuses
			want = "ValidatingAdmissionPolicy"
		}
		for _, name := range []string{tenancy.PolicyDenyAll, tenancy.PolicyAllow} {
			_, err := cs.NetworkingV1().NetworkPolicies(ns).Patch(ctx, name, types.MergePatchType, []byte(labelPatch), metav1.PatchOptions{})
			forbidden(t, "editing NetworkPolicy "+name, err, want)
			forbidden(t, "deleting NetworkPolicy "+name, cs.NetworkingV1().NetworkPolicies(ns).Delete(ctx, name, metav1.DeleteOptions{}), want)
		}
		_, err := cs.RbacV1().RoleBindings(ns).Patch(ctx, tenancy.OwnersBinding, types.MergePatchType, []byte(labelPatch), metav1.PatchOptions{})
		forbidden(t, "editing the owners' RoleBinding", err, want)
		forbidden(t, "deleting the owners' RoleBinding", cs.RbacV1().RoleBindings(ns).Delete(ctx, tenancy.OwnersBinding, metav1.DeleteOptions{}), want)
		const operator = "kv-sample-operator-controller-manager"
		_, err = cs.AppsV1().Deployments(ns).Patch(ctx, operator, types.MergePatchType, []byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{})
		forbidden(t, "scaling the tenant's operator Deployment", err, want)
		forbidden(t, "deleting the tenant's operator Deployment", cs.AppsV1().Deployments(ns).Delete(ctx, operator, metav1.DeleteOptions{}), want)
	}},
	{"block modification of resource quotas", func(t *testing.T, cs kubernetes.Interface, ns, other string, owner bool) {
		ctx := context.Background()
		_, err := cs.CoreV1().ResourceQuotas(ns).Patch(ctx, tenancy.QuotaName, types.MergePatchType, []byte(`{"spec":{"hard":{"pods":"1000"}}}`), metav1.PatchOptions{})
		forbidden(t, "raising the quota", err, "")
		forbidden(t, "deleting the quota", cs.CoreV1().ResourceQuotas(ns).Delete(ctx, tenancy.QuotaName, metav1.DeleteOptions{}), "")
		_, err = cs.CoreV1().LimitRanges(ns).Patch(ctx, tenancy.LimitRangeName, types.MergePatchType, []byte(labelPatch), metav1.PatchOptions{})
		forbidden(t, "editing the LimitRange", err, "")
		forbidden(t, "deleting the LimitRange", cs.CoreV1().LimitRanges(ns).Delete(ctx, tenancy.LimitRangeName, metav1.DeleteOptions{}), "")
	}},
	{"block add capabilities", podCheck("adding NET_ADMIN", func(p *corev1.Pod) {
		p.Spec.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_ADMIN"}
	})},
	{"block privileged containers", podCheck("a privileged container", func(p *corev1.Pod) {
		yes := true
		p.Spec.Containers[0].SecurityContext.Privileged = &yes
		p.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = &yes
	})},
	{"block privilege escalation", podCheck("allowPrivilegeEscalation", func(p *corev1.Pod) {
		yes := true
		p.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = &yes
	})},
	{"block use of host path volumes", podCheck("a hostPath volume", func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc"}}}}
	})},
	{"block use of host networking and ports", func(t *testing.T, cs kubernetes.Interface, ns, other string, owner bool) {
		podCheck("host networking", func(p *corev1.Pod) { p.Spec.HostNetwork = true })(t, cs, ns, other, owner)
		podCheck("a host port", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
		})(t, cs, ns, other, owner)
	}},
	{"block use of host PID", podCheck("hostPID", func(p *corev1.Pod) { p.Spec.HostPID = true })},
	{"block use of host IPC", podCheck("hostIPC", func(p *corev1.Pod) { p.Spec.HostIPC = true })},
	{"require run as non-root user", podCheck("a pod that may run as root", func(p *corev1.Pod) {
		p.Spec.SecurityContext.RunAsNonRoot = nil
	})},
	{"block use of NodePort services", func(t *testing.T, cs kubernetes.Interface, ns, other string, owner bool) {
		ctx := context.Background()
		for _, tc := range []struct{ what, want string }{
			{"a NodePort Service", "NodePort Services are not allowed"},
			{"a LoadBalancer Service", "LoadBalancer Services are not allowed"},
			{"a Service with externalIPs", "externalIPs are not allowed"},
			{"an ExternalName Service", "ExternalName Services are not allowed"},
			{"an Ingress", "Ingresses are not allowed"},
		} {
			want := ""
			if owner {
				want = tc.want
			}
			if tc.what == "an Ingress" {
				ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "mtb-exposed"}, Spec: networkingv1.IngressSpec{
					DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "x", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}
				_, err := cs.NetworkingV1().Ingresses(ns).Create(ctx, ing, metav1.CreateOptions{})
				forbidden(t, tc.what, err, want)
				continue
			}
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "mtb-exposed"}, Spec: corev1.ServiceSpec{
				Ports: []corev1.ServicePort{{Port: 80}}, Selector: map[string]string{"app": "x"}}}
			switch {
			case strings.Contains(tc.what, "NodePort"):
				svc.Spec.Type = corev1.ServiceTypeNodePort
			case strings.Contains(tc.what, "LoadBalancer"):
				svc.Spec.Type = corev1.ServiceTypeLoadBalancer
			case strings.Contains(tc.what, "ExternalName"):
				svc.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.other-tenant.svc.cluster.local"}
			default:
				svc.Spec.ExternalIPs = []string{"203.0.113.10"}
			}
			_, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
			forbidden(t, tc.what, err, want)
		}
	}},
	{"configure namespace resource quotas", func(t *testing.T, cs kubernetes.Interface, ns, other string, owner bool) {
		q := quotaOf(t, ns)
		for _, r := range []corev1.ResourceName{corev1.ResourceRequestsCPU, corev1.ResourceLimitsCPU, corev1.ResourceRequestsMemory, corev1.ResourceLimitsMemory} {
			if _, ok := q.Spec.Hard[r]; !ok {
				t.Errorf("quota of %s has no %s: %v", ns, r, q.Spec.Hard)
			}
		}
		if owner {
			_, err := cs.CoreV1().Pods(ns).Create(context.Background(), restrictedPod("too-big", "64"), metav1.CreateOptions{})
			forbidden(t, "a pod over the quota", err, "exceeded quota")
		}
	}},
	{"configure namespace object quotas", func(t *testing.T, cs kubernetes.Interface, ns, other string, owner bool) {
		q := quotaOf(t, ns)
		for _, r := range []corev1.ResourceName{corev1.ResourcePods, "count/kvstores.kv.opctl.dev", corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers} {
			if _, ok := q.Spec.Hard[r]; !ok {
				t.Errorf("quota of %s has no %s: %v", ns, r, q.Spec.Hard)
			}
		}
		if v := q.Spec.Hard[corev1.ResourceServicesNodePorts]; !v.IsZero() {
			t.Errorf("services.nodeports %s, want 0", v.String())
		}
	}},
}

// podCheck is a check that a pod changed by mutate is refused.
func podCheck(what string, mutate func(*corev1.Pod)) func(*testing.T, kubernetes.Interface, string, string, bool) {
	return func(t *testing.T, cs kubernetes.Interface, ns, _ string, owner bool) {
		t.Helper()
		p := restrictedPod("mtb", "10m")
		mutate(p)
		want := ""
		if owner {
			want = "violates PodSecurity"
		}
		_, err := cs.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
		forbidden(t, what, err, want)
	}
}

func quotaOf(t *testing.T, ns string) *corev1.ResourceQuota {
	t.Helper()
	q := &corev1.ResourceQuota{}
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: tenancy.QuotaName}, q); err != nil {
		t.Fatal(err)
	}
	return q
}

// TestMTBLevel1 runs the multi-tenancy benchmark's Level 1 checks as the
// tenant owner and as the tenant operator's ServiceAccount, with the
// controller stopped: the guardrails live in the API server and hold
// without it. Then the guardrails' allowances and locks.
func TestMTBLevel1(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	stop := startController(t, tenancy.Options{})
	chart := sampleChart(t, "", "0.1.0")
	id := suffix()
	a, b, open := "mtb-a-"+id, "mtb-b-"+id, "mtb-open-"+id
	profile := &tenancyv1.TenantProfile{ObjectMeta: metav1.ObjectMeta{Name: "exposed-" + id},
		Spec: tenancyv1.TenantProfileSpec{Services: &tenancyv1.ServiceExposure{AllowNodePorts: true}}}
	if err := cl.Create(ctx, profile); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Delete(context.Background(), profile) })
	ta := newTenant(a, []string{a}, chart, 1, "owner-"+a)
	ta.Spec.Isolation = &tenancyv1.IsolationSpec{LockNetworkPolicies: true}
	to := newTenant(open, []string{open}, "", 0, "owner-"+open)
	to.Spec.Profile = profile.Name
	for _, tn := range []*tenancyv1.Tenant{ta, newTenant(b, []string{b}, chart, 1, "owner-"+b), to} {
		createTenant(t, tn)
	}
	for _, name := range []string{a, b, open} {
		waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)
	}
	stop()

	actors := []struct {
		name  string
		cs    kubernetes.Interface
		owner bool
	}{
		{"owner", kubernetes.NewForConfigOrDie(c.As("owner-" + a)), true},
		{"operator", kubernetes.NewForConfigOrDie(c.AsServiceAccount(a, operatorSA)), false},
	}
	for _, check := range mtbChecks {
		t.Run(check.name, func(t *testing.T) {
			for _, actor := range actors {
				t.Run(actor.name, func(t *testing.T) { check.run(t, actor.cs, a, b, actor.owner) })
			}
		})
	}

	t.Run("guardrails/namespace labels", func(t *testing.T) {
		// Someone who may edit namespaces, but is neither the controller
		// nor a cluster admin.
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "ns-editor-" + id},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "patch", "update", "delete"}}}}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "ns-editor-" + id},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{rbacSubject("ns-editor-" + id)}}
		for _, o := range []client.Object{role, binding} {
			if err := cl.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cl.Delete(context.Background(), o) })
		}
		editor := kubernetes.NewForConfigOrDie(c.As("ns-editor-" + id))
		// The API server's RBAC authorizer sees the new binding from its
		// own informer, a moment after the create: wait until it does, so
		// that a refusal below is the guardrail's and not RBAC's.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			_, err := editor.CoreV1().Namespaces().Get(ctx, a, metav1.GetOptions{})
			if err == nil || time.Now().After(deadline) {
				break
			}
		}
		for _, patch := range []string{
			`{"metadata":{"labels":{"tenancy.opctl.dev/tenant":null}}}`,
			`{"metadata":{"labels":{"tenancy.opctl.dev/tenant":"` + b + `"}}}`,
			`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"privileged"}}}`,
			`{"metadata":{"labels":{"tenancy.opctl.dev/allow-nodeports":"true"}}}`,
			`{"metadata":{"annotations":{"tenancy.opctl.dev/release-workloads":"deployments/mine"}}}`,
		} {
			_, err := editor.CoreV1().Namespaces().Patch(ctx, a, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			forbidden(t, "namespace patch "+patch, err, "are the tenancy controller's")
		}
		forbidden(t, "deleting a tenant namespace", editor.CoreV1().Namespaces().Delete(ctx, a, metav1.DeleteOptions{}), "are the tenancy controller's")
		if _, err := editor.CoreV1().Namespaces().Patch(ctx, a, types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"blue"},"annotations":{"team":"blue"}}}`), metav1.PatchOptions{}); err != nil {
			t.Errorf("an unrelated label and annotation: %v, want allowed", err)
		}
	})

	t.Run("guardrails/profile allows NodePorts", func(t *testing.T) {
		owner := kubernetes.NewForConfigOrDie(c.As("owner-" + open))
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "exposed"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
			Ports: []corev1.ServicePort{{Port: 80}}, Selector: map[string]string{"app": "x"}}}
		if _, err := owner.CoreV1().Services(open).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Errorf("a NodePort Service where the profile allows it: %v", err)
		}
		svc.Name, svc.Spec.Type = "balanced", corev1.ServiceTypeLoadBalancer
		_, err := owner.CoreV1().Services(open).Create(ctx, svc, metav1.CreateOptions{})
		forbidden(t, "a LoadBalancer Service the profile does not allow", err, "LoadBalancer Services are not allowed")
		q := quotaOf(t, open)
		if _, ok := q.Spec.Hard[corev1.ResourceServicesNodePorts]; ok {
			t.Errorf("quota %v limits the NodePorts the profile allows", q.Spec.Hard)
		}
		if v, ok := q.Spec.Hard[corev1.ResourceServicesLoadBalancers]; !ok || !v.IsZero() {
			t.Errorf("quota %v: want services.loadbalancers 0", q.Spec.Hard)
		}
	})

	t.Run("guardrails/lockNetworkPolicies", func(t *testing.T) {
		np := func(name string, sel map[string]string) *networkingv1.NetworkPolicy {
			return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.NetworkPolicySpec{
				Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: sel}}}}}}}
		}
		ownerA := kubernetes.NewForConfigOrDie(c.As("owner-" + a))
		_, err := ownerA.NetworkingV1().NetworkPolicies(a).Create(ctx, np("from-all", nil), metav1.CreateOptions{})
		forbidden(t, "a NetworkPolicy admitting every namespace", err, "namespaceSelectors must match")
		_, err = ownerA.NetworkingV1().NetworkPolicies(a).Create(ctx, np("from-b", map[string]string{tenancyv1.LabelTenant: b}), metav1.CreateOptions{})
		forbidden(t, "a NetworkPolicy admitting another tenant", err, "namespaceSelectors must match")
		if _, err := ownerA.NetworkingV1().NetworkPolicies(a).Create(ctx, np("from-self", map[string]string{tenancyv1.LabelTenant: a}), metav1.CreateOptions{}); err != nil {
			t.Errorf("a NetworkPolicy admitting the tenant's own namespaces: %v", err)
		}
		ownerB := kubernetes.NewForConfigOrDie(c.As("owner-" + b))
		if _, err := ownerB.NetworkingV1().NetworkPolicies(b).Create(ctx, np("from-all", nil), metav1.CreateOptions{}); err != nil {
			t.Errorf("an unlocked tenant's NetworkPolicy: %v", err)
		}
	})
}
