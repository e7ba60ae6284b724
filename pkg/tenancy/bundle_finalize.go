package tenancy

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// remove uninstalls each bundle's release, then deletes its webhook
// certificates.
func (b *bundleBackend) remove(ctx context.Context, t *tenancyv1.Tenant, names []string) error {
	if err := b.releases.uninstallAll(ctx, t, names); err != nil {
		return err
	}
	for _, name := range names {
		if err := b.deleteWebhookCerts(ctx, t, name); err != nil {
			return err
		}
	}
	return nil
}

// disconnect hands each release's records back to its namespace.
func (b *bundleBackend) disconnect(ctx context.Context, t *tenancyv1.Tenant, names []string) ([]client.Object, error) {
	return nil, b.releases.handBackAll(ctx, t, names)
}
