package tenancy_test

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy/baseline"
)

// notRequested are verbs the API server checks without a request of
// that verb, so the audit log never shows them: bind and escalate when
// the controller writes a RoleBinding or Role, the guardrails' bypass
// when a ValidatingAdmissionPolicy asks the authorizer. Tests show each
// (TestControllerRights, the guardrail tests).
var notRequested = map[string]bool{"bind": true, "escalate": true, "bypass": true}

// right is one verb on one resource (and name) that a rule grants, in
// namespace ("" for a ClusterRole's).
type right struct {
	verb, group, resource, name, namespace string
}

func (r right) String() string {
	s := fmt.Sprintf("%s %s", r.verb, r.resource)
	if r.group != "" {
		s = fmt.Sprintf("%s %s.%s", r.verb, r.resource, r.group)
	}
	if r.name != "" {
		s += " " + r.name
	}
	if r.namespace != "" {
		s += " in " + r.namespace
	}
	return s
}

// exercised reports whether request e used r.
func (r right) exercised(e testcluster.AuditEvent) bool {
	ref := e.ObjectRef
	resource := ref.Resource
	if ref.Subresource != "" {
		resource += "/" + ref.Subresource
	}
	if r.verb == "impersonate" {
		return e.ImpersonatedUser != nil && r.group == "" && r.resource == "serviceaccounts" &&
			strings.HasPrefix(e.ImpersonatedUser.Username, "system:serviceaccount:"+r.namespace+":") &&
			(r.name == "" || strings.HasSuffix(e.ImpersonatedUser.Username, ":"+r.name))
	}
	if e.ImpersonatedUser != nil || (r.namespace != "" && ref.Namespace != r.namespace) ||
		ref.APIGroup != r.group || resource != r.resource || (r.name != "" && ref.Name != r.name) {
		return false
	}
	switch {
	case e.Verb == r.verb:
		return true
	case r.verb == "create":
		// A server-side apply that creates is a patch the API server
		// authorizes as create too.
		return e.Verb == "patch" && e.ResponseStatus.Code == 201
	case r.verb == "list":
		// An informer lists by a watch that sends the initial objects.
		return e.Verb == "watch" && strings.Contains(e.RequestURI, "sendInitialEvents=true")
	}
	return false
}

// controllerRights are the rights the chart's Roles and ClusterRoles bound
// to the controller's ServiceAccount grant.
func controllerRights(objs []*unstructured.Unstructured, user string) ([]right, error) {
	roles := map[string][]rbacv1.PolicyRule{} // "namespace/name" or "/name"
	var bound []string
	for _, u := range objs {
		switch u.GetKind() {
		case "Role", "ClusterRole":
			r := &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, r); err != nil {
				return nil, err
			}
			roles[u.GetNamespace()+"/"+u.GetName()] = r.Rules
		case "RoleBinding", "ClusterRoleBinding":
			b := &rbacv1.RoleBinding{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, b); err != nil {
				return nil, err
			}
			if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
				return s.Kind == rbacv1.ServiceAccountKind && "system:serviceaccount:"+s.Namespace+":"+s.Name == user
			}) {
				continue
			}
			ns := u.GetNamespace()
			if b.RoleRef.Kind == "ClusterRole" {
				bound = append(bound, ns+"//"+b.RoleRef.Name)
			} else {
				bound = append(bound, ns+"/"+ns+"/"+b.RoleRef.Name)
			}
		}
	}
	var out []right
	for _, ref := range bound {
		ns, role, _ := strings.Cut(ref, "/")
		rules, ok := roles[role]
		if !ok {
			return nil, fmt.Errorf("the chart binds the controller to %s, which it does not hold", role)
		}
		for _, rule := range rules {
			names := rule.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, verb := range rule.Verbs {
				for _, group := range rule.APIGroups {
					for _, res := range rule.Resources {
						for _, name := range names {
							out = append(out, right{verb: verb, group: group, resource: res, name: name, namespace: ns})
						}
					}
				}
			}
		}
	}
	return out, nil
}

// unexercised are rights the controller needs that a run of the suite
// may not use, each with why: the check does not count them.
var unexercised = map[string]string{
	// operatorkit's finalizer deletes every object Build names; the
	// namespace's own deletion often removes them first.
	"delete limitranges":                                                "the finalizer's delete, raced by the namespace's",
	"delete resourcequotas":                                             "the finalizer's delete, raced by the namespace's",
	"delete networkpolicies.networking.k8s.io":                          "the finalizer's delete, raced by the namespace's",
	"delete mutatingwebhookconfigurations.admissionregistration.k8s.io": "the code that changes and deletes validating webhook configurations (exercised) writes mutating ones; no test bundle's mutating webhook changes or goes",
	"patch mutatingwebhookconfigurations.admissionregistration.k8s.io":  "as delete",
	"get clusterserviceversions.operators.coreos.com":                   "a shard reads a cache miss live (ownedReader); no sharded test has an OLM tenant",
	"update clusterroles.rbac.authorization.k8s.io":                     "an OLM upgrade whose cluster permissions change updates the plan's ClusterRoles (writePlanObject); no test upgrade changes them",
	"update clusterrolebindings.rbac.authorization.k8s.io":              "as update clusterroles",
	"patch events":                                "client-go's event correlator patches an Event repeated within minutes",
	"patch events in opctl-system":                "client-go's event correlator patches an Event repeated within minutes",
	"update tenants/finalizers.tenancy.opctl.dev": "OwnerReferencesPermissionEnforcement, which the test control plane does not run, checks it for blockOwnerDeletion",
}

// The shipped baseline the controller holds only to pass on to tenants'
// operators (baseline.ClusterRules): exempt by name.
func init() {
	for _, rule := range baseline.ClusterRules {
		for _, verb := range rule.Verbs {
			for _, group := range rule.APIGroups {
				for _, res := range rule.Resources {
					unexercised[right{verb: verb, group: group, resource: res}.String()] = "the shipped baseline, held to pass on to tenants' operators"
				}
			}
		}
	}
}

// checkRightsExercised fails, after a run of the whole suite, when
// charts/opctl grants the controller a right that none of its requests
// used and that unexercised does not explain (issue "holds under abuse",
// item 7): the chart holds what the controller uses and no more. A run
// of some tests proves nothing and is not checked.
func checkRightsExercised(c *testcluster.Cluster) error {
	if f := flag.Lookup("test.run"); f == nil || f.Value.String() != "" {
		return nil
	}
	if f := flag.Lookup("test.skip"); f == nil || f.Value.String() != "" {
		return nil
	}
	unused, requests, err := unusedRights(c)
	if err != nil {
		return err
	}
	var unexplained []string
	for _, r := range unused {
		if _, ok := unexercised[r]; !ok {
			unexplained = append(unexplained, r)
		}
	}
	fmt.Fprintf(os.Stderr, "rights check: %d requests of the controller; %d rights unused, %d of them explained (unexercised)\n", requests, len(unused), len(unused)-len(unexplained))
	if len(unexplained) > 0 {
		return fmt.Errorf("charts/opctl grants the controller %d rights that none of its %d requests in the suite used: drop them from pkg/tenancy/controller.go (or say in unexercised why a run may not use them):\n  %s",
			len(unexplained), requests, strings.Join(unexplained, "\n  "))
	}
	return nil
}

// unusedRights are the controller's rights that none of its requests in
// the audit log used, and the number of requests.
func unusedRights(c *testcluster.Cluster) ([]string, int, error) {
	rights, err := controllerRights(controllerRBAC, controllerUser)
	if err != nil {
		return nil, 0, err
	}
	events, err := c.AuditRequestsBy(controllerUser)
	if err != nil {
		return nil, 0, err
	}
	var unused []string
	for _, r := range rights {
		if notRequested[r.verb] || slices.ContainsFunc(events, r.exercised) {
			continue
		}
		unused = append(unused, r.String())
	}
	sort.Strings(unused)
	return slices.Compact(unused), len(events), nil
}

func TestRightExercised(t *testing.T) {
	ev := func(verb, group, resource, sub, ns, name, uri string, code int, impersonated string) testcluster.AuditEvent {
		e := testcluster.AuditEvent{Verb: verb, RequestURI: uri}
		e.ObjectRef.APIGroup, e.ObjectRef.Resource, e.ObjectRef.Subresource, e.ObjectRef.Namespace, e.ObjectRef.Name = group, resource, sub, ns, name
		e.ResponseStatus.Code = code
		if impersonated != "" {
			e.ImpersonatedUser = &struct {
				Username string `json:"username"`
			}{impersonated}
		}
		return e
	}
	tests := []struct {
		name  string
		right right
		event testcluster.AuditEvent
		want  bool
	}{
		{"same verb", right{verb: "get", resource: "secrets"}, ev("get", "", "secrets", "", "a", "x", "", 200, ""), true},
		{"other group", right{verb: "get", group: "apps", resource: "deployments"}, ev("get", "", "deployments", "", "a", "x", "", 200, ""), false},
		{"subresource", right{verb: "patch", group: "tenancy.opctl.dev", resource: "tenants/status"}, ev("patch", "tenancy.opctl.dev", "tenants", "status", "", "t", "", 200, ""), true},
		{"not the named object", right{verb: "delete", resource: "serviceaccounts", name: "tenant-operators"}, ev("delete", "", "serviceaccounts", "", "a", "other", "", 200, ""), false},
		{"outside the Role's namespace", right{verb: "get", resource: "secrets", namespace: "opctl-system"}, ev("get", "", "secrets", "", "tenant", "x", "", 200, ""), false},
		{"an apply that creates", right{verb: "create", resource: "configmaps"}, ev("patch", "", "configmaps", "", "a", "x", "", 201, ""), true},
		{"an apply that updates", right{verb: "create", resource: "configmaps"}, ev("patch", "", "configmaps", "", "a", "x", "", 200, ""), false},
		{"a watch that lists", right{verb: "list", resource: "roles", group: "rbac.authorization.k8s.io"}, ev("watch", "rbac.authorization.k8s.io", "roles", "", "", "", "/apis/rbac.authorization.k8s.io/v1/roles?sendInitialEvents=true&watch=true", 200, ""), true},
		{"a plain watch", right{verb: "list", resource: "roles", group: "rbac.authorization.k8s.io"}, ev("watch", "rbac.authorization.k8s.io", "roles", "", "", "", "/apis/rbac.authorization.k8s.io/v1/roles?watch=true", 200, ""), false},
		{"impersonating", right{verb: "impersonate", resource: "serviceaccounts", namespace: "opctl-system"}, ev("get", "", "pods", "", "tenant", "p", "", 200, "system:serviceaccount:opctl-system:opctl-tenant-a"), true},
		{"a request made as the impersonated", right{verb: "get", resource: "pods"}, ev("get", "", "pods", "", "tenant", "p", "", 200, "system:serviceaccount:opctl-system:opctl-tenant-a"), false},
	}
	for _, tt := range tests {
		if got := tt.right.exercised(tt.event); got != tt.want {
			t.Errorf("%s: %v exercised by %+v = %v, want %v", tt.name, tt.right, tt.event, got, tt.want)
		}
	}
}
