package baseline

import (
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Identities of the API server that stand for ServiceAccounts.
const (
	serviceAccountUser   = "system:serviceaccount:"
	serviceAccountsGroup = "system:serviceaccounts"
)

// everyone are the groups every user, or every anonymous request, is in.
var everyone = []string{"system:authenticated", "system:unauthenticated"}

// SubjectsOutside names, as "Kind [namespace/]name", the subjects of a
// binding in namespace ("" for a ClusterRoleBinding) that are not the
// tenant's, whose namespaces are tenant: a tenant's release passes on its
// rights only to its own ServiceAccounts. A ClusterRoleBinding may name
// nothing else. A RoleBinding may also name users and groups (its owners,
// say, who could bind them themselves), but no ServiceAccount of another
// namespace, whether by kind, by user name (system:serviceaccount:ns:name)
// or by group (system:serviceaccounts, system:serviceaccounts:ns), nor
// system:authenticated or system:unauthenticated, which hold them all.
func SubjectsOutside(namespace string, subjects []rbacv1.Subject, tenant []string) []string {
	var out []string
	for _, s := range subjects {
		ns, ok := tenantSubject(namespace, s, tenant)
		if ok {
			continue
		}
		if ns != "" {
			out = append(out, s.Kind+" "+ns+"/"+s.Name)
		} else {
			out = append(out, s.Kind+" "+s.Name)
		}
	}
	return out
}

// tenantSubject reports whether s is the tenant's, and s's namespace
// when it is a ServiceAccount by kind.
func tenantSubject(namespace string, s rbacv1.Subject, tenant []string) (string, bool) {
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		ns := s.Namespace
		if ns == "" {
			ns = namespace // a RoleBinding's own namespace, as the authorizer reads it
		}
		return ns, ns != "" && slices.Contains(tenant, ns)
	case rbacv1.UserKind:
		if rest, ok := strings.CutPrefix(s.Name, serviceAccountUser); ok {
			ns, _, _ := strings.Cut(rest, ":")
			return "", namespace != "" && slices.Contains(tenant, ns)
		}
	case rbacv1.GroupKind:
		if s.Name == serviceAccountsGroup || slices.Contains(everyone, s.Name) {
			return "", false
		}
		if ns, ok := strings.CutPrefix(s.Name, serviceAccountsGroup+":"); ok {
			return "", namespace != "" && slices.Contains(tenant, ns)
		}
	}
	return "", namespace != ""
}

// SubjectNamespace is the namespace whose ServiceAccounts s names, by
// kind, user name or group, in a binding in namespace ("" for a
// ClusterRoleBinding), or "" when it names none of one namespace.
func SubjectNamespace(namespace string, s rbacv1.Subject) string {
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.Namespace != "" {
			return s.Namespace
		}
		return namespace
	case rbacv1.UserKind:
		if rest, ok := strings.CutPrefix(s.Name, serviceAccountUser); ok {
			ns, _, _ := strings.Cut(rest, ":")
			return ns
		}
	case rbacv1.GroupKind:
		if ns, ok := strings.CutPrefix(s.Name, serviceAccountsGroup+":"); ok {
			return ns
		}
	}
	return ""
}

// APIServiceKind is the kind of the API server's aggregated APIs.
const APIServiceKind = "APIService"

// ClusterObjectRefused says why a tenant's release may not carry a
// cluster-scoped object of group and kind (served is the API group an
// APIService serves).
func ClusterObjectRefused(group, kind, served string) string {
	if group == "apiregistration.k8s.io" && kind == APIServiceKind {
		if served == "" {
			served = "it names"
		}
		return "an APIService serves the API group " + served + " to the whole cluster (the API server sends every namespace's requests for it to the Service it names), so a tenant cannot own one: install the operator that serves it once for the cluster"
	}
	return "a tenant's release may create only ClusterRoles, ClusterRoleBindings and webhook configurations"
}
