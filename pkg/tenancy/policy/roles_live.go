package policy

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClusterRoles reads roles from a cluster: the RoleSource of the
// controller, and of opctl tenancy check with a kubeconfig.
type ClusterRoles struct{ Reader client.Reader }

// ClusterRole returns the rules of the ClusterRole name as the cluster
// serves it.
func (c ClusterRoles) ClusterRole(ctx context.Context, name string) ([]rbacv1.PolicyRule, bool, error) {
	role := &rbacv1.ClusterRole{}
	if err := c.Reader.Get(ctx, client.ObjectKey{Name: name}, role); apierrors.IsNotFound(err) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	return role.Rules, true, nil
}

// Role returns the rules of the Role namespace/name as the cluster
// serves it.
func (c ClusterRoles) Role(ctx context.Context, namespace, name string) ([]rbacv1.PolicyRule, bool, error) {
	role := &rbacv1.Role{}
	if err := c.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, role); apierrors.IsNotFound(err) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	return role.Rules, true, nil
}

// Owner reads OwnerRole's rules as the cluster serves them; none when the
// cluster has no such role.
func (c ClusterRoles) Owner(ctx context.Context) ([]rbacv1.PolicyRule, error) {
	rules, _, err := c.ClusterRole(ctx, OwnerRole)
	if err != nil {
		return nil, fmt.Errorf("reading ClusterRole %s: %w", OwnerRole, err)
	}
	return rules, nil
}
