package tenancy

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/quota"
)

// Names of the objects in every tenant namespace.
const (
	QuotaName       = "tenant-quota"
	LimitRangeName  = "tenant-limits"
	OwnersBinding   = "tenant-owners"
	PolicyDenyAll   = "tenant-default-deny"
	PolicyAllow     = "tenant-allow"
	labelPSAEnforce = "pod-security.kubernetes.io/enforce"
)

// Namespace labels the guardrail policies (config/guardrails) read.
const (
	LabelAllowNodePorts      = "tenancy.opctl.dev/allow-nodeports"
	LabelAllowLoadBalancers  = "tenancy.opctl.dev/allow-loadbalancers"
	LabelAllowExternalIPs    = "tenancy.opctl.dev/allow-externalips"
	LabelAllowExternalName   = "tenancy.opctl.dev/allow-externalname"
	LabelAllowIngress        = "tenancy.opctl.dev/allow-ingress"
	LabelLockNetworkPolicies = "tenancy.opctl.dev/lock-network-policies"
)

// settings are a Tenant's effective settings, its profile applied.
type settings struct {
	PodSecurity         string
	HeadroomPercent     int64
	NetworkPolicy       bool
	IngressNamespaces   []string
	LockNetworkPolicies bool
	Services            tenancyv1.ServiceExposure
	// APIServer are the addresses tenant pods may reach the API server at.
	APIServer []apiEndpoint
	// ClusterRoles are the ClusterRoles whose rules the tenant's operators
	// may hold cluster-wide: the controller's and the profile's (grants.go).
	ClusterRoles []string
	// ShardLabel and Shard, when sharded, label every object of the
	// tenant for its shard's cache.
	ShardLabel, Shard string
	// Actor is the user name of the tenant's actor, which each tenant
	// namespace names (tenancyv1.AnnotationActor) for the guardrails.
	Actor string
	// DefaultQuota is the profile's default quota, else the shipped one.
	DefaultQuota tenancyv1.DefaultQuota
}

// ownedLabels are the labels of every object the controller makes for
// tenant, its release objects included: the tenant and, when sharded, the
// tenant's shard, which the shard's caches select.
func (s settings) ownedLabels(tenant string) map[string]string {
	l := map[string]string{tenancyv1.LabelTenant: tenant}
	if s.Shard != "" {
		l[s.ShardLabel] = s.Shard
	}
	return l
}

// namespaceLabels are the labels of a tenant namespace: the owned labels,
// the Pod Security level and what the guardrails allow.
func (s settings) namespaceLabels(tenant string) map[string]string {
	l := s.ownedLabels(tenant)
	l[labelPSAEnforce] = s.PodSecurity
	for label, on := range map[string]bool{
		LabelAllowNodePorts: s.Services.AllowNodePorts, LabelAllowLoadBalancers: s.Services.AllowLoadBalancers,
		LabelAllowExternalIPs: s.Services.AllowExternalIPs, LabelAllowExternalName: s.Services.AllowExternalName,
		LabelAllowIngress: s.Services.AllowIngress, LabelLockNetworkPolicies: s.LockNetworkPolicies,
	} {
		if on {
			l[label] = "true"
		}
	}
	return l
}

// namespaceAnnotations are the controller's annotations of a tenant
// namespace that it applies with the namespace: the actor's name.
func (s settings) namespaceAnnotations() map[string]string {
	if s.Actor == "" {
		return nil
	}
	return map[string]string{tenancyv1.AnnotationActor: s.Actor}
}

func effectiveSettings(t *tenancyv1.Tenant, p *tenancyv1.TenantProfile) settings {
	s := settings{PodSecurity: "restricted", HeadroomPercent: 20, NetworkPolicy: true, DefaultQuota: quota.DefaultQuota(p)}
	iso := t.Spec.Isolation
	if p != nil {
		if p.Spec.PodSecurity != "" {
			s.PodSecurity = p.Spec.PodSecurity
		}
		if p.Spec.HeadroomPercent != nil {
			s.HeadroomPercent = int64(*p.Spec.HeadroomPercent)
		}
		if p.Spec.Services != nil {
			s.Services = *p.Spec.Services
		}
		s.ClusterRoles = p.Spec.ClusterRoles
		if iso == nil {
			iso = p.Spec.Isolation
		}
	}
	if iso != nil {
		if iso.NetworkPolicy != nil {
			s.NetworkPolicy = *iso.NetworkPolicy
		}
		s.IngressNamespaces = iso.IngressNamespaces
		s.LockNetworkPolicies = iso.LockNetworkPolicies
	}
	return s
}

// namespaceObjects are the objects of one tenant namespace.
func namespaceObjects(t *tenancyv1.Tenant, ns string, s settings, q quota.Quota) []client.Object {
	labels := s.ownedLabels(t.Name)
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: s.namespaceLabels(t.Name), Annotations: s.namespaceAnnotations()}},
		&corev1.ResourceQuota{ObjectMeta: meta(QuotaName), Spec: corev1.ResourceQuotaSpec{Hard: q.Hard}},
	}
	if len(q.Default) > 0 || len(q.DefaultRequest) > 0 {
		objs = append(objs, &corev1.LimitRange{ObjectMeta: meta(LimitRangeName), Spec: corev1.LimitRangeSpec{
			Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Default: q.Default, DefaultRequest: q.DefaultRequest}},
		}})
	}
	if len(t.Spec.Owners) > 0 {
		objs = append(objs, &rbacv1.RoleBinding{ObjectMeta: meta(OwnersBinding),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
			Subjects: t.Spec.Owners,
		})
	}
	if s.NetworkPolicy {
		objs = append(objs, networkPolicies(t, s, meta)...)
	}
	return objs
}

// networkPolicies deny everything, then one policy allows the tenant's own
// namespaces, DNS, the API server and the configured ingress namespaces.
func networkPolicies(t *tenancyv1.Tenant, s settings, meta func(string) metav1.ObjectMeta) []client.Object {
	all := metav1.LabelSelector{}
	sameTenant := []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{tenancyv1.LabelTenant: t.Name}}}}
	both := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
	udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
	port := func(p corev1.Protocol, n int) networkingv1.NetworkPolicyPort {
		v := intstr.FromInt32(int32(n))
		return networkingv1.NetworkPolicyPort{Protocol: &p, Port: &v}
	}
	allow := networkingv1.NetworkPolicySpec{
		PodSelector: all, PolicyTypes: both,
		Ingress: []networkingv1.NetworkPolicyIngressRule{{From: sameTenant}},
		Egress: []networkingv1.NetworkPolicyEgressRule{
			{To: sameTenant},
			{ // DNS
				To:    []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}}}},
				Ports: []networkingv1.NetworkPolicyPort{port(udp, 53), port(tcp, 53)},
			},
		},
	}
	// Operators talk to the API server, whose addresses are not pods:
	// exactly those, on their ports.
	for _, e := range s.APIServer {
		rule := networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: cidr(e.IP)}}}}
		for _, p := range e.Ports {
			rule.Ports = append(rule.Ports, port(tcp, int(p)))
		}
		allow.Egress = append(allow.Egress, rule)
	}
	if len(s.IngressNamespaces) > 0 {
		allow.Ingress = append(allow.Ingress, networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: s.IngressNamespaces}},
		}}}})
	}
	return []client.Object{
		&networkingv1.NetworkPolicy{ObjectMeta: meta(PolicyDenyAll), Spec: networkingv1.NetworkPolicySpec{PodSelector: all, PolicyTypes: both}},
		&networkingv1.NetworkPolicy{ObjectMeta: meta(PolicyAllow), Spec: allow},
	}
}

// ownedReader reads the objects the controller labels for a tenant
// (settings.ownedLabels). A shard caches only the objects labelled with
// its own shard: a tenant that has just moved here keeps the label of the
// shard it left until this reconcile relabels its objects, so a shard
// reads a cache miss live. Unsharded, the cache is the answer.
type ownedReader struct {
	cache, live client.Reader
	sharded     bool
}

// Get reads one object, live on a shard's cache miss.
func (r ownedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	err := r.cache.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) && r.sharded {
		return r.live.Get(ctx, key, obj)
	}
	return err
}

// List lists objects, live when a shard's cache has none.
func (r ownedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := r.cache.List(ctx, list, opts...); err != nil || !r.sharded || meta.LenList(list) > 0 {
		return err
	}
	return r.live.List(ctx, list, opts...)
}

func (c *Controller) owned() ownedReader {
	return ownedReader{cache: c.client, live: c.reader, sharded: c.opts.Shard != nil}
}

func (c *Controller) getOwned(ctx context.Context, key client.ObjectKey, obj client.Object) error {
	return c.owned().Get(ctx, key, obj)
}
