package validate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"opctl.dev/opctl/pkg/packaging"
	"opctl.dev/opctl/pkg/packaging/contract"
	"opctl.dev/opctl/pkg/packaging/podsecurity"
	"opctl.dev/opctl/pkg/tenancy/baseline"
)

// TenantReady (OPC-C010, tenant-ready) says what the opctl tenancy
// controller would refuse before installing the chart for a tenant, judged
// against the shipped baseline only.
var TenantReady = register(Check{ID: "OPC-C010", Severity: SeverityWarning, Relayed: false,
	Rationale: "tenant-ready: the opctl tenancy controller installs an operator for a tenant only if its chart fits the tenant: cluster-scoped rules within the shipped baseline (create TokenReviews and SubjectAccessReviews; get, list and watch StorageClasses and the operator's own CRDs by name), a manager that reads which namespaces to watch, pods that meet Pod Security restricted, bindings to the tenant's own ServiceAccounts only (and, in RoleBindings, users and groups), no cluster-scoped object but RBAC, webhooks and CRDs (an APIService serves its group to the whole cluster), Roles in the tenant's namespaces within what its owners hold there (Kubernetes' built-in admin role), the shipped baseline and the operator's own kinds, and no CRD that converts through a webhook. Judged against the shipped baseline only: a TenantProfile's ClusterRoles may allow more.",
	Hint:      "Drop or narrow the rule (resourceNames of the operator's own CRDs; in a Role, what admin holds and the operator's own kinds), use conversion strategy None, have the manager read WATCH_NAMESPACE, meet Pod Security restricted (opctl package adds what it can), or put the object behind a value; or name a ClusterRole that allows it in the TenantProfile."}, checkTenantReady)

// tenantKinds are the cluster-scoped kinds a tenant's chart may carry:
// the tenancy controller turns RBAC into per-tenant grants, shares CRDs
// and scopes webhooks.
var tenantKinds = []string{"ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"}

const againstBaseline = "for a tenant (against the shipped baseline only): "

func checkTenantReady(c *Check, r *Report, in *chartInput) {
	// Offline, nothing is read that could fail.
	_, _ = judgeTenant(context.Background(), c, r, in, tenantPolicy{})
}

// judgeTenant adds to r what the tenancy controller would refuse of the
// chart for a tenant, the platform's roles allowing more than the shipped
// baseline, and returns the cluster-wide rules nothing allows. An error
// is a failure to read the cluster of tp.
func judgeTenant(ctx context.Context, c *Check, r *Report, in *chartInput, tp tenantPolicy) (missing []rbacv1.PolicyRule, err error) {
	// The tenancy controller installs with rbac.scope=namespace.
	rd := &in.renders[len(in.renders)-1]
	if rd.err != nil {
		return nil, nil
	}
	platform := tp.platform
	againstBaseline := against(platform)
	if in.chart.Metadata != nil {
		// As the controller judges it (namespacedManager): a manager
		// whose code was not found is taken as it is, whatever install
		// modes its rules allow (refused for those rules, if beyond).
		ann := in.chart.Metadata.Annotations
		if modes, ok := ann[contract.InstallModes]; ok && contract.AllNamespacesOnly(modes) && ann[contract.WatchNamespace] != contract.WatchUnknown {
			r.add(c, againstBaseline+"the manager reads no watch-namespace setting ("+contract.WatchNamespace+": "+ann[contract.WatchNamespace]+"), so it watches every namespace and is refused", "Chart.yaml", "")
		}
	}
	var crds []string
	clusterKinds := map[string]bool{}
	roles := map[string][]rbacv1.PolicyRule{}
	for _, o := range rd.objs {
		switch o.obj.GetKind() {
		case "CustomResourceDefinition":
			crds = append(crds, o.obj.GetName())
			if scope, _, _ := unstructured.NestedString(o.obj.Object, "spec", "scope"); scope == "Cluster" {
				group, _, _ := unstructured.NestedString(o.obj.Object, "spec", "group")
				kind, _, _ := unstructured.NestedString(o.obj.Object, "spec", "names", "kind")
				clusterKinds[group+"/"+kind] = true
			}
		case "ClusterRole":
			var role rbacv1.ClusterRole
			if runtime.DefaultUnstructuredConverter.FromUnstructured(o.obj.Object, &role) == nil {
				roles[role.Name] = role.Rules
			}
		}
	}
	allowed := append(slices.Clone(baseline.ClusterRules), rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch"}, ResourceNames: crds})
	for _, role := range platform {
		allowed = append(allowed, role.Rules...)
	}
	namespaces := in.namespaces
	if namespaces == nil {
		namespaces = []string{renderNamespace}
	}
	for _, o := range rd.objs {
		kind, group := o.obj.GetKind(), o.obj.GroupVersionKind().Group
		id := kind + "/" + o.obj.GetName()
		if group == rbacv1.GroupName && (kind == "RoleBinding" || kind == "ClusterRoleBinding") {
			judgeSubjects(c, r, o, namespaces, againstBaseline)
		}
		if kind == "ClusterRoleBinding" {
			var b rbacv1.ClusterRoleBinding
			if runtime.DefaultUnstructuredConverter.FromUnstructured(o.obj.Object, &b) != nil {
				continue
			}
			rules, ok := roles[b.RoleRef.Name]
			if !ok {
				rules, ok = baseline.BuiltinRoles[b.RoleRef.Name]
			}
			if !ok {
				r.add(c, againstBaseline+"binds ClusterRole "+b.RoleRef.Name+", which the chart does not define, cluster-wide", o.template, id)
				continue
			}
			lacking := beyondAllowed(rules, allowed)
			missing = append(missing, lacking...)
			for _, rule := range lacking {
				r.add(c, againstBaseline+"ClusterRole "+b.RoleRef.Name+" grants cluster-wide "+describeRule(rule), o.template, id)
			}
			continue
		}
		if !slices.Contains(tenantKinds, kind) && (packaging.ClusterScopedKind(group, kind) || clusterKinds[group+"/"+kind]) {
			served, _, _ := unstructured.NestedString(o.obj.Object, "spec", "group")
			msg := againstBaseline + "cluster-scoped " + kind + " " + o.obj.GetName() + " is refused: " + baseline.ClusterObjectRefused(group, kind, served)
			if v := templateGate(in.chart, o.template); v != "" {
				msg += "; " + v + "=false leaves it out"
			}
			r.add(c, msg, o.template, id)
		}
	}
	for _, w := range rd.workloads {
		res, err := podsecurity.Evaluate(nil, w.spec)
		if err != nil || res.Meets(podsecurity.Restricted) {
			continue
		}
		r.add(c, fmt.Sprintf("%sits pods meet Pod Security %s, not restricted, which every tenant namespace enforces: %s", againstBaseline, res.Level, res.Refusals[podsecurity.Restricted]), w.template, w.id)
	}
	if err := judgeNamespaced(ctx, c, r, in, rd, tp, allowed, roles); err != nil {
		return nil, err
	}
	return missing, nil
}

// judgeSubjects adds to r the subjects of a binding that are not the
// tenant's, whose namespaces are namespaces (baseline.SubjectsOutside).
func judgeSubjects(c *Check, r *Report, o rendered, namespaces []string, against string) {
	var b rbacv1.RoleBinding // a ClusterRoleBinding's subjects read the same
	if runtime.DefaultUnstructuredConverter.FromUnstructured(o.obj.Object, &b) != nil {
		return
	}
	ns, what := "", "cluster-wide rights"
	if o.obj.GetKind() == "RoleBinding" {
		ns, what = cmp.Or(b.Namespace, namespaces[0]), "its role"
	}
	for _, s := range baseline.SubjectsOutside(ns, b.Subjects, namespaces) {
		r.add(c, against+o.obj.GetKind()+" "+b.Name+" grants "+what+" to "+s+", which is not the tenant's: a release may bind the ServiceAccounts of the tenant's namespaces (and, in a RoleBinding, users and groups), "+
			"but no other namespace's ServiceAccounts nor every user; a chart binds its own account in {{ .Release.Namespace }}", o.template, o.obj.GetKind()+"/"+b.Name)
	}
}

// against starts a refusal: what it was judged against.
func against(platform []rbacv1.ClusterRole) string {
	if len(platform) == 0 {
		return againstBaseline
	}
	var names []string
	for _, role := range platform {
		names = append(names, role.Name)
	}
	return "for a tenant (against the shipped baseline and ClusterRoles " + strings.Join(names, ", ") + "): "
}

// templateGate is the value that turns off the template of ch at path
// (contract.Gate); "" when none does.
func templateGate(ch *chart.Chart, path string) string {
	for _, t := range ch.Templates {
		if t.Name == path {
			return contract.Gate(t.Data)
		}
	}
	return ""
}

// beyondAllowed is what rules grant that no allowed rule covers, a rule
// per group, resource and resource names with the verbs missing. A rule
// covers another when it holds each of its groups, resources and verbs,
// and either names no resource or names each the other does.
func beyondAllowed(rules, allowed []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, rule := range rules {
		if len(rule.NonResourceURLs) > 0 {
			out = append(out, rule)
			continue
		}
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				var missing []string
				for _, v := range rule.Verbs {
					if !slices.ContainsFunc(allowed, func(a rbacv1.PolicyRule) bool { return covers(a, g, res, v, rule.ResourceNames) }) {
						missing = append(missing, v)
					}
				}
				if len(missing) > 0 {
					out = append(out, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: missing, ResourceNames: rule.ResourceNames})
				}
			}
		}
	}
	return out
}

// describeRule says what a rule of beyondAllowed grants, as "verbs on
// group/resource[ (names)]".
func describeRule(rule rbacv1.PolicyRule) string {
	if len(rule.NonResourceURLs) > 0 {
		return strings.Join(rule.Verbs, ",") + " on " + strings.Join(rule.NonResourceURLs, ",")
	}
	what := strings.Join(rule.Verbs, ",") + " on " + strings.TrimPrefix(rule.APIGroups[0]+"/"+rule.Resources[0], "/")
	if len(rule.ResourceNames) > 0 {
		what += " (" + strings.Join(rule.ResourceNames, ",") + ")"
	}
	return what
}

func covers(a rbacv1.PolicyRule, group, resource, verb string, names []string) bool {
	if !slices.Contains(a.APIGroups, group) || !slices.Contains(a.Resources, resource) || !slices.Contains(a.Verbs, verb) {
		return false
	}
	if len(a.ResourceNames) == 0 {
		return true
	}
	if len(names) == 0 {
		return false
	}
	for _, n := range names {
		if !slices.Contains(a.ResourceNames, n) {
			return false
		}
	}
	return true
}
