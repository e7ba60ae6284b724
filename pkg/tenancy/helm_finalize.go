package tenancy

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// remove uninstalls each release.
func (h helmBackend) remove(ctx context.Context, t *tenancyv1.Tenant, names []string) error {
	return h.uninstallAll(ctx, t, names)
}

// disconnect hands each release's records back to its namespace, where
// the owners' helm CLI finds them.
func (h helmBackend) disconnect(_ context.Context, t *tenancyv1.Tenant, names []string) ([]client.Object, error) {
	return nil, h.releases.HandBack(t, names)
}
