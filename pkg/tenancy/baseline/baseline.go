package baseline

import rbacv1 "k8s.io/api/rbac/v1"

// ClusterRules are the cluster-wide rules every tenant's operator
// may hold without a ClusterRole of the platform's: what the operators
// people run ask for in every scaffold, each with little a tenant learns
// or does with it (docs/tenancy-threat-model.md, "The shipped baseline"):
//   - create TokenReviews and SubjectAccessReviews, as the built-in
//     system:auth-delegator grants: kubebuilder's metrics authentication
//     (go/v4) asks the API server who a scraper is and whether it may
//     read the metrics. A tenant learns whether a token it holds is
//     valid and whose it is, and whether a user may do something: no
//     object and no right;
//   - read StorageClasses: their names, provisioners and parameters,
//     which operators of stateful workloads choose from.
//
// The controller holds them (config/rbac), so that it may write a
// release's ClusterRole that grants them. Reading the operator's own
// CRDs is allowed by name, per release.
var ClusterRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
	{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
	{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"get", "list", "watch"}},
}

// NamespacedRules are the rules every tenant's operator, and so
// its owners, may hold in the tenant's namespaces beyond admin: the
// Prometheus operator's ServiceMonitors, PodMonitors and PrometheusRules,
// which operators ship to be monitored. They grant nothing where the
// cluster does not serve them. The guardrail tenant-monitors keeps a
// monitor to its own namespace's targets and labels, refuses the fields
// that would have a shared Prometheus read its own files (its token, its
// keys), scrape through a proxy or a platform scrape class, or relabel its
// way to other targets, and keeps a rule's labels off other namespaces. A
// rule's expression reads every series the Prometheus it runs in holds:
// a platform sharing one across tenants enforces the namespace label
// there (docs/tenancy-threat-model.md). The tenant-kinds Role grants
// these.
var NamespacedRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"monitoring.coreos.com"}, Resources: []string{"servicemonitors", "podmonitors", "prometheusrules"}, Verbs: OwnKindVerbs},
}

// BuiltinRoles are the built-in ClusterRoles a release may bind without
// defining them, by their rules: those of system:auth-delegator are the
// baseline's review rules, which charts bind for delegated metrics
// authentication. A binding of one is judged by these rules like a
// ClusterRole of the release's own.
var BuiltinRoles = map[string][]rbacv1.PolicyRule{"system:auth-delegator": ClusterRules[:2]}

// OwnKindVerbs are the verbs a tenant may hold on its operators' own
// kinds: the standard verbs of a resource, never a wildcard or a verb
// that only an authorizer check gives meaning to (bypass, escalate, bind,
// impersonate, use).
var OwnKindVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
