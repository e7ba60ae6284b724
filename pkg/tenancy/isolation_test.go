package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mattfenwick/cyclonus/pkg/matcher"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// apiServerSlice is the EndpointSlice a real API server keeps for the
// kubernetes Service; the test control plane runs with
// --endpoint-reconciler-type=none, so the tests write it.
func apiServerSlice(ip string) *discoveryv1.EndpointSlice {
	port, tcp := int32(6443), corev1.ProtocolTCP
	name := "https"
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "kubernetes", Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &tcp}},
	}
}

// ensureAPIServerSlice creates the slice unless it exists.
func ensureAPIServerSlice(ctx context.Context) error {
	if err := cl.Create(ctx, apiServerSlice(apiServerIP)); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

const apiServerIP = "192.0.2.10"

// Isolation as an independent engine sees it: the live NetworkPolicies of
// three tenants (one admitting an ingress namespace, one with
// networkPolicy: false) and of the namespaces around them go through
// cyclonus' policy matcher, and its reachability table between real pods
// (two per tenant, a DNS pod in kube-system, one in the ingress
// namespace) must be the isolation we promise.
func TestIsolationReachability(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	id := suffix()
	a, b, open, ingress := "iso-a-"+id, "iso-b-"+id, "iso-open-"+id, "iso-ingress-"+id
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ingress}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cl.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ingress}})
	})
	off := false
	ta, tb, to := newTenant(a, []string{a}, "", 0), newTenant(b, []string{b}, "", 0), newTenant(open, []string{open}, "", 0)
	ta.Spec.Isolation = &tenancyv1.IsolationSpec{IngressNamespaces: []string{ingress}}
	to.Spec.Isolation = &tenancyv1.IsolationSpec{NetworkPolicy: &off}
	for _, tn := range []*tenancyv1.Tenant{ta, tb, to} {
		createTenant(t, tn)
	}
	for _, name := range []string{a, b, open} {
		waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)
	}

	// Two pods per tenant, DNS, and a pod in the ingress namespace.
	type pod struct{ ns, name string }
	pods := []pod{{a, "a1"}, {a, "a2"}, {b, "b1"}, {b, "b2"}, {open, "o1"}, {open, "o2"}, {ingress, "in"}, {"kube-system", "dns-" + id}}
	for _, p := range pods {
		po := restrictedPod(p.name, "10m")
		po.Labels = map[string]string{"app": p.name}
		if p.ns == "kube-system" {
			po.Labels["k8s-app"] = "kube-dns"
		}
		if _, err := c.Client.CoreV1().Pods(p.ns).Create(ctx, po, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Client.CoreV1().Pods(p.ns).Delete(context.Background(), p.name, metav1.DeleteOptions{}) })
	}
	peer := map[string]*matcher.TrafficPeer{}
	testcluster.Eventually(t, time.Minute, "pods running with IPs", func(ctx context.Context) error {
		for _, p := range pods {
			live, err := c.Client.CoreV1().Pods(p.ns).Get(ctx, p.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if live.Status.PodIP == "" {
				return fmt.Errorf("pod %s/%s has no IP", p.ns, p.name)
			}
			ns, err := c.Client.CoreV1().Namespaces().Get(ctx, p.ns, metav1.GetOptions{})
			if err != nil {
				return err
			}
			peer[p.name] = &matcher.TrafficPeer{IP: live.Status.PodIP,
				Internal: &matcher.InternalPeer{PodLabels: live.Labels, NamespaceLabels: ns.Labels, Namespace: p.ns}}
		}
		return nil
	})
	var policies []*networkingv1.NetworkPolicy
	for _, ns := range []string{a, b, open, ingress, "kube-system"} {
		var list networkingv1.NetworkPolicyList
		if err := cl.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			policies = append(policies, &list.Items[i])
		}
	}
	engine := matcher.BuildNetworkPolicies(true, policies)
	allowed := func(from, to *matcher.TrafficPeer, port int, proto corev1.Protocol) bool {
		return engine.IsTrafficAllowed(&matcher.Traffic{Source: from, Destination: to, ResolvedPort: port, Protocol: proto}).IsAllowed()
	}

	// The table: every pair of pods on TCP 8080.
	names := []string{"a1", "a2", "b1", "b2", "o1", "o2", "in"}
	tenantOf := map[string]string{"a1": "a", "a2": "a", "b1": "b", "b2": "b", "o1": "open", "o2": "open", "in": "ingress"}
	want := func(from, to string) bool {
		f, d := tenantOf[from], tenantOf[to]
		switch {
		case f == d:
			return true // inside a tenant (and inside the ingress namespace)
		case f == "open" || d == "open":
			// networkPolicy: false leaves the open tenant open; the others'
			// own policies still keep it out.
			return (f == "open" && d == "ingress") || (f == "ingress" && d == "open")
		case f == "ingress" && d == "a":
			return true // ingressNamespaces
		case d == "ingress":
			return false // a and b may not leave the tenant
		}
		return false // across tenants, both ways
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-4s", "")
	for _, to := range names {
		fmt.Fprintf(&table, "%4s", to)
	}
	table.WriteString("\n")
	for _, from := range names {
		fmt.Fprintf(&table, "%-4s", from)
		for _, to := range names {
			got := allowed(peer[from], peer[to], 8080, corev1.ProtocolTCP)
			mark := "."
			if got {
				mark = "X"
			}
			fmt.Fprintf(&table, "%4s", mark)
			if got != want(from, to) {
				t.Errorf("%s → %s on TCP 8080: allowed %t, want %t", from, to, got, want(from, to))
			}
		}
		table.WriteString("\n")
	}
	t.Logf("reachability (cyclonus, X = allowed):\n%s", table.String())

	dns := peer["dns-"+id]
	external := func(ip string) *matcher.TrafficPeer { return &matcher.TrafficPeer{IP: ip} }
	for _, tc := range []struct {
		what     string
		from, to *matcher.TrafficPeer
		port     int
		proto    corev1.Protocol
		want     bool
	}{
		{"a → DNS (UDP 53)", peer["a1"], dns, 53, corev1.ProtocolUDP, true},
		{"b → DNS (TCP 53)", peer["b1"], dns, 53, corev1.ProtocolTCP, true},
		{"a → kube-system other than DNS", peer["a1"], dns, 8080, corev1.ProtocolTCP, false},
		{"a → the API server's Service address", peer["a1"], external("10.0.0.1"), 443, corev1.ProtocolTCP, true},
		{"a → the API server's endpoint", peer["a1"], external(apiServerIP), 6443, corev1.ProtocolTCP, true},
		{"a → another address on 443", peer["a1"], external("203.0.113.5"), 443, corev1.ProtocolTCP, false},
		{"a → another address on 6443", peer["a1"], external("203.0.113.5"), 6443, corev1.ProtocolTCP, false},
		{"open → anywhere", peer["o1"], external("203.0.113.5"), 443, corev1.ProtocolTCP, true},
	} {
		if got := allowed(tc.from, tc.to, tc.port, tc.proto); got != tc.want {
			t.Errorf("%s: allowed %t, want %t", tc.what, got, tc.want)
		}
	}

	t.Run("egress follows the API server's addresses", func(t *testing.T) {
		moved := apiServerSlice("192.0.2.20")
		live := &discoveryv1.EndpointSlice{}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(moved), live); err != nil {
			t.Fatal(err)
		}
		live.Endpoints = moved.Endpoints
		if err := cl.Update(ctx, live); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			back := &discoveryv1.EndpointSlice{}
			if err := cl.Get(context.Background(), client.ObjectKeyFromObject(moved), back); err == nil {
				back.Endpoints = apiServerSlice(apiServerIP).Endpoints
				_ = cl.Update(context.Background(), back)
			}
		})
		testcluster.Eventually(t, 30*time.Second, "allow policy names 192.0.2.20", func(ctx context.Context) error {
			np := &networkingv1.NetworkPolicy{}
			if err := cl.Get(ctx, client.ObjectKey{Namespace: b, Name: tenancy.PolicyAllow}, np); err != nil {
				return err
			}
			var blocks []string
			for _, r := range np.Spec.Egress {
				for _, p := range r.To {
					if p.IPBlock != nil {
						blocks = append(blocks, p.IPBlock.CIDR)
					}
				}
			}
			if strings.Join(blocks, ",") != "10.0.0.1/32,192.0.2.20/32" {
				return fmt.Errorf("egress ipBlocks %v", blocks)
			}
			return nil
		})
	})
}
