package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/component-helpers/auth/rbac/validation"

	"opctl.dev/opctl/pkg/tenancy/baseline"
)

// OwnerRole is the ClusterRole a tenant's owners hold in its namespaces:
// what a release may grant there, with the operator's own kinds and the
// platform's named roles.
const OwnerRole = "admin"

// RoleSource reads the roles a RoleBinding of a release names that the
// release does not define: the cluster's, for the controller.
type RoleSource interface {
	// ClusterRole returns the rules of the ClusterRole name; found is
	// false when there is none.
	ClusterRole(ctx context.Context, name string) (rules []rbacv1.PolicyRule, found bool, err error)
	// Role returns the rules of the Role namespace/name.
	Role(ctx context.Context, namespace, name string) (rules []rbacv1.PolicyRule, found bool, err error)
}

// Namespaced is what a release grants in the tenant's namespaces, and
// what it may grant there.
type Namespaced struct {
	// Allowed are the rules the platform allows the release anywhere: the
	// shipped baseline, the named ClusterRoles' rules and get on the
	// operator's own CRDs.
	Allowed []rbacv1.PolicyRule
	// Owner are the rules of OwnerRole, as the cluster serves it or
	// BuiltinOwnerRules.
	Owner []rbacv1.PolicyRule
	// Kinds are the operator's own namespaced kinds, as CRD names
	// (plural.group).
	Kinds []string
	// Named are the platform's ClusterRoles, which a RoleBinding binds
	// without a judgement.
	Named []string
	// ClusterRoles are those the release defines, by name.
	ClusterRoles map[string][]rbacv1.PolicyRule
	Roles        []*rbacv1.Role
	Bindings     []*rbacv1.RoleBinding
	// Live reads the roles a binding names that the release does not
	// define.
	Live RoleSource
	// Unknown ends the refusal of a binding whose role Live does not
	// find; "" says it does not exist.
	Unknown string
}

// Refusal is a Role or RoleBinding of a release that grants more in the
// tenant's namespaces than Namespaced allows: Text names it, the rules
// beyond and why.
type Refusal struct {
	Kind, Namespace, Name string
	Text                  string
}

// Rules are what a release may grant in the tenant's namespaces: Allowed,
// what its owners hold there, baseline.NamespacedRules, and the standard
// verbs (baseline.OwnKindVerbs) on the operator's own kinds and their
// status, finalizers and scale.
func (n Namespaced) Rules() []rbacv1.PolicyRule {
	rules := slices.Concat(n.Allowed, n.Owner, baseline.NamespacedRules)
	for _, k := range n.Kinds {
		plural, group, _ := strings.Cut(k, ".")
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{group}, Verbs: baseline.OwnKindVerbs,
			Resources: []string{plural, plural + "/status", plural + "/finalizers", plural + "/scale"}})
	}
	return rules
}

// Judge returns what the release grants in the tenant's namespaces beyond
// Rules, a Refusal per Role or binding: no more than the owners hold
// there, the operator's own kinds and the platform's named roles. The
// tenant's actor could not create more; judged before the install, the
// rules are named before anything is installed. An error is a failure to
// read a role, not a finding.
func (n Namespaced) Judge(ctx context.Context) ([]Refusal, error) {
	if len(n.Roles) == 0 && len(n.Bindings) == 0 {
		return nil, nil
	}
	allowed := n.Rules()
	unknown := n.Unknown
	if unknown == "" {
		unknown = "which does not exist (whoever creates it later decides what it grants)"
	}
	var out []Refusal
	refuse := func(kind, ns, name, text string) {
		out = append(out, Refusal{Kind: kind, Namespace: ns, Name: name, Text: text})
	}
	judge := func(kind, ns, name, what string, rules []rbacv1.PolicyRule) {
		if ok, missing := validation.Covers(allowed, rules); !ok {
			refuse(kind, ns, name, fmt.Sprintf("%s grants %s in the tenant's namespaces, beyond what its owners hold (%s) and the operator's own kinds", what, DescribeRules(missing), OwnerRole))
		}
	}
	defined := map[string]bool{}
	for _, r := range n.Roles {
		judge("Role", r.Namespace, r.Name, "Role "+Qualified(r.Namespace, r.Name), r.Rules)
		defined[Qualified(r.Namespace, r.Name)] = true
	}
	for _, b := range n.Bindings {
		if b.RoleRef.Kind != "ClusterRole" {
			// A Role of the release is judged above. Another is judged as
			// it is live: the controller's own Roles there (the actor's
			// guardrail bypass) are not the tenant's to bind.
			ref := Qualified(b.Namespace, b.RoleRef.Name)
			if defined[ref] {
				continue
			}
			name := "RoleBinding " + Qualified(b.Namespace, b.Name) + " of Role " + ref
			rules, found, err := n.Live.Role(ctx, b.Namespace, b.RoleRef.Name)
			if err != nil {
				return nil, fmt.Errorf("reading Role %s: %w", ref, err)
			}
			if !found {
				refuse("RoleBinding", b.Namespace, b.Name, name+", "+unknown)
				continue
			}
			judge("RoleBinding", b.Namespace, b.Name, name, rules)
			continue
		}
		name := "RoleBinding " + Qualified(b.Namespace, b.Name) + " of ClusterRole " + b.RoleRef.Name
		if rules, ok := n.ClusterRoles[b.RoleRef.Name]; ok {
			judge("RoleBinding", b.Namespace, b.Name, name, rules)
			continue
		}
		if slices.Contains([]string{OwnerRole, "edit", "view"}, b.RoleRef.Name) || slices.Contains(n.Named, b.RoleRef.Name) {
			continue
		}
		rules, found, err := n.Live.ClusterRole(ctx, b.RoleRef.Name)
		if err != nil {
			return nil, fmt.Errorf("reading ClusterRole %s: %w", b.RoleRef.Name, err)
		}
		if !found {
			refuse("RoleBinding", b.Namespace, b.Name, name+", "+unknown)
			continue
		}
		judge("RoleBinding", b.Namespace, b.Name, name, rules)
	}
	return out, nil
}

// DescribeRules is a short text of rules, verbs merged by what they
// apply to: "get,list secrets, get storage.k8s.io/storageclasses".
func DescribeRules(rules []rbacv1.PolicyRule) string {
	verbs := map[string][]string{}
	for _, r := range rules {
		var what []string
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				if g == "" {
					what = append(what, res)
				} else {
					what = append(what, g+"/"+res)
				}
			}
		}
		what = append(what, r.NonResourceURLs...)
		key := strings.Join(what, ",")
		if len(r.ResourceNames) > 0 {
			key += " (" + strings.Join(r.ResourceNames, ",") + ")"
		}
		verbs[key] = append(verbs[key], r.Verbs...)
	}
	var parts []string
	for key, v := range verbs {
		slices.Sort(v)
		parts = append(parts, strings.Join(slices.Compact(v), ",")+" "+key)
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// Qualified is namespace/name, or name for a cluster-scoped object.
func Qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
