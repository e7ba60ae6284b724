package tenancy

import (
	"context"
	"fmt"
	"sync"

	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/auth/rbac/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/policy"
)

// heldRoles memoizes, by ClusterRole name and resourceVersion, the roles
// the controller holds all of.
type heldRoles struct{ m sync.Map }

// checkHeld refuses, naming the rules, a named ClusterRole whose rules
// the controller does not hold (a SelfSubjectRulesReview in its own
// namespace, which lists its cluster-wide rules too). A role that does
// not exist grants nothing and is not refused.
func (c *Controller) checkHeld(ctx context.Context, roles []string) error {
	for _, name := range roles {
		role := &rbacv1.ClusterRole{}
		if err := c.reader.Get(ctx, client.ObjectKey{Name: name}, role); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return fmt.Errorf("reading the named ClusterRole %s: %w", name, err)
		}
		key := name + "@" + role.ResourceVersion
		missing, ok := c.held.m.Load(key)
		if !ok {
			have, err := c.ownRules(ctx)
			if err != nil {
				return err
			}
			m := ""
			if covered, lacking := validation.Covers(have, role.Rules); !covered {
				m = policy.DescribeRules(lacking)
			}
			if m == "" {
				c.held.m.Store(key, m) // once held, held; a missing binding is looked for again
			}
			missing = m
		}
		if missing != "" {
			// Retried, not terminal: the platform's fix is a binding,
			// which changes nothing the controller watches.
			return operatorkit.WithReason(tenancyv1.ReasonClusterRoleNotHeld, fmt.Errorf(
				"ClusterRole %s, which the platform names for this Tenant's operators, grants %s, which the tenancy controller does not hold, so it cannot pass it on: "+
					"bind the ClusterRole to the controller's ServiceAccount too (charts/opctl), or stop naming it", name, missing))
		}
	}
	return nil
}

// ownRules are the controller's rules as the API server evaluates them.
func (c *Controller) ownRules(ctx context.Context) ([]rbacv1.PolicyRule, error) {
	cs, err := kubernetes.NewForConfig(c.config)
	if err != nil {
		return nil, err
	}
	r, err := cs.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx,
		&authzv1.SelfSubjectRulesReview{Spec: authzv1.SelfSubjectRulesReviewSpec{Namespace: c.opts.StorageNamespace}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the controller's own rules: %w", err)
	}
	var out []rbacv1.PolicyRule
	for _, rr := range r.Status.ResourceRules {
		out = append(out, rbacv1.PolicyRule{Verbs: rr.Verbs, APIGroups: rr.APIGroups, Resources: rr.Resources, ResourceNames: rr.ResourceNames})
	}
	for _, nr := range r.Status.NonResourceRules {
		out = append(out, rbacv1.PolicyRule{Verbs: nr.Verbs, NonResourceURLs: nr.NonResourceURLs})
	}
	return out, nil
}
