package tenancy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClusterRolesKey is the data key of Options.ClusterRolesConfigMap.
const ClusterRolesKey = "clusterRoles"

// platformRoles are the ClusterRoles the platform names for every Tenant:
// --tenant-cluster-roles and those of the ClusterRolesConfigMap, sorted
// and without repeats. A ConfigMap that does not exist names none.
func (c *Controller) platformRoles(ctx context.Context) ([]string, error) {
	roles := slices.Clone(c.opts.ClusterRoles)
	if name := c.opts.ClusterRolesConfigMap; name != "" {
		cm := &corev1.ConfigMap{}
		err := c.reader.Get(ctx, client.ObjectKey{Namespace: c.opts.StorageNamespace, Name: name}, cm)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("reading the platform's tenant ClusterRoles from ConfigMap %s/%s: %w", c.opts.StorageNamespace, name, err)
		default:
			roles = append(roles, SplitClusterRoles(cm.Data[ClusterRolesKey])...)
		}
	}
	roles = sortedUnique(roles)
	c.namedRoles.Store(&roles)
	return slices.Clone(roles), nil
}

// SplitClusterRoles splits the ConfigMap's list of names, separated by
// commas, spaces or lines.
func SplitClusterRoles(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == ' ' || r == '\t' || r == '\r' })
}
