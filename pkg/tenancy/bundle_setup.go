package tenancy

import (
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/registryv1"
)

func init() {
	registerBackend(backendType{name: "bundle", new: func(c *Controller) (backend, error) {
		return &bundleBackend{Controller: c, fbc: registryv1.NewFBCCatalogs(c.reader, c.catalogs, c.opts.PlainHTTPRegistries, c.opts.CatalogPollInterval)}, nil
	}})
}

// objects: a bundle's objects are its release's, not the Tenant's.
func (*bundleBackend) objects(*tenancyv1.Tenant, settings) []client.Object { return nil }

// watch: the release path's watches serve the bundle backend too.
func (*bundleBackend) watch(b *builder.Builder) *builder.Builder { return b }
