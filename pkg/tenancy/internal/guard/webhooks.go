package guard

import (
	"fmt"
	"slices"
	"strings"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
)

// NarrowWebhooks confines the webhooks of a release's Validating- or
// MutatingWebhookConfiguration to what its tenant owns: namespaced
// objects (every rule's scope), in the tenant's namespaces (added to the
// namespaceSelector), not managed by the platform (the objectSelector
// excludes objects with the tenant label: the namespace's quota, limits,
// policies and bindings, and the release's own objects), and written by
// the tenant (a matchCondition, TenantRequests). The Service behind a
// webhook is in a tenant namespace, where the tenant controls it, so
// without this a tenant could read or change other tenants' requests,
// cluster-scoped ones, or the platform's writes, which the controller
// checked before making them. Other kinds are left alone.
func NarrowWebhooks(u *unstructured.Unstructured, namespaces []string) {
	if !IsWebhookConfiguration(u.GroupVersionKind()) {
		return
	}
	hooks, _ := u.Object["webhooks"].([]any)
	for _, h := range hooks {
		hook, ok := h.(map[string]any)
		if !ok {
			continue
		}
		ns := make([]any, len(namespaces))
		for i, n := range namespaces {
			ns[i] = n
		}
		require(hook, "namespaceSelector", map[string]any{"key": corev1.LabelMetadataName, "operator": "In", "values": ns})
		require(hook, "objectSelector", map[string]any{"key": tenancyv1.LabelTenant, "operator": "DoesNotExist"})
		conds, _ := hook["matchConditions"].([]any)
		conds = slices.DeleteFunc(conds, func(c any) bool {
			m, _ := c.(map[string]any)
			return m["name"] == TenantRequestsCondition
		})
		hook["matchConditions"] = append(conds, map[string]any{"name": TenantRequestsCondition, "expression": TenantRequests(namespaces)})
		rules, _ := hook["rules"].([]any)
		for _, r := range rules {
			if rule, ok := r.(map[string]any); ok {
				rule["scope"] = "Namespaced"
			}
		}
	}
}

// IsWebhookConfiguration reports whether gvk is a kind NarrowWebhooks
// narrows: a Validating- or MutatingWebhookConfiguration.
func IsWebhookConfiguration(gvk schema.GroupVersionKind) bool {
	return gvk.Group == "admissionregistration.k8s.io" && gvk.Version == "v1" &&
		(gvk.Kind == "ValidatingWebhookConfiguration" || gvk.Kind == "MutatingWebhookConfiguration")
}

// WebhooksNarrowed reports whether the webhook configuration u (a live
// one, as the API server returns it) is narrowed to namespaces as
// NarrowWebhooks narrows now: NarrowWebhooks would leave it as it is.
// A configuration rendered by an older controller, one a rollback brought
// back from an older revision, or one changed since, is not; nor is one
// narrowed to namespaces the tenant no longer has all of (its
// matchCondition names the old ones). Other kinds are.
func WebhooksNarrowed(u *unstructured.Unstructured, namespaces []string) bool {
	if !IsWebhookConfiguration(u.GroupVersionKind()) {
		return true
	}
	narrowed := u.DeepCopy()
	NarrowWebhooks(narrowed, namespaces)
	return equality.Semantic.DeepEqual(narrowed.Object, u.Object)
}

// TenantRequestsCondition names the matchCondition NarrowWebhooks adds.
const TenantRequestsCondition = "opctl-tenant-requests"

// TenantRequests is a CEL match condition that holds only for requests a
// tenant of namespaces makes: by a user that is not a system identity,
// or by a ServiceAccount of those namespaces other than the OLM
// OperatorGroup's, and never by a member of system:masters. Every write
// of the platform is left out, whatever it writes and where: the
// controller's and its per-tenant actors' (ServiceAccounts of the
// controller's namespace), OLM's (its own ServiceAccounts, or the
// OperatorGroup's in the tenant's namespace), kube-system's controllers,
// nodes, and cluster admins.
func TenantRequests(namespaces []string) string {
	prefixes := make([]string, len(namespaces))
	operators := make([]string, len(namespaces))
	for i, ns := range namespaces {
		prefixes[i] = celString(serviceaccount.ServiceAccountUsernamePrefix + ns + ":")
		operators[i] = celString(serviceaccount.MakeUsername(ns, tenancyv1.OperatorGroupServiceAccount))
	}
	return "!(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g == 'system:masters')) && " +
		"!authorizer.group('" + tenancyv1.GroupVersion.Group + "').resource('guardrails').check('bypass').allowed() && " +
		"(!request.userInfo.username.startsWith('system:') || " +
		"([" + strings.Join(prefixes, ", ") + "].exists(p, request.userInfo.username.startsWith(p)) && " +
		"!(request.userInfo.username in [" + strings.Join(operators, ", ") + "])))"
}

// celString quotes s as a CEL string literal. Namespace names are DNS
// labels; the escape keeps any other text a literal.
func celString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// require ANDs a requirement into the label selector hook[field], once.
func require(hook map[string]any, field string, req map[string]any) {
	sel, _ := hook[field].(map[string]any)
	if sel == nil {
		sel = map[string]any{}
	}
	exprs, _ := sel["matchExpressions"].([]any)
	if !slices.ContainsFunc(exprs, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(req) }) {
		exprs = append(exprs, req)
	}
	sel["matchExpressions"] = exprs
	hook[field] = sel
}
