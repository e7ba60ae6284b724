package tenancy

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// remove uninstalls each release.
func (h *chartBackend) remove(ctx context.Context, t *tenancyv1.Tenant, names []string) error {
	return h.releases.uninstallAll(ctx, t, names)
}

// disconnect hands each release's records back to its namespace, where
// the owners' helm CLI finds them.
func (h *chartBackend) disconnect(ctx context.Context, t *tenancyv1.Tenant, names []string) ([]client.Object, error) {
	return nil, h.releases.handBackAll(ctx, t, names)
}
