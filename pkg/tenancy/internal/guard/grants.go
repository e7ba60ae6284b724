package guard

import (
	"context"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-helpers/auth/rbac/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/baseline"
	"opctl.dev/opctl/pkg/tenancy/policy"
)

// AggregateLabelPrefix starts the labels that add a ClusterRole's rules
// to Kubernetes' admin, edit and view roles.
const AggregateLabelPrefix = "rbac.authorization.k8s.io/aggregate-to-"

// GrantPolicy is what a tenant's release may grant outside its
// namespaces. Everything a tenant's operator holds, the tenant holds (its
// owners can mint the operator's tokens), so:
//   - a ClusterRoleBinding may name only ServiceAccounts of the tenant's
//     namespaces, and grant only rules that the ClusterRoles the platform
//     names (roles) cover, plus get on the operator's own CRDs (crds);
//   - a ClusterRole may not aggregate other roles, nor carry labels that
//     add its rules to another ClusterRole (admin's aggregation among
//     them: that would grant them to every namespace admin), unless its
//     rules name only the operator's own custom resources (a project's
//     editor and viewer roles, which let the owners use its kinds);
//   - no other cluster-scoped kind than these and webhook configurations
//     (clusterKindsAllowed).
//
// Roles and RoleBindings in the tenant's namespaces are the tenant's
// business.
type GrantPolicy struct {
	Roles []string
	Crds  []string
	// Kinds returns the operator's own namespaced CRDs whose rules its
	// ClusterRoles may add to admin, edit and view (nil: none).
	Kinds      func(ctx context.Context) ([]string, error)
	Namespaces []string
	Reader     client.Reader
	Mapper     meta.RESTMapper
	// Exposure is what the profile lets Services reach past the cluster
	// network; the guardrail would refuse the rest from the owner, but
	// the controller holds its bypass.
	Exposure tenancyv1.ServiceExposure
	// Tenant and lockNetworkPolicies: with the lock, a NetworkPolicy may
	// select namespaces only by the tenant's label (the
	// tenant-network-policies guardrail, which the controller bypasses).
	Tenant              string
	LockNetworkPolicies bool
	// Gates map a template, by its Helm source, to the value that turns
	// it off (TemplateGates), for a refusal to name.
	Gates map[string]string
}

// clusterKindsAllowed are the cluster-scoped kinds a tenant's release may
// create: RBAC, which check bounds, and admission webhooks, which the
// render guard narrows to the tenant's namespaces. Any other
// cluster-scoped object (a PersistentVolume with a hostPath, a default
// StorageClass or PriorityClass, a RuntimeClass, an admission policy)
// would act on the whole cluster.
var clusterKindsAllowed = map[schema.GroupKind]bool{
	{Group: rbacv1.GroupName, Kind: "ClusterRole"}:                                  true,
	{Group: rbacv1.GroupName, Kind: "ClusterRoleBinding"}:                           true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   true,
}

// GrantError names what a release would grant outside the tenant.
type GrantError struct {
	Release string
	What    string
	Grants  []string
}

func (e *GrantError) Error() string {
	return fmt.Sprintf("release %s, %s, asks for what the platform does not allow a tenant: %s; nothing was changed. "+
		"Rules in the tenant's namespaces must stay within what its owners hold (admin) and the operator's own kinds; "+
		"a cluster-scoped rule needs a ClusterRole the platform team writes and names (TenantProfile spec.clusterRoles, --tenant-cluster-roles); "+
		"exposing a Service needs the TenantProfile's spec.services",
		e.Release, e.What, strings.Join(e.Grants, "; "))
}

// Check returns what the documents grant outside the policy, sorted. An
// error is a failure to read the cluster, not a finding.
func (g GrantPolicy) Check(ctx context.Context, docs []ManifestDoc) ([]string, error) {
	roles := map[string][]rbacv1.PolicyRule{}
	var bindings []*rbacv1.ClusterRoleBinding
	var nsRoles []*rbacv1.Role
	var nsBindings []*rbacv1.RoleBinding
	var out []string
	var aggregators []labels.Selector
	aggregatorsRead := false
	for _, d := range docs {
		if d.Obj == nil {
			continue
		}
		gvk := d.Obj.GroupVersionKind()
		if why := g.clusterObject(d); why != "" {
			out = append(out, why)
			continue
		}
		if gvk.Group == "admissionregistration.k8s.io" && strings.HasSuffix(gvk.Kind, "WebhookConfiguration") {
			out = append(out, g.webhookTargets(d.Obj)...)
			continue
		}
		if gvk.Group == "" && gvk.Kind == "Service" {
			out = append(out, g.exposed(d.Obj)...)
			continue
		}
		if gvk.Group == "networking.k8s.io" && gvk.Kind == "Ingress" && !g.Exposure.AllowIngress {
			out = append(out, fmt.Sprintf("Ingress %s: the profile does not allow Ingresses (a shared ingress controller serves them with its own rights)", policy.Qualified(d.Obj.GetNamespace(), d.Obj.GetName())))
			continue
		}
		if gvk.Group == "networking.k8s.io" && gvk.Kind == "NetworkPolicy" {
			out = append(out, g.openedTo(d.Obj)...)
			continue
		}
		if gvk.Group != rbacv1.GroupName {
			continue
		}
		switch d.Obj.GetKind() {
		case "Role":
			role, bad := decodeRBAC[rbacv1.Role](d.Obj)
			if bad != "" {
				out = append(out, bad)
				continue
			}
			nsRoles = append(nsRoles, role)
		case "RoleBinding":
			b, bad := decodeRBAC[rbacv1.RoleBinding](d.Obj)
			if bad != "" {
				out = append(out, bad)
				continue
			}
			nsBindings = append(nsBindings, b)
			for _, s := range baseline.SubjectsOutside(b.Namespace, b.Subjects, g.Namespaces) {
				out = append(out, fmt.Sprintf("RoleBinding %s grants its role to %s, which is not the tenant's: a release may bind the ServiceAccounts of the tenant's namespaces, users and groups, "+
					"but no other namespace's ServiceAccounts nor every user (a chart binds its own account in {{ .Release.Namespace }}, not in kubebuilder's placeholder namespace system)", policy.Qualified(b.Namespace, b.Name), s))
			}
		case "ClusterRole":
			role, bad := decodeRBAC[rbacv1.ClusterRole](d.Obj)
			if bad != "" {
				out = append(out, bad)
				continue
			}
			roles[role.Name] = role.Rules
			if role.AggregationRule != nil {
				out = append(out, fmt.Sprintf("ClusterRole %s aggregates other roles", role.Name))
			}
			own, err := g.ownCustomResources(ctx, role.Rules)
			if err != nil {
				return nil, err
			}
			if len(role.Labels) == 0 || own {
				// The helper roles of a project (editor, viewer of its
				// kinds) add rights on the operator's own custom resources
				// to admin, edit and view: what lets the owners use them.
				continue
			}
			aggregated := false
			for k := range role.Labels {
				if strings.HasPrefix(k, AggregateLabelPrefix) {
					out = append(out, fmt.Sprintf("ClusterRole %s adds rules beyond the operator's own custom resources to other roles (label %s)", role.Name, k))
					aggregated = true
				}
			}
			if aggregated {
				continue
			}
			if !aggregatorsRead {
				var err error
				if aggregators, err = g.Aggregators(ctx); err != nil {
					return nil, err
				}
				aggregatorsRead = true
			}
			for _, sel := range aggregators {
				if sel.Matches(labels.Set(role.Labels)) {
					out = append(out, fmt.Sprintf("ClusterRole %s adds rules beyond the operator's own custom resources to another ClusterRole (its labels match %s)", role.Name, sel))
					break
				}
			}
		case "ClusterRoleBinding":
			b, bad := decodeRBAC[rbacv1.ClusterRoleBinding](d.Obj)
			if bad != "" {
				out = append(out, bad)
				continue
			}
			bindings = append(bindings, b)
		}
	}
	var allowed []rbacv1.PolicyRule
	allowedRead := false
	for _, b := range bindings {
		for _, s := range baseline.SubjectsOutside("", b.Subjects, g.Namespaces) {
			out = append(out, fmt.Sprintf("ClusterRoleBinding %s grants cluster-wide rights to %s, not a ServiceAccount of the tenant", b.Name, s))
		}
		if b.RoleRef.Kind != "ClusterRole" {
			out = append(out, fmt.Sprintf("ClusterRoleBinding %s refers to a %s", b.Name, b.RoleRef.Kind))
			continue
		}
		rules, defined := roles[b.RoleRef.Name]
		if !defined {
			rules, defined = baseline.BuiltinRoles[b.RoleRef.Name]
		}
		if !defined {
			if slices.Contains(g.Roles, b.RoleRef.Name) {
				continue
			}
			out = append(out, fmt.Sprintf("ClusterRoleBinding %s binds ClusterRole %s, which the release does not define and the platform does not name", b.Name, b.RoleRef.Name))
			continue
		}
		if !allowedRead {
			var err error
			if allowed, err = g.Allowed(ctx); err != nil {
				return nil, err
			}
			allowedRead = true
		}
		if ok, missing := validation.Covers(allowed, rules); !ok {
			out = append(out, fmt.Sprintf("ClusterRoleBinding %s grants %s cluster-wide", b.Name, policy.DescribeRules(missing)))
		}
	}
	inNamespace, err := g.namespaced(ctx, roles, nsRoles, nsBindings)
	if err != nil {
		return nil, err
	}
	out = append(out, inNamespace...)
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > 0 {
		hints, err := g.unshared(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, hints...)
	}
	return out, nil
}

// clusterObject says why d is refused when it is a cluster-scoped object
// of a kind no tenant's release may create (clusterKindsAllowed), naming
// the value that leaves it out; "" for any other object.
func (g GrantPolicy) clusterObject(d ManifestDoc) string {
	gvk := d.Obj.GroupVersionKind()
	if clusterScoped, known := ScopeOf(g.Mapper, gvk); !known || !clusterScoped || clusterKindsAllowed[gvk.GroupKind()] {
		return ""
	}
	served, _, _ := unstructured.NestedString(d.Obj.Object, "spec", "group")
	return fmt.Sprintf("%s %s is cluster-scoped: %s%s", gvk.Kind, d.Obj.GetName(), baseline.ClusterObjectRefused(gvk.Group, gvk.Kind, served), g.turnOff(d))
}

// ClusterObjects splits the documents of cluster-scoped kinds no tenant's
// release may create off docs, with why each is refused, by the names
// the chart gives them. The render guard asks before its tamper check,
// which would look such an object up with the controller's rights, which
// hold none on it (an APIService, a PriorityClass): the refusal is then
// named instead of failing the install on every try.
func (g GrantPolicy) ClusterObjects(docs []ManifestDoc) (rest []ManifestDoc, refused []string) {
	for _, d := range docs {
		if d.Obj != nil {
			if why := g.clusterObject(d); why != "" {
				refused = append(refused, why)
				continue
			}
		}
		rest = append(rest, d)
	}
	slices.Sort(refused)
	return rest, refused
}

// unshared explains the commonest cause of a refusal: a CRD of the
// operator that exists but that no one shared with tenants (installed by
// another tool, or by another package's tests), so rules on its kinds are
// not the operator's own.
func (g GrantPolicy) unshared(ctx context.Context) ([]string, error) {
	if g.Reader == nil {
		return nil, nil
	}
	var out []string
	for _, name := range g.Crds {
		live := &metav1.PartialObjectMetadata{}
		live.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := g.Reader.Get(ctx, client.ObjectKey{Name: name}, live); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("reading CRD %s: %w", name, err)
		}
		if shared, err := IsShared(ctx, g.Reader, live); err != nil {
			return nil, err
		} else if !shared {
			out = append(out, fmt.Sprintf("(CRD %s exists without the label %s=true, so its kinds are not the operator's own: "+
				"if the platform team installed it for tenants, it labels it: kubectl label crd %s %s=true)", name, tenancyv1.LabelSharedCRD, name, tenancyv1.LabelSharedCRD))
		}
	}
	return out, nil
}

// namespaced checks what a release grants inside the tenant's namespaces
// (policy.Namespaced), OwnerRole as the cluster serves it.
func (g GrantPolicy) namespaced(ctx context.Context, clusterRoles map[string][]rbacv1.PolicyRule, roles []*rbacv1.Role, bindings []*rbacv1.RoleBinding) ([]string, error) {
	if len(roles) == 0 && len(bindings) == 0 {
		return nil, nil
	}
	live := policy.ClusterRoles{Reader: g.Reader}
	n := policy.Namespaced{Named: g.Roles, ClusterRoles: clusterRoles, Roles: roles, Bindings: bindings, Live: live}
	var err error
	if n.Allowed, err = g.Allowed(ctx); err != nil {
		return nil, err
	}
	if n.Owner, err = live.Owner(ctx); err != nil {
		return nil, err
	}
	if g.Kinds != nil {
		if n.Kinds, err = g.Kinds(ctx); err != nil {
			return nil, err
		}
	}
	refused, err := n.Judge(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(refused))
	for i, r := range refused {
		out[i] = r.Text
	}
	return out, nil
}

// openedTo says which peers of a NetworkPolicy select namespaces by
// something else than the tenant's label, when the profile locks them.
func (g GrantPolicy) openedTo(u *unstructured.Unstructured) []string {
	if !g.LockNetworkPolicies {
		return nil
	}
	var out []string
	for _, dir := range [][]string{{"ingress", "from"}, {"egress", "to"}} {
		rules, _, _ := unstructured.NestedSlice(u.Object, "spec", dir[0])
		for _, r := range rules {
			m, _ := r.(map[string]any)
			peers, _, _ := unstructured.NestedSlice(m, dir[1])
			for _, peer := range peers {
				pm, _ := peer.(map[string]any)
				if _, ok := pm["namespaceSelector"]; !ok {
					continue
				}
				if v, _, _ := unstructured.NestedString(pm, "namespaceSelector", "matchLabels", tenancyv1.LabelTenant); v != g.Tenant {
					out = append(out, fmt.Sprintf("NetworkPolicy %s selects namespaces in %s by other than %s=%s, which the tenant's locked isolation does not allow",
						policy.Qualified(u.GetNamespace(), u.GetName()), dir[0], tenancyv1.LabelTenant, g.Tenant))
				}
			}
		}
	}
	return out
}

// exposed says what a Service reaches past the cluster network that the
// profile does not allow: the tenant-service-exposure guardrail's rule,
// which the controller's bypass would skip.
func (g GrantPolicy) exposed(u *unstructured.Unstructured) []string {
	typ, _, _ := unstructured.NestedString(u.Object, "spec", "type")
	ips, _, _ := unstructured.NestedSlice(u.Object, "spec", "externalIPs")
	var out []string
	name := "Service " + policy.Qualified(u.GetNamespace(), u.GetName())
	if typ == "NodePort" && !g.Exposure.AllowNodePorts {
		out = append(out, name+" is a NodePort Service, which the profile does not allow")
	}
	if typ == "LoadBalancer" && !g.Exposure.AllowLoadBalancers {
		out = append(out, name+" is a LoadBalancer Service, which the profile does not allow")
	}
	if len(ips) > 0 && !g.Exposure.AllowExternalIPs {
		out = append(out, name+" sets externalIPs (CVE-2020-8554), which the profile does not allow")
	}
	if typ == "ExternalName" && !g.Exposure.AllowExternalName {
		out = append(out, name+" is an ExternalName Service, which the profile does not allow")
	}
	return out
}

// ownCustomResources reports whether rules name only resources of the
// operator's own kinds (and their subresources), by group and plural.
func (g GrantPolicy) ownCustomResources(ctx context.Context, rules []rbacv1.PolicyRule) (bool, error) {
	if len(rules) == 0 {
		return true, nil
	}
	if g.Kinds == nil {
		return false, nil
	}
	kinds, err := g.Kinds(ctx)
	if err != nil {
		return false, err
	}
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 || len(r.APIGroups) == 0 || len(r.Resources) == 0 {
			return false, nil
		}
		// Added to every namespace's admin, edit or view: the standard
		// verbs only, never a wildcard or a verb an authorizer check reads.
		for _, v := range r.Verbs {
			if !slices.Contains(baseline.OwnKindVerbs, v) {
				return false, nil
			}
		}
		for _, group := range r.APIGroups {
			for _, res := range r.Resources {
				base, _, _ := strings.Cut(res, "/")
				if group == "*" || base == "*" || !slices.Contains(kinds, base+"."+group) {
					return false, nil
				}
			}
		}
	}
	return true, nil
}

// OwnKinds are the namespaced CRDs of want that are the operator's: the
// live CRD is shared (isShared: the controller, or OLM for a tenant,
// installed it). A
// chart that names an existing CRD of someone else's does not make it its
// own, even with an exact copy: the schema is public.
func OwnKinds(ctx context.Context, reader client.Reader, want []*apiextensionsv1.CustomResourceDefinition) ([]string, error) {
	var out []string
	for _, w := range want {
		if w.Spec.Scope != apiextensionsv1.NamespaceScoped || reservedGroup(w.Spec.Group) != "" {
			continue
		}
		live := &metav1.PartialObjectMetadata{}
		live.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := reader.Get(ctx, client.ObjectKey{Name: w.Name}, live); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("reading CRD %s: %w", w.Name, err)
		}
		shared, err := IsShared(ctx, reader, live)
		if err != nil {
			return nil, err
		}
		if shared {
			out = append(out, w.Name)
		}
	}
	return out, nil
}

// webhookTargets says which webhooks of a configuration call something
// outside the tenant: a URL, or a Service in another namespace. The API
// server would send them every request they match, objects included.
func (g GrantPolicy) webhookTargets(u *unstructured.Unstructured) []string {
	hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
	var out []string
	for _, h := range hooks {
		m, _ := h.(map[string]any)
		name, _, _ := unstructured.NestedString(m, "name")
		if url, ok, _ := unstructured.NestedString(m, "clientConfig", "url"); ok && url != "" {
			out = append(out, fmt.Sprintf("%s %s: webhook %s calls the URL %s, outside the tenant", u.GetKind(), u.GetName(), name, url))
		}
		if ns, ok, _ := unstructured.NestedString(m, "clientConfig", "service", "namespace"); ok && !slices.Contains(g.Namespaces, ns) {
			out = append(out, fmt.Sprintf("%s %s: webhook %s calls a Service in namespace %s, outside the tenant", u.GetKind(), u.GetName(), name, ns))
		}
		if own := ownMatchConditions(m); len(own) > 0 {
			out = append(out, fmt.Sprintf("%s %s: webhook %s has matchConditions of its own (%s): the API server would run the tenant's CEL for every request its rules match, all of a webhook's conditions within one cost budget, which they can spend (seconds of the API server's CPU a request, or under failurePolicy Fail a refusal of the platform's writes); a tenant's webhook may filter with its rules and selectors only",
				u.GetKind(), u.GetName(), name, strings.Join(own, ", ")))
		}
	}
	return out
}

// ownMatchConditions names the matchConditions of a webhook but the one
// NarrowWebhooks adds (which it replaces whatever a chart says).
func ownMatchConditions(hook map[string]any) []string {
	conds, _ := hook["matchConditions"].([]any)
	var out []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if name, _ := m["name"].(string); name != TenantRequestsCondition {
			out = append(out, name)
		}
	}
	return out
}

// Allowed is the union of the shipped baseline (baseline.ClusterRules),
// the named ClusterRoles' rules and reading the operator's own CRDs by
// name. A named role that does not exist allows nothing.
func (g GrantPolicy) Allowed(ctx context.Context) ([]rbacv1.PolicyRule, error) {
	rules := slices.Clone(baseline.ClusterRules)
	if len(g.Crds) > 0 {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"},
			Verbs: []string{"get", "list", "watch"}, ResourceNames: g.Crds})
	}
	for _, name := range g.Roles {
		role := &rbacv1.ClusterRole{}
		err := g.Reader.Get(ctx, client.ObjectKey{Name: name}, role)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading the allowed ClusterRole %s: %w", name, err)
		}
		rules = append(rules, role.Rules...)
	}
	return rules, nil
}

// Aggregators are the selectors of the cluster's aggregated ClusterRoles.
func (g GrantPolicy) Aggregators(ctx context.Context) ([]labels.Selector, error) {
	var list rbacv1.ClusterRoleList
	if err := g.Reader.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing ClusterRoles for their aggregation rules: %w", err)
	}
	var out []labels.Selector
	for _, r := range list.Items {
		if r.AggregationRule == nil {
			continue
		}
		for _, ls := range r.AggregationRule.ClusterRoleSelectors {
			sel, err := metav1.LabelSelectorAsSelector(&ls)
			if err != nil || sel.Empty() {
				continue
			}
			out = append(out, sel)
		}
	}
	return out, nil
}

// decodeRBAC converts a rendered RBAC document, or says why it does not
// parse.
func decodeRBAC[T any](u *unstructured.Unstructured) (*T, string) {
	v := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, v); err != nil {
		return nil, fmt.Sprintf("%s %s does not parse (%v)", u.GetKind(), u.GetName(), err)
	}
	return v, ""
}
