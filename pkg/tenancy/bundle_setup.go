package tenancy

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/registryv1"
)

func init() {
	registerBackend(backendType{name: "bundle", new: func(c *Controller) (backend, error) {
		fbc := registryv1.NewFBCCatalogs(c.reader, c.catalogs, c.opts.PlainHTTPRegistries, c.opts.CatalogPollInterval)
		return newBundleBackend(tenantEvents{c.recorder}, c.releases, c.client, c.reader, c.helm.Mapper, fbc, c.opts.StorageNamespace, c.opts.CatalogPollInterval), nil
	}})
}

// objects: a bundle's objects are its release's, not the Tenant's.
func (*bundleBackend) objects(*tenancyv1.Tenant, settings) []client.Object { return nil }

// watch: the release path's watches serve the bundle backend too.
func (*bundleBackend) watch(b *builder.Builder) *builder.Builder { return b }

// newBundleBackend is the bundle backend: it reads bundles from fbc,
// renders them for the mapper's API server and installs them through
// releases; client and reader keep each release's webhook certificates in
// storageNamespace, and catalogs are read again every catalogPoll.
func newBundleBackend(events tenantEvents, releases releaser, cl client.Client, reader client.Reader, mapper meta.RESTMapper, fbc *registryv1.FBCCatalogs, storageNamespace string, catalogPoll time.Duration) *bundleBackend {
	return &bundleBackend{tenantEvents: events, releases: releases, client: cl, reader: reader, mapper: mapper, fbc: fbc, storageNamespace: storageNamespace, catalogPoll: catalogPoll}
}
